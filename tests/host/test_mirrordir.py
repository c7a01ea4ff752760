"""A dashboard killed outright leaves its log mirrors behind; the next one removes them, and only them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gdnconsole.host import mirrordir


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_consoles_mirrors_are_removed_by_the_next_and_nothing_else(tmp_path: Path) -> None:
    stale = tmp_path / f"gdnconsole-{dead_pid()}-abcd1234"
    (stale / "ct129").mkdir(parents=True)
    (stale / "ct129" / "mirror.log").write_text("--api-key sk-secret\n")
    running = tmp_path / f"gdnconsole-{os.getpid()}-efgh5678"  # a console that still runs
    running.mkdir()
    other = tmp_path / "gdnconsole-notes"  # not a mirror folder
    other.mkdir()

    with mirrordir.temporary(tmp_path) as mine:
        assert mine.name.startswith(f"gdnconsole-{os.getpid()}-") and (mine.stat().st_mode & 0o777) == 0o700
        assert not stale.exists() and running.exists() and other.exists()
    assert not mine.exists()
