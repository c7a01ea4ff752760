"""A real terminal for the benches: a tmux server of the bench's own (no user config, its own socket) and
the control-mode stream of what programs write to it.

Control mode hands each write of a pane to us as a ``%output`` line as it happens, so a bench wakes on the
bytes themselves instead of polling the screen with capture-pane (which takes CPU from the program being
timed on a small machine).
"""

from __future__ import annotations

import os
import re
import select
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping


def available() -> bool:
    return shutil.which("tmux") is not None


def unescaped(data: bytes) -> bytes:
    """A control-mode %output payload as the bytes the program wrote (tmux escapes < 32 and \\ as \\ooo)."""
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == 0x5C and data[i + 1 : i + 4].isdigit() and i + 4 <= len(data):
            out.append(int(data[i + 1 : i + 4], 8))
            i += 4
        else:
            out.append(data[i])
            i += 1
    return bytes(out)


class Tmux:
    """A tmux server on its own socket, started with no configuration file; ``close`` kills it."""

    def __init__(self, name: str) -> None:
        self.socket = f"{name}-{os.getpid()}"
        self.run("new-session", "-d", "-s", "keeper", "sleep 3600")  # keeps the server up between windows

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        argv = ["tmux", "-L", self.socket, "-f", "/dev/null", *args]
        return subprocess.run(argv, capture_output=True, text=True, check=check)

    def command_line(self, argv: list[str], env: Mapping[str, str]) -> str:
        """A shell command that runs ``argv`` with ``env`` added (tmux starts windows through a shell)."""
        assigned = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        return f"exec env -u PYTHONDONTWRITEBYTECODE {assigned} {shlex.join(argv)}"

    def detached(self, session: str, size: tuple[int, int], command: str) -> int:
        """Start ``command`` in a new detached session; its process id."""
        self.run("new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]), command)
        return int(self.run("display-message", "-p", "-t", session, "#{pane_pid}").stdout.strip())

    def control(self, session: str, size: tuple[int, int], command: str) -> Watcher:
        """Start ``command`` in a new session seen through a control-mode client."""
        argv = ["tmux", "-L", self.socket, "-f", "/dev/null", "-C", "new-session", "-s", session]
        client = subprocess.Popen(
            [*argv, "-x", str(size[0]), "-y", str(size[1]), command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        return Watcher(client)

    def close(self) -> None:
        self.run("kill-server", check=False)


class Watcher:
    """Reads a control-mode client's stream in a thread; records when each tag was first written.

    ``seen`` maps each tag (a match of the pattern given to ``watch``) to the monotonic time at which the
    bytes that completed it arrived here."""

    def __init__(self, client: subprocess.Popen[bytes]) -> None:
        self.client = client
        self.pattern: re.Pattern[bytes] | None = None
        self.seen: dict[bytes, float] = {}
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        self.ended = False
        self.thread = threading.Thread(target=self._read, daemon=True)

    def watch(self, pattern: bytes) -> None:
        self.pattern = re.compile(pattern)
        self.thread.start()

    def wait_for(self, tag: bytes, timeout: float) -> float | None:
        """When ``tag`` was first seen (waiting up to ``timeout`` seconds for it); None if it never was."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while tag not in self.seen:
                left = deadline - time.monotonic()
                if left <= 0 or self.ended:
                    return None
                self.arrived.wait(left)
            return self.seen[tag]

    def _read(self) -> None:
        assert self.client.stdout is not None and self.pattern is not None
        fd = self.client.stdout.fileno()
        pending = b""
        recent = b""  # the end of the last payload: a tag may straddle two writes
        while True:
            select.select([fd], [], [])
            chunk = os.read(fd, 65536)
            now = time.monotonic()
            if not chunk:
                break
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                if not line.startswith(b"%output "):
                    continue
                text = recent + unescaped(line.split(b" ", 2)[2])
                found = set(self.pattern.findall(text))
                recent = text[-64:]
                if found:
                    with self.arrived:
                        for tag in found:
                            self.seen.setdefault(tag, now)
                        self.arrived.notify_all()
        with self.arrived:
            self.ended = True
            self.arrived.notify_all()

    def close(self) -> None:
        self.client.kill()
        self.client.wait()
