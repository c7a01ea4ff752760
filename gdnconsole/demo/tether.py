"""The demo's server dies with the demo's console, however the console ends.

A real host's server outlives the console by design (the next console adopts it). The demo's is the
console's alone: `q` stops it, and so must a console that is killed (SIGKILL, a crash, the OOM killer)
or whose terminal closes (SIGHUP), which can run no code of its own. So the demo starts a small watcher
in a session of its own, holding the read end of a pipe whose write end only the console holds: when
the console ends, the pipe closes. A console that ends well says "released" first (and stops the server
itself, to tell the user how it ended); otherwise the watcher runs `gdnconsole stop demo`.

    python -m gdnconsole.demo.tether        (started by `gdnconsole demo`, never by hand)
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from typing import IO

RELEASED = b"released\n"


class Tether:
    """The console's end of the pipe to its watcher."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc

    def release(self) -> None:
        """The console stops the server itself: the watcher has nothing to do."""
        stdin: IO[bytes] | None = self._proc.stdin
        if stdin is None:
            return
        with contextlib.suppress(OSError):
            stdin.write(RELEASED)
            stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(5)


def tie() -> Tether | None:
    """Start the watcher (None if it cannot start: the demo goes on, `q` still stops its server)."""
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gdnconsole.demo.tether"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not in the terminal's process group: a closed terminal spares it
        )
    except OSError:
        return None
    return Tether(proc)


def main() -> None:
    said = sys.stdin.buffer.read()  # until the console's end of the pipe closes, however it closed
    if said == RELEASED:
        return
    subprocess.run(
        [sys.executable, "-m", "gdnconsole", "stop", "demo"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


if __name__ == "__main__":
    main()
