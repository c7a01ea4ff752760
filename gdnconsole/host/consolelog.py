"""The console's own log file: the bugs it met, with their tracebacks, for a bug report.

A task of the console that fails with something other than a ConsoleError (a bug: the console's own
failures are explained where they happen) is written here and named in one line on screen, instead of
vanishing in a worker or turning into a message that looks like the host's fault. The file is
``$GDNCONSOLE_LOG`` when set, else ``console.log`` in the user log dir; only ever appended to.
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

import platformdirs

from gdnconsole import safefile
from gdnconsole.config.hosts import APP_NAME

LOG_ENV = "GDNCONSOLE_LOG"


def log_path() -> Path:
    override = os.environ.get(LOG_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_log_dir(APP_NAME)) / "console.log"


def record_bug(where: str, exc: BaseException) -> str:
    """Append ``exc``'s traceback, saying ``where`` it happened; the one line to show for it."""
    path = log_path()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    line = f"{where} failed unexpectedly: {type(exc).__name__}: {exc}"
    try:
        with safefile.open_append(path) as fh:  # tracebacks may quote secrets: 0600, no planted link
            fh.write(f"{stamp} pid {os.getpid()} {line}\n{trace}\n".encode("utf-8", "replace"))
    except OSError as error:  # the report must not fail too: say where it could not go
        return f"{line} (not logged: {error})"
    return f"{line} (traceback in {path})"
