"""gdnconsole: a terminal console for SGLang on your own GPU boxes."""

__version__ = "0.1.0"
