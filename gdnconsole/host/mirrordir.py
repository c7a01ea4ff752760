"""The temporary folder that holds a dashboard's mirrors of its hosts' logs.

A mirror is a copy of a server's log, secrets and all, so it must not outlive its console. The folder
goes on every way out the console has code for (quit, SIGTERM, SIGHUP); a console killed outright
(SIGKILL, the OOM killer, a crash of the interpreter) runs none, so each dashboard also removes, as it
starts, the folders of consoles of this user that are no longer running. The console's pid is in the
folder's name for that.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

PREFIX = "gdnconsole-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)-")


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: not ours to judge
    return True


def sweep(parent: Path | None = None) -> list[Path]:
    """Remove this user's mirror folders whose console no longer runs; the folders removed."""
    parent = Path(parent or tempfile.gettempdir())
    removed: list[Path] = []
    uid = os.getuid()
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            match = _NAME.match(entry.name)
            if match is None or _running(int(match.group(1))):
                continue
            with contextlib.suppress(OSError):
                st = entry.lstat()
                if st.st_uid == uid and entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                    removed.append(entry)
    return removed


@contextlib.contextmanager
def temporary(parent: Path | None = None) -> Iterator[Path]:
    """A new folder (0700) for this console's mirrors, removed when the block ends; stale ones first."""
    sweep(parent)
    with tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-", dir=parent) as tmp:
        yield Path(tmp)
