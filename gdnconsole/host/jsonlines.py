"""Append-only JSON-lines files (the launch journal, the prompt history): one object per line, and a
console that dies mid-write loses at most that line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import platformdirs

from gdnconsole import safefile
from gdnconsole.config.hosts import APP_NAME


def data_dir(override_env: str, folder: str) -> Path:
    """``$override_env`` when set (tests, several consoles), else ``folder`` in the user data dir."""
    override = os.environ.get(override_env)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME)) / folder


def append_json_line(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line; a line torn by an earlier crash stays alone, unreadable, not glued to ours."""
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    with safefile.open_append(path, readable=True) as fh:  # 0600, never through a planted link
        fh.seek(0, os.SEEK_END)
        if fh.tell() > 0:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                line = b"\n" + line
        fh.write(line)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, readable by this user alone from its first byte (it may hold keys), and
    whole: a reader never finds half of it."""
    safefile.write_text(path, text)  # a random name at 0600, then renamed: nothing planted is used
