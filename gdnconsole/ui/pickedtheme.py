"""The theme last picked in the command palette, remembered for the next start.

Kept in the user state dir, with the hosts file's `[console] theme` as it was at the pick: the pick wins
over that setting until the setting is changed (an edit of the file is a newer choice than the pick).
`--theme` wins over both, for one run."""

from __future__ import annotations

import json
from pathlib import Path

import platformdirs

from gdnconsole import readback, safefile
from gdnconsole.readback import BadRecord

APP_NAME = "gdnconsole"
FILE = "theme.json"
FILE_MAX = 64 << 10  # a theme's name and the setting it was picked over


def path() -> Path:
    return Path(platformdirs.user_state_dir(APP_NAME)) / FILE


def remembered(configured: str | None) -> str | None:
    """The picked theme, while the hosts file still says ``configured`` as it did at the pick."""
    try:  # a FIFO is not waited on; damage of any kind (deep nesting included) is no pick
        data = readback.loads_json(readback.read_regular(path(), FILE_MAX))
    except (OSError, BadRecord):
        return None  # none picked yet, or a file that is not ours: the pick is simply not remembered
    if not isinstance(data, dict) or data.get("over") != configured:
        return None
    picked = data.get("theme")
    return picked if isinstance(picked, str) else None


def remember(name: str, *, over: str | None) -> None:
    """Remember ``name`` as picked while the hosts file said ``over``; raises OSError."""
    safefile.write_text(path(), json.dumps({"theme": name, "over": over}))  # random name, 0600, renamed
