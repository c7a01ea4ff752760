"""The `gdnconsole` command line: one module per command group. This package imports nothing on its
own, so that `gdnconsole HOST` (``opener``) opens the dashboard without loading click (see entry.py)."""
