"""The demo's server dies with the demo's console, however the console ends.

A real host's server outlives the console by design (the next console adopts it). The demo's is the
console's alone: `q` stops it, and so must a console that is killed (SIGKILL, a crash, the OOM killer)
or whose terminal closes (SIGHUP), which can run no code of its own. So the demo starts a small watcher
in a session of its own, holding the read end of a pipe whose write end only the console holds: when
the console ends, the pipe closes.

The watcher holds what it needs to stop the server itself: the console tells it, line by line, each
server the demo launched (pid, process group, start time), as soon as the agent's pid file names it.
When the pipe closes, however it closed, the watcher stops each of those that still runs (SIGTERM to
the leader, a grace, SIGKILL to the group), after checking that the pid is still the process that
started then (never a reuse of its number). It reads nothing it would need then from files, which may
be gone (a state folder removed with the terminal), except one last look at the pid file for a launch
the console had no time to tell. A console that ends well stops the server itself first, so the
watcher finds nothing left to do. The console also watches its watcher: one that dies is replaced, and
the new one is told every server the console knows.

The watcher is this file run by path with `python -I` (standard library only): the working directory,
PYTHONPATH and the user's site-packages never reach its import path.

    python -I .../gdnconsole/demo/tether.py PIDFILE        (started by `gdnconsole demo`, never by hand)
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, NamedTuple

GRACE_S = 10.0  # SIGTERM lets the server drain; then its process group is killed
WATCH_S = 0.2  # how often the console looks at the pid file and at its watcher
RESPAWN_GAP_S = 1.0  # a watcher that cannot stay up is restarted at most this often
POLL_S = 0.05  # how often a stop looks whether the group has ended
SAME_START_S = 0.05  # start times are epoch seconds rounded to clock ticks (10 ms), as the agent's
PROCESS_NAME = "gdntether"  # then the number of servers held, in /proc/PID/comm (`ps -o comm`)
PR_SET_NAME = 15  # prctl(2)
PIDFILE_MAX = 1024 * 1024  # a pid file is a few hundred bytes; a bigger one is not the agent's


class Server(NamedTuple):
    """What identifies a server: its pid, its process group (None: the pid alone), its start (epoch s)."""

    pid: int
    pgid: int | None
    start_time: float

    def line(self) -> bytes:
        pgid = "-" if self.pgid is None else str(self.pgid)
        return f"server {self.pid} {pgid} {self.start_time!r}\n".encode("ascii")

    @classmethod
    def parse_line(cls, line: bytes) -> Server | None:
        words = line.split()
        if len(words) != 4 or words[0] != b"server":
            return None
        try:
            pid, start = int(words[1]), float(words[3])
            pgid = None if words[2] == b"-" else int(words[2])
        except ValueError:
            return None
        return cls(pid, pgid, start) if pid > 1 and (pgid is None or pgid > 1) else None


def read_pidfile(path: Path) -> Server | None:
    """The server the agent's pid file names; None when it is missing, damaged or not a record (a FIFO
    or a link planted there is not read: a look must never block)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = json.loads(os.read(fd, PIDFILE_MAX))
    except (OSError, ValueError, RecursionError):  # nesting 100k deep must not end the tether
        return None
    finally:
        os.close(fd)
    if not isinstance(raw, dict):
        return None
    pid, pgid, start = raw.get("pid"), raw.get("pgid"), raw.get("start_time")
    if type(pid) is not int or pid <= 1 or not (pgid is None or (type(pgid) is int and pgid > 1)):
        return None
    if not isinstance(start, int | float) or isinstance(start, bool) or not -1e18 < start < 1e18:
        return None  # (a 400-digit start time would overflow a float)
    return Server(pid, pgid, float(start))


# -- the console's side ------------------------------------------------------------------------------------


class Tether:
    """The console's end: tells its watcher of each server, and replaces a watcher that died."""

    def __init__(self, pidfile: Path) -> None:
        self._pidfile = pidfile
        self._servers: list[Server] = []
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._proc: subprocess.Popen[bytes] | None = None
        self._started_at = 0.0
        self.spawned = 0  # watchers started (a replacement counts)
        self._respawn()
        self._thread = threading.Thread(target=self._watch, name="demo-tether", daemon=True)
        self._thread.start()

    @property
    def pid(self) -> int | None:
        """The current watcher's pid (None while none runs)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def _respawn(self) -> None:
        """Start a watcher and tell it every server known (the old one, if any, has ended)."""
        self._started_at = time.monotonic()
        self._proc = _start_watcher(self._pidfile)
        if self._proc is not None:
            self.spawned += 1
            for server in self._servers:
                self._tell(server)

    def _tell(self, server: Server) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return
        with contextlib.suppress(OSError, ValueError):  # it died meanwhile: the next look replaces it
            proc.stdin.write(server.line())
            proc.stdin.flush()

    def _watch(self) -> None:
        while not self._done.wait(WATCH_S):
            with self._lock:
                if self._done.is_set():
                    return
                self.look()

    def look(self) -> None:
        """One look: a server the pid file names that the watcher was not told of; a watcher that died."""
        server = read_pidfile(self._pidfile)
        if server is not None and server not in self._servers:
            self._servers.append(server)
            self._tell(server)
        proc = self._proc
        if (proc is None or proc.poll() is not None) and time.monotonic() - self._started_at >= RESPAWN_GAP_S:
            if proc is not None and proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            self._respawn()

    def release(self) -> None:
        """The console has stopped the server itself: close the pipe and let the watcher check that."""
        self._done.set()
        with self._lock:  # a look in progress finishes first
            proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(GRACE_S + 5)


def _start_watcher(pidfile: Path) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(
            [sys.executable, "-I", str(Path(__file__).resolve()), str(pidfile)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",  # holds no folder of the demo's, which may be removed
            start_new_session=True,  # not in the terminal's process group: a closed terminal spares it
        )
    except OSError:
        return None


def tie(log: Path) -> Tether:
    """Tie the demo's servers (those the agent records beside ``log``) to this console. A watcher that
    cannot start is retried; meanwhile the demo goes on, and `q` still stops its server."""
    from gdnconsole.host.agent import PIDFILE_NAME  # the console's side only: the watcher imports nothing

    return Tether(log.parent / PIDFILE_NAME)


# -- the watcher's side (standard library only) ------------------------------------------------------------


def _boot_time() -> float:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    return 0.0


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command's closing parenthesis (state first)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def same_process(server: Server, boot: float, ticks: int) -> bool:
    """``server.pid`` runs (not a zombie) and is the process that started at ``server.start_time``."""
    fields = _stat(server.pid)
    if fields is None or len(fields) < 20 or fields[0] in ("Z", "X"):
        return False
    started = round(boot + int(fields[19]) / float(ticks), 2)  # field 22: start time in clock ticks
    return abs(started - server.start_time) < SAME_START_S


def group_alive(pgid: int) -> bool:
    """Whether a live process (not a zombie) belongs to process group ``pgid``."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in "ZX":
                return True
    return False


def stop(server: Server, grace: float = GRACE_S) -> bool:
    """Stop ``server`` if it still runs as itself; whether it was ours to stop."""
    boot, ticks = _boot_time(), os.sysconf("SC_CLK_TCK")
    if not same_process(server, boot, ticks):
        return False  # ended (the console stopped it), or its number now belongs to another process
    with contextlib.suppress(ProcessLookupError):
        os.kill(server.pid, signal.SIGTERM)  # the leader drains and ends its own children
    group = server.pgid

    def running() -> bool:
        return group_alive(group) if group is not None else same_process(server, boot, ticks)

    # While the group has a live member, no other process can take its number: it is still ours.
    deadline = time.monotonic() + grace
    while running() and time.monotonic() < deadline:
        time.sleep(POLL_S)
    if running():
        with contextlib.suppress(ProcessLookupError):
            if group is not None:
                os.killpg(group, signal.SIGKILL)
            else:
                os.kill(server.pid, signal.SIGKILL)
    return True


def _name_self(held: int) -> None:
    """Say in `ps` (the process name) how many servers this watcher holds: an operator sees why it is
    there, and a test knows when the console's word has arrived."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes  # the watcher's alone: the console never loads it

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_NAME, ctypes.c_char_p(f"{PROCESS_NAME} {held}".encode("ascii")), 0, 0, 0)


def watch(stdin: IO[bytes], pidfile: Path | None, grace: float = GRACE_S) -> list[Server]:
    """Hold the servers the console names until its pipe closes, then stop each that still runs;
    the servers stopped."""
    held: list[Server] = []
    _name_self(0)
    for line in stdin:  # until the console's end of the pipe closes, however it closed
        server = Server.parse_line(line)
        if server is not None and server not in held:
            held.append(server)
            _name_self(len(held))
    last = read_pidfile(pidfile) if pidfile is not None else None
    if last is not None and last not in held:
        held.append(last)  # launched in the console's last moments, before it could say so
    return [server for server in held if stop(server, grace)]


def main() -> None:
    for sig in (signal.SIGHUP, signal.SIGINT):  # the terminal's signals are not the console's end
        signal.signal(sig, signal.SIG_IGN)
    pidfile = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    watch(sys.stdin.buffer, pidfile)


if __name__ == "__main__":
    main()
