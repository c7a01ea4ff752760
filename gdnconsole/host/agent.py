"""gdnconsole's agent: the one file the console runs on a GPU host, talking JSON lines over stdin/stdout.

Self-contained on purpose: standard library only, Python 3.8+, nothing imported from gdnconsole. It travels
over SSH as its own source and is started with ``BOOTSTRAP_ARGS`` (see ``bootstrap_payload``)::

    PYTHON -u -c 'import sys;n=int(sys.stdin.buffer.readline());exec(compile(sys.stdin.buffer.read(n),...))'

and the console writes ``<byte length>\\n<agent source>`` to its stdin, then JSON lines. (``PYTHON -`` would
read the program until EOF and leave no stdin for the protocol.) ``python3 agent.py`` runs it by hand.

Protocol: one JSON object per line, UTF-8, in both directions.

Console -> agent:

- ``{"op": "hello"}`` -> a ``hello`` message.
- ``{"op": "sample", "interval": 1.0}`` starts (or re-times) periodic sampling: a ``gpus`` and a
  ``processes`` message at once and then every ``interval`` seconds (default 1.0); ``0`` stops.
- ``{"op": "follow", "path": "/root/sglang_serve.log", "offset": 12345, "inode": 67 | null}`` follows a
  file from a byte offset (which must be a line start). With the inode of the file the offset belongs to,
  resuming is exact; another inode, or a size below the offset, means the file was replaced or truncated:
  a ``log_reset`` is sent and the new file is followed from 0. One file at a time: another ``follow``
  replaces it. With ``"raw": true`` each ``log`` message carries ``"bytes": N`` instead of ``data``, and
  the N bytes of the file follow its newline as they are (no decoding, no JSON escaping: a busy log then
  costs both ends far less). On Linux a write to the file wakes the agent at once (inotify); the file is
  also looked at every 80 ms, which is all there is elsewhere (and for writes inotify does not see).
- ``{"op": "unfollow"}`` stops following.
- ``{"op": "ping", "id": 7}`` -> ``{"type": "pong", "id": 7, "t": EPOCH}``.
- ``{"op": "processes"}`` -> one ``processes`` message now.
- ``{"op": "launch", "id": 3, "argv": [str], "env": {NAME: VALUE}, "cwd": str | null, "log": PATH,
  "rotate": true, "owner": "user@console-host pid 123"}`` starts a server detached: in its own session and
  process group, stdin from /dev/null, stdout and stderr to the log, no shell (each argv element is one
  argument; env is added to the agent's own environment). First it takes ``.gdnconsole-launch.lock``
  beside the log (owner, pid, time), so that two consoles cannot launch at once; a lock whose pid is gone
  or that is older than LOCK_STALE_S is stale and taken over (the reply's ``stale_lock`` says so). It
  refuses while the server of the pid file still runs. The old log is kept as ``LOG.1`` (``rotate``;
  false truncates it); a log that is a link, a FIFO or another user's file is refused, a new one is
  created 0600 (``open_log``). The pid file ``.gdnconsole-server.json`` beside the log records the server, and
  the lock is released. Reply: ``{"type": "launched", "id", "server": RECORD, "stale_lock": null | {"owner",
  "pid", "time", "reason"}}`` where RECORD is ``{"pid", "pgid", "start_time": EPOCH, "argv", "env", "cwd",
  "log", "owner", "time", "adopted": false}``; a refusal is an ``error`` (with ``"lock"`` when the lock is
  held). A log the agent follows is reset (``log_reset``) before the reply.
- ``{"op": "stop", "id", "pid", "pgid": int | null, "start_time": EPOCH, "grace": 30.0}`` stops the server
  the console launched or adopted, and only it: the pid must still have that start time and that process
  group (else an ``error``, nothing signalled). SIGTERM to the pid (SGLang drains); ``{"type": "stopping",
  "id", "pid", "signal": "SIGTERM" | "SIGKILL" | null, "elapsed", "alive": N}`` at once and about every
  second; after ``grace`` seconds SIGKILL to the process group (``pgid`` null: to the pid and its
  descendants). Group members left behind by a main process that exited are killed at once. Reply:
  ``{"type": "stopped", "id", "pid", "pgid", "how": "sigterm" | "sigkill" | "gone", "elapsed", "strays"}``.
  Nothing is ever found or signalled by its name.
- ``{"op": "pidfile", "id", "log": PATH}`` -> ``{"type": "pidfile", "id", "log", "server": RECORD | null,
  "alive": bool}``: the server recorded beside that log (after a reconnect); a live one is watched.
- ``{"op": "adopt", "id", "pid", "log", "owner"}``: the user takes over a server started by hand (after
  seeing its pids): it must be an SGLang server; it is written to the pid file (``adopted``: true; its
  ``pgid`` is null unless it leads its own process group, so that stop never signals a shell's group) and
  watched. Reply ``{"type": "adopted", "id", "server": RECORD}``.
- ``{"op": "port", "id", "host": "127.0.0.1", "port": 30000}``: whether a server could listen there
  now (a bind with SO_REUSEADDR, as uvicorn's, closed at once). Reply ``{"type": "port", "id", "host",
  "port", "free": bool, "reason": str | null, "holders": [{"pid", "name": str | null}]}``: ``reason``
  the bind's error, ``holders`` the processes listening on that port that /proc lets the agent see.

- ``{"op": "serving", "host": "127.0.0.1", "port": 30000, "interval": 1.0, "timeout": 2.0,
  "api_key": str | null, "paths": ["/metrics", "/v1/loads", "/server_info"]}`` polls the server's own
  endpoints on the host (no port of the server is exposed for it), from a thread of its own so that a
  hung server never holds the log or the GPU samples: one GET of each path in turn on one keep-alive
  connection, every ``interval`` seconds (SERVING_MIN_INTERVAL_S at least), each bounded by ``timeout``
  and SERVING_BODY_MAX bytes. Another ``serving`` request replaces the poll; ``interval`` 0 stops it.
  Each round sends ``{"type": "serving", "t": EPOCH, "host", "port", "replies": [{"path", "status": int |
  null, "error": str | null, "ms": float, "body": str | null, "truncated": bool}]}`` (``status`` null: no
  HTTP answer, ``error`` says why; ``body`` decoded as UTF-8 with replacement).

  Anything else (a line that is not a JSON object, an unknown op, a bad argument) gets
  ``{"type": "error", "op": OP | null, "message": "..."}``; the agent carries on.

Agent -> console:

- ``{"type": "hello", "agent": VERSION, "hostname": str, "python": "3.11.7", "pid": int,
  "sglang": "0.5.11" | null, "nvml": {"source": "pynvml" | "nvidia-smi" | "none", "reason": null | str},
  "gpus": [{"index", "uuid", "name", "compute_capability": "8.6", "total_mib"}], "boot_time": EPOCH,
  "clock_ticks": int}``. ``sglang`` comes from package metadata (sglang is never imported); ``reason``
  says why pynvml is not the source.
- ``{"type": "gpus", "t": EPOCH, "nvml": {"source", "reason"}, "gpus": [{"index", "uuid", "name",
  "compute_capability", "total_mib", "used_mib", "free_mib", "util_pct": int | null,
  "processes": [{"pid", "used_mib": int | null, "name": str | null, "pgid": int | null}],
  "errors": {FIELD: MESSAGE}}]}``. A field that fails is null, with its message in ``errors``; ``name``
  and ``pgid`` are null for a process that is gone or a zombie (its memory not released yet). If the
  source stops answering altogether the agent moves on (pynvml -> nvidia-smi -> none) and ``nvml`` says so.
- ``{"type": "processes", "t": EPOCH, "servers": [{"pid", "pgid", "sid", "ppid", "start_time": EPOCH,
  "cmdline": [str], "port": int | null, "host": str, "cwd": str | null, "env": {NAME: VALUE} | null,
  "children": [{"pid", "ppid", "pgid", "title": "sglang::scheduler_TP0", "rank": "TP0" | null,
  "start_time", "cmdline"}]}], "orphans": [child entries whose server is gone]}``.
  A server is a process running ``python -m sglang.launch_server``, ``python .../sglang/launch_server.py``
  or ``sglang serve``; its children have an ``sglang::`` process title (argv[0]). ``port`` and ``host``
  are the ``--port``/``--host`` arguments or SGLang's defaults (30000, 127.0.0.1); a port that is not a
  number is null. ``env`` holds CUDA_VISIBLE_DEVICES and the SGLANG_*/SGL_* variables, less any whose
  name looks like a secret (KEY, TOKEN...); null when /proc/PID/environ is not ours to read. With
  ``GDNCONSOLE_AGENT_SCOPE=NAME`` in the agent's environment only processes whose NAME has the agent's
  value are listed (simulated hosts sharing one machine).
- ``{"type": "log", "path", "inode", "offset": START, "end": END, "data": str, "size": FILE_SIZE}``:
  bytes ``[START, END)`` of the file, complete lines only, decoded as UTF-8 with replacement (offsets
  count bytes). A partial last line is held until its newline arrives, unless it grows past 1 MiB;
  ``held`` counts the bytes read after END that wait for it. At the file's end, when no frame has said
  so yet (an empty file, an unfinished last line), a frame without lines (START = END) says it.
  Each message reads at most 256 KiB more; a backlog is sent as fast as the console reads it.
- ``{"type": "log_reset", "path", "reason": "truncated" | "replaced" | "missing" | "appeared",
  "inode": int | null}``: following goes on from offset 0 of the file with that inode ("missing": no
  file there now; a ``message`` says why it could not be read). Rotations are followed as ``tail -F``
  does (see ``Follower``): "truncated" also when the bytes before the read position changed (a
  copytruncate followed by more than the file held); a file renamed away or deleted is read to its end
  and followed on while the path holds nothing or an empty file, then "replaced" (at once when the
  agent itself rotated the log for a launch). A copytruncate's leading NUL hole is skipped: the next
  ``log`` message's ``offset`` covers it.
- ``{"type": "server_exit", "pid", "pgid", "returncode": int | null, "t"}`` as soon as a launched, adopted
  or pid-file server is gone (checked every WATCH_FAST_S for a minute after a launch, then every
  WATCH_SLOW_S); the log is read to its end and a ``processes`` message follows. ``returncode`` is known
  only for a server this agent started (negative: the signal).
- ``{"type": "pong", "id", "t"}`` and ``{"type": "error", "op", "message"}`` (with the request's ``id`` when
  it had one); periodic work that fails reports with ``"op": "sample"``, ``"follow"``, ``"watch"`` or
  ``"stop"`` and is tried again at its next turn.

The agent exits when its stdin closes (OpenSSH does not forward signals), whatever it is doing.
"""

# 3.8 compatibility: annotations stay strings (the future import), so they may use PEP 585/604 forms; every
# runtime expression uses only what Python 3.8 has.
from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from stat import S_ISLNK, S_ISREG
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import TypeGuard

VERSION = "1"
# `-c` puts the working directory first on sys.path (a `json.py` there would run as ours): the first
# statement drops it, before anything is imported. `-I` would do that too, but it also drops PYTHONPATH
# and the user's site-packages, where a host's pynvml (and a simulated host's stand-ins) may live; `-P`
# needs Python 3.11.
BOOTSTRAP_CODE = (
    'import sys;sys.path[:]=[p for p in sys.path if p not in ("",".")];'
    "n=int(sys.stdin.buffer.readline());"
    'exec(compile(sys.stdin.buffer.read(n),"gdnconsole-agent","exec"))'
)
BOOTSTRAP_ARGS = ("-u", "-c", BOOTSTRAP_CODE)  # after the host's python; stdin then gets bootstrap_payload()
BOOTSTRAP = "python3 -u -c '" + BOOTSTRAP_CODE + "'"  # the same as one shell command, with python3

DEFAULT_INTERVAL_S = 1.0
LOG_POLL_S = 0.05  # how soon a growing file is checked again: a stage change shows within ~50 ms
LOG_POLL_IDLE_S = 0.08  # ... and a quiet one: changes still show in < 100 ms; idle polls cost ~0.3% CPU
LOG_WAKE_GAP_S = 0.01  # a write wakes the follower at once, but a busy log is read at most this often
IN_MODIFY = 0x00000002  # inotify: the file was written (or truncated)
F_SETPIPE_SZ = 1031  # fcntl command (Linux), not exported by Python 3.8's fcntl module
LOG_READ_MAX_RAW = 1024 * 1024  # raw frames cost nothing per byte to escape: bigger ones cost less per byte
LOG_READ_MAX = 256 * 1024  # bytes read for one log message
LOG_LINE_MAX = 1024 * 1024  # a partial line this long is sent without waiting for its newline
SEEN_BYTES = 64  # bytes before the read position compared at each growth, to tell a copytruncate
ROTATE_WAIT_S = 5.0  # how long a renamed log that still grows is read before the new file at its path
SMI_TIMEOUT_S = 10.0  # nvidia-smi can hang on a wedged driver; the agent must not
PROC_YOUNG_S = 30.0  # a process this new may still exec or set its title: re-read its cmdline every scan
PROC_FULL_RESCAN_S = 10.0  # every cmdline is re-read this often (pid reuse, late titles)
# Names a variable of the agent's environment: only processes with the same value of it are this host's
# (several simulated hosts on one machine, each with its own GDNSIM_HOME; unset on a real host).
SCOPE_ENV = "GDNCONSOLE_AGENT_SCOPE"
SGLANG_PORT = 30000  # SGLang's --port and --host defaults
SGLANG_HOST = "127.0.0.1"
TITLE_PREFIX = "sglang::"
ENV_KEYS = ("CUDA_VISIBLE_DEVICES",)
ENV_PREFIXES = ("SGLANG_", "SGL_")
ENV_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.I)  # never sent, even when the prefix matches
MIB = 1024 * 1024
SERVING_MIN_INTERVAL_S = 1.0  # a server's own endpoints are polled at most once a second
SERVING_TIMEOUT_S = 2.0  # per request: a hung /metrics marks the figures stale, nothing else waits for it
SERVING_BODY_MAX = 8 * MIB  # a 0.5.23 exposition with every family and 8 DP ranks is well under 1 MiB
SERVING_PATHS = ("/metrics", "/v1/loads", "/server_info")
PROC_READ = 65536


# --- bootstrap ----------------------------------------------------------------------------------------


def agent_source() -> bytes:
    """This file's bytes. Only where it was imported from a file: the exec'd agent has no ``__file__``."""
    path = globals().get("__file__")
    if not path:
        raise RuntimeError("the agent's source is only available where the module was imported from a file")
    with open(path, "rb") as fh:
        return fh.read()


def bootstrap_payload() -> bytes:
    """What the console writes to the bootstrap command's stdin before any JSON line."""
    source = agent_source()
    return str(len(source)).encode("ascii") + b"\n" + source


# --- output -------------------------------------------------------------------------------------------


def encode(message: dict[str, Any]) -> bytes:
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return (text + "\n").encode("utf-8", "replace")  # "replace": a lone surrogate must not kill the agent


class Writer:
    """Writes whole messages to stdout, one at a time, each flushed.

    Under ``python -u`` stdout's binary layer is unbuffered and may take part of a write, hence the loop.
    A console that reads slowly blocks the write: that is the backpressure the log follower relies on.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any], payload: bytes = b"") -> None:
        """One message, and after its newline ``payload`` raw bytes (the message says how many)."""
        data = memoryview(encode(message) + payload)
        with self._lock:
            while data:
                written = self._stream.write(data)
                data = data[written or 0 :]
            self._stream.flush()


# --- /proc --------------------------------------------------------------------------------------------


def read_bytes(path: str, limit: int = 1 << 20) -> bytes | None:
    """A /proc file's contents (up to ``limit`` bytes), or None when it is gone or unreadable.

    The kernel fills a read of these files as far as the buffer goes, so one 64 KiB read is all of nearly
    every file (a scan reads hundreds); only a full buffer calls for more.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    chunks = []
    size = 0
    try:
        while size < limit:
            chunk = os.read(fd, PROC_READ)
            chunks.append(chunk)
            size += len(chunk)
            if len(chunk) < PROC_READ:
                break
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_argv(pid: int) -> list[str] | None:
    """The command line; empty for a kernel thread, None when the process is gone."""
    raw = read_bytes(f"/proc/{pid}/cmdline")
    if raw is None:
        return None
    return [arg.decode("utf-8", "replace") for arg in raw.rstrip(b"\0").split(b"\0")] if raw else []


def read_comm(pid: int) -> str | None:
    raw = read_bytes(f"/proc/{pid}/comm")
    if not raw:
        return None
    return raw.decode("utf-8", "replace").strip() or None


def process_name(pid: int) -> str | None:
    """What nvidia-smi calls a process: argv[0] (a title, once set), else the kernel's comm."""
    argv = read_argv(pid)
    if argv and argv[0]:
        return argv[0]
    return read_comm(pid)


class Stat:
    """The fields of /proc/PID/stat the console needs."""

    def __init__(self, ppid: int, pgid: int, sid: int, start_ticks: int) -> None:
        self.ppid = ppid
        self.pgid = pgid
        self.sid = sid
        self.start_ticks = start_ticks


def read_stat(pid: int) -> Stat | None:
    """None when the process is gone or a zombie (a zombie holds nothing and runs nothing)."""
    raw = read_bytes(f"/proc/{pid}/stat")
    if raw is None:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()  # comm may hold spaces and parentheses
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    return Stat(int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))


def read_environ(pid: int) -> dict[str, str] | None:
    """CUDA_VISIBLE_DEVICES and SGLang's own variables; None when not ours to read."""
    raw = read_bytes(f"/proc/{pid}/environ", 4 << 20)
    if raw is None:
        return None
    env = {}
    for item in raw.split(b"\0"):
        key, eq, value = item.decode("utf-8", "replace").partition("=")
        if eq and wanted_env(key):
            env[key] = value
    return env


def environ_has(pid: int, item: bytes) -> bool:
    """Whether /proc/PID/environ holds ``NAME=VALUE`` exactly (False when it is not ours to read)."""
    raw = read_bytes(f"/proc/{pid}/environ", 4 << 20)
    return raw is not None and item in raw.split(b"\0")


def process_scope() -> bytes | None:
    """The ``NAME=VALUE`` a process must share with the agent to be seen (SCOPE_ENV), or None."""
    name = os.environ.get(SCOPE_ENV)
    if not name:
        return None
    return (name + "=" + os.environ.get(name, "")).encode("utf-8", "replace")


def wanted_env(key: str) -> bool:
    if key in ENV_KEYS:
        return True
    return key.startswith(ENV_PREFIXES) and not ENV_SECRET.search(key)


def read_cwd(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def boot_time() -> float:
    """Epoch seconds of the boot: process start times in /proc count clock ticks from it."""
    raw = read_bytes("/proc/stat") or b""
    for line in raw.splitlines():
        if line.startswith(b"btime "):
            return float(line.split()[1])
    return 0.0


def clock_ticks() -> int:
    try:
        return int(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):
        return 100


# --- recognising SGLang processes ---------------------------------------------------------------------

PYTHON_OPTS_WITH_ARG = ("-W", "-X", "-Q")  # python options whose value is the next word


def is_python(arg0: str) -> bool:
    return os.path.basename(arg0).startswith("python")


def python_target(argv: list[str]) -> tuple[str, str, int] | None:
    """What a python command line runs: ("module", NAME, i), ("script", PATH, i) or ("code", "", i), with
    ``i`` the index of its first argument; None when argv is not a python command."""
    if not argv or not is_python(argv[0]):
        return None
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "-m" and i + 1 < len(argv):
            return ("module", argv[i + 1], i + 2)
        if arg.startswith("-m") and len(arg) > 2:
            return ("module", arg[2:], i + 1)
        if arg == "-c" or (arg.startswith("-c") and len(arg) > 2):
            return ("code", "", i + 1)
        if arg in PYTHON_OPTS_WITH_ARG:
            i += 2
            continue
        if arg == "-" or not arg.startswith("-"):
            return ("script", arg, i + 1)
        i += 1
    return None


def is_server(argv: list[str]) -> bool:
    """SGLang's main process: ``-m sglang.launch_server``, ``.../sglang/launch_server.py``, ``sglang serve``.

    Only what the interpreter runs counts, not a word anywhere in the command line: ``grep sglang`` or
    ``python -c ... sglang`` is not a server.
    """
    if len(argv) >= 2 and os.path.basename(argv[0]) == "sglang" and argv[1] == "serve":
        return True  # a compiled entry point (or a shell's view of one)
    target = python_target(argv)
    if target is None:
        return False
    kind, name, rest = target
    if kind == "module":
        return name == "sglang.launch_server"
    if kind != "script":
        return False
    if name.replace("\\", "/").endswith("sglang/launch_server.py"):
        return True
    # An entry-point script run through its shebang: "/usr/bin/python3 /usr/local/bin/sglang serve ...".
    return os.path.basename(name) == "sglang" and rest < len(argv) and argv[rest] == "serve"


def title_of(argv: list[str]) -> str | None:
    """An SGLang child's process title (setproctitle puts it in argv[0]), or None for another process."""
    if not argv:
        return None
    first = argv[0].strip()
    if not first.startswith(TITLE_PREFIX):
        return None
    return first.split()[0]  # a title written over the whole argv area may carry padding


def rank_of(title: str) -> str | None:
    """The rank in a scheduler's title ("DP0_TP1" of "sglang::scheduler_DP0_TP1"); None for tp 1 or others."""
    match = re.match(r"sglang::scheduler_(\S+)$", title)
    return match.group(1) if match else None


def option_value(argv: list[str], name: str) -> str | None:
    """The value of ``--name VALUE`` or ``--name=VALUE`` (the last one wins, as with argparse)."""
    value = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(name + "="):
            value = arg[len(name) + 1 :]
    return value


def server_port(argv: list[str]) -> int | None:
    value = option_value(argv, "--port")
    if value is None:
        return SGLANG_PORT
    try:
        return int(value)
    except ValueError:
        return None


# --- finding SGLang processes -------------------------------------------------------------------------


class ProcessTable:
    """The command lines of all processes, re-read only where they may have changed.

    Reading every /proc/PID/cmdline costs a few microseconds per process, which adds up on a busy box at
    one scan per second. A command line changes only on exec or when a process sets its title, which new
    processes do: so a new or young pid is read every scan and everything else every PROC_FULL_RESCAN_S.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._argv: dict[int, tuple[float, list[str]]] = {}  # pid -> (first seen, argv)
        self._last_full = float("-inf")

    def scan(self) -> dict[int, list[str]]:
        now = self._clock()
        full = now - self._last_full >= PROC_FULL_RESCAN_S
        if full:
            self._last_full = now
        current: dict[int, tuple[float, list[str]]] = {}
        for pid in list_pids():
            known = self._argv.get(pid)
            if known is not None and not full and now - known[0] >= PROC_YOUNG_S:
                current[pid] = known
                continue
            argv = read_argv(pid)
            if argv is not None:
                current[pid] = (known[0] if known else now, argv)
        self._argv = current
        return {pid: argv for pid, (_, argv) in current.items()}


def list_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


class Scanner:
    """Turns the process table into the ``processes`` message: servers, their children, orphans."""

    def __init__(self, boot: float, ticks: int, scope: bytes | None = None) -> None:
        self.table = ProcessTable()
        self.boot = boot
        self.ticks = ticks
        self.scope = scope  # NAME=VALUE a process must have to be this host's (None: every process)

    def epoch(self, start_ticks: int) -> float:
        return round(self.boot + start_ticks / float(self.ticks), 2)

    def message(self) -> dict[str, Any]:
        argvs = self.table.scan()
        servers: dict[int, dict[str, Any]] = {}
        stats: dict[int, Stat] = {}
        titled = []
        for pid, argv in argvs.items():
            if is_server(argv) or title_of(argv) is not None:
                if self.scope is not None and not environ_has(pid, self.scope):
                    continue
                stat = read_stat(pid)
                if stat is None:
                    continue
                stats[pid] = stat
                if title_of(argv) is None:
                    servers[pid] = self.server_entry(pid, argv, stat)
                else:
                    titled.append(pid)
        orphans = []
        for pid in sorted(titled):
            entry = self.child_entry(pid, argvs[pid], stats[pid])
            owner = owning_server(pid, stats, servers)
            if owner is None:
                orphans.append(entry)
            else:
                servers[owner]["children"].append(entry)
        listed = [servers[pid] for pid in sorted(servers)]
        return {"type": "processes", "t": time.time(), "servers": listed, "orphans": orphans}

    def server_entry(self, pid: int, argv: list[str], stat: Stat) -> dict[str, Any]:
        return {
            "pid": pid,
            "pgid": stat.pgid,
            "sid": stat.sid,
            "ppid": stat.ppid,
            "start_time": self.epoch(stat.start_ticks),
            "cmdline": argv,
            "port": server_port(argv),
            "host": option_value(argv, "--host") or SGLANG_HOST,
            "cwd": read_cwd(pid),
            "env": read_environ(pid),
            "children": [],
        }

    def child_entry(self, pid: int, argv: list[str], stat: Stat) -> dict[str, Any]:
        title = title_of(argv) or ""
        return {
            "pid": pid,
            "ppid": stat.ppid,
            "pgid": stat.pgid,
            "title": title,
            "rank": rank_of(title),
            "start_time": self.epoch(stat.start_ticks),
            "cmdline": argv,
        }


def owning_server(pid: int, stats: dict[int, Stat], servers: dict[int, Any]) -> int | None:
    """The server among ``pid``'s ancestors (schedulers under a DP controller are grandchildren)."""
    seen = set()
    current = pid
    while current > 1 and current not in seen:
        seen.add(current)
        stat = stats.get(current) or read_stat(current)
        if stat is None:
            return None
        if stat.ppid in servers:
            return stat.ppid
        current = stat.ppid
    return None


# --- GPUs ---------------------------------------------------------------------------------------------


class SourceDown(Exception):
    """A GPU source cannot answer at all; the message says why."""


def attempt(errors: dict[str, str], field: str, read: Callable[[], Any]) -> Any:
    """``read()``, or None with the failure recorded under ``field``: one bad field never ends a sample."""
    try:
        return read()
    except Exception as exc:
        errors[field] = str(exc) or type(exc).__name__
        return None


def text(value: Any) -> str:
    """NVML strings are bytes in older bindings and str in newer ones."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class NvmlSource:
    """GPUs through pynvml (nvidia-ml-py)."""

    name = "pynvml"

    def __init__(self) -> None:
        try:
            import pynvml
        except ImportError as exc:
            raise SourceDown(f"not installed ({exc})") from None
        except Exception as exc:  # a broken install must not stop the agent
            raise SourceDown(f"failed to import: {type(exc).__name__}: {exc}") from None
        try:
            pynvml.nvmlInit()
            count = pynvml.nvmlDeviceGetCount()
            self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        except Exception as exc:  # NVMLError_LibraryNotFound, _DriverNotLoaded, anything else at init
            raise SourceDown("NVML init: " + (str(exc) or type(exc).__name__)) from None
        self._nvml: Any = pynvml
        self._static = [self._read_static(i, h) for i, h in enumerate(self._handles)]

    def _read_static(self, index: int, handle: Any) -> dict[str, Any]:
        nvml = self._nvml
        errors: dict[str, str] = {}
        info = {
            "index": index,
            "uuid": attempt(errors, "uuid", lambda: text(nvml.nvmlDeviceGetUUID(handle))),
            "name": attempt(errors, "name", lambda: text(nvml.nvmlDeviceGetName(handle))),
            "compute_capability": attempt(
                errors,
                "compute_capability",
                lambda: "{}.{}".format(*nvml.nvmlDeviceGetCudaComputeCapability(handle)),
            ),
            "total_mib": attempt(
                errors, "total_mib", lambda: nvml.nvmlDeviceGetMemoryInfo(handle).total // MIB
            ),
        }
        info["errors"] = errors
        return info

    def static(self) -> list[dict[str, Any]]:
        return [{k: v for k, v in gpu.items() if k != "errors"} for gpu in self._static]

    def sample(self) -> list[dict[str, Any]]:
        gpus = [self._sample_one(static, handle) for static, handle in zip(self._static, self._handles)]  # noqa: B905 - strict= is 3.10+
        if gpus and all(gpu["used_mib"] is None and gpu["util_pct"] is None for gpu in gpus):
            raise SourceDown("NVML stopped answering: " + "; ".join(sorted(set(gpus[0]["errors"].values()))))
        return gpus

    def _sample_one(self, static: dict[str, Any], handle: Any) -> dict[str, Any]:
        nvml = self._nvml
        gpu = dict(static)
        errors = dict(gpu.pop("errors"))
        memory = attempt(errors, "used_mib", lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
        if memory is None:
            errors["free_mib"] = errors["used_mib"]
        gpu["used_mib"] = memory.used // MIB if memory is not None else None
        gpu["free_mib"] = memory.free // MIB if memory is not None else None
        gpu["util_pct"] = attempt(
            errors, "util_pct", lambda: int(nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        )
        procs = attempt(errors, "processes", lambda: nvml.nvmlDeviceGetComputeRunningProcesses(handle))
        gpu["processes"] = [nvml_process(p) for p in procs or []]
        gpu["errors"] = errors
        return gpu

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a library that already failed: nothing left to do
            self._nvml.nvmlShutdown()


def nvml_process(proc: Any) -> dict[str, Any]:
    used = getattr(proc, "usedGpuMemory", None)  # None where the driver cannot tell (e.g. under MIG)
    return {
        "pid": proc.pid,
        "used_mib": used // MIB if isinstance(used, int) else None,
        **process_identity(proc.pid),
    }


def process_identity(pid: int) -> dict[str, Any]:
    """Name and process group of a GPU process. Both None when it is gone or a zombie (its memory not
    released yet): no name means no owner. The group tells a server's ranks from other processes even
    when a scan has not listed them yet (a rank started, or crashed, between two scans)."""
    stat = read_stat(pid)
    if stat is None:
        return {"name": None, "pgid": None}
    return {"name": process_name(pid), "pgid": stat.pgid}


SMI_GPU_FIELDS = (
    "index",
    "uuid",
    "name",
    "compute_cap",
    "memory.total",
    "memory.used",
    "memory.free",
    "utilization.gpu",
)
SMI_APP_FIELDS = ("gpu_uuid", "pid", "used_memory", "process_name")  # the name last: it may hold commas
SMI_MISSING = ("", "N/A", "[N/A]", "[Not Supported]", "[Unknown Error]", "[Insufficient Permissions]")


def smi_int(cell: str, field: str, errors: dict[str, str]) -> int | None:
    try:
        return int(float(cell))
    except ValueError:
        errors[field] = cell or "empty"
        return None


def smi_text(cell: str, field: str, errors: dict[str, str]) -> str | None:
    if cell in SMI_MISSING:
        errors[field] = cell or "empty"
        return None
    return cell


class SmiSource:
    """GPUs through ``nvidia-smi --query-*`` (no shell; each call bounded by SMI_TIMEOUT_S)."""

    name = "nvidia-smi"

    def __init__(self) -> None:
        self._gpu_fields = list(SMI_GPU_FIELDS)
        self._gpus = self._query_gpus()

    def run(self, query: str, fields: Iterable[str]) -> list[list[str]]:
        argv = ["nvidia-smi", f"--{query}=" + ",".join(fields), "--format=csv,noheader,nounits"]
        try:
            done = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=SMI_TIMEOUT_S,
                text=True,
                errors="replace",
            )
        except FileNotFoundError:
            raise SourceDown("not found on PATH") from None
        except subprocess.TimeoutExpired:
            raise SourceDown(f"no answer within {SMI_TIMEOUT_S:.0f} s") from None
        except OSError as exc:
            raise SourceDown(str(exc)) from None
        if done.returncode != 0:
            first = (done.stdout or "").strip().splitlines()[:1]
            raise SourceDown(f"exited {done.returncode}: " + (first[0] if first else "no output"))
        return [
            [cell.strip() for cell in line.split(",", 3 if query == "query-compute-apps" else -1)]
            for line in done.stdout.splitlines()
            if line.strip()
        ]

    def _query_gpus(self) -> list[dict[str, Any]]:
        try:
            rows = self.run("query-gpu", self._gpu_fields)
        except SourceDown as exc:
            if "compute_cap" not in str(exc) or "compute_cap" not in self._gpu_fields:
                raise
            self._gpu_fields.remove("compute_cap")  # drivers before 510 do not know the field
            rows = self.run("query-gpu", self._gpu_fields)
        # zip without strict= (3.10+): a short row leaves its last fields missing, reported as errors
        return [self._gpu_row(dict(zip(self._gpu_fields, row))) for row in rows]  # noqa: B905

    @staticmethod
    def _gpu_row(cells: dict[str, str]) -> dict[str, Any]:
        errors: dict[str, str] = {}
        cap = cells.get("compute_cap")
        return {
            "index": smi_int(cells.get("index", ""), "index", errors),
            "uuid": smi_text(cells.get("uuid", ""), "uuid", errors),
            "name": smi_text(cells.get("name", ""), "name", errors),
            "compute_capability": smi_text(cap, "compute_capability", errors) if cap is not None else None,
            "total_mib": smi_int(cells.get("memory.total", ""), "total_mib", errors),
            "used_mib": smi_int(cells.get("memory.used", ""), "used_mib", errors),
            "free_mib": smi_int(cells.get("memory.free", ""), "free_mib", errors),
            "util_pct": smi_int(cells.get("utilization.gpu", ""), "util_pct", errors),
            "processes": [],
            "errors": errors,
        }

    def static(self) -> list[dict[str, Any]]:
        keys = ("index", "uuid", "name", "compute_capability", "total_mib")
        return [{k: gpu[k] for k in keys} for gpu in self._gpus]

    def sample(self) -> list[dict[str, Any]]:
        gpus = self._query_gpus()
        by_uuid = {gpu["uuid"]: gpu for gpu in gpus}
        try:
            apps = self.run("query-compute-apps", SMI_APP_FIELDS)
        except SourceDown as exc:
            for gpu in gpus:
                gpu["errors"]["processes"] = str(exc)
            apps = []
        for cells in apps:
            owner = by_uuid.get(cells[0])
            if owner is not None and len(cells) == len(SMI_APP_FIELDS):
                owner["processes"].append(smi_app(cells, owner["errors"]))
        return gpus

    def close(self) -> None:
        pass


def smi_app(cells: list[str], errors: dict[str, str]) -> dict[str, Any]:
    _, pid, used, name = cells
    number = smi_int(pid, "processes", errors)
    stat = read_stat(number) if number is not None else None
    return {
        "pid": number,
        "used_mib": smi_int(used, "processes", errors) if used not in SMI_MISSING else None,
        "name": name or None,
        "pgid": stat.pgid if stat is not None else None,
    }


class NoSource:
    name = "none"

    def static(self) -> list[dict[str, Any]]:
        return []

    def sample(self) -> list[dict[str, Any]]:
        return []

    def close(self) -> None:
        pass


class Gpus:
    """The GPU source in use: pynvml, else nvidia-smi, else none; moves down the list when one dies."""

    OPENERS = (NvmlSource, SmiSource)

    def __init__(self) -> None:
        self._source: Any = None
        self._next = 0  # the next opener to try
        self._reasons: list[str] = []

    def source(self) -> Any:
        while self._source is None:
            if self._next >= len(self.OPENERS):
                self._source = NoSource()
                break
            opener = self.OPENERS[self._next]
            self._next += 1
            try:
                self._source = opener()
            except SourceDown as exc:
                self._reasons.append(f"{opener.name}: {exc}")
        return self._source

    def describe(self) -> dict[str, Any]:
        source = self.source()
        return {"source": source.name, "reason": "; ".join(self._reasons) or None}

    def static(self) -> list[dict[str, Any]]:
        return list(self.source().static())

    def sample(self) -> list[dict[str, Any]]:
        """One reading; a source that fails entirely is dropped for the next one, which reads instead."""
        while True:
            source = self.source()
            try:
                return list(source.sample())
            except SourceDown as exc:
                self._reasons.append(f"{source.name}: {exc}")
                source.close()
                self._source = None

    def close(self) -> None:
        if self._source is not None:
            self._source.close()


# --- the sglang version -------------------------------------------------------------------------------


def sglang_version() -> str | None:
    """From package metadata: importing sglang would take seconds and load torch."""
    try:
        from importlib import metadata

        return str(metadata.version("sglang"))
    except Exception:
        return sglang_version_from_path(sys.path)


def sglang_version_from_path(paths: Iterable[str]) -> str | None:
    pattern = re.compile(r"^sglang-([^-]+?)(?:-py[^-]*)?\.(?:dist-info|egg-info)$")
    for path in paths:
        try:
            names = os.listdir(path or ".")
        except OSError:
            continue
        for name in sorted(names):
            match = pattern.match(name)
            if match:
                return match.group(1)
    return None


# --- following a log ----------------------------------------------------------------------------------


def utf8_cut(data: bytes, end: int) -> int:
    """``end`` moved back so that it does not split a UTF-8 sequence."""
    for back in range(1, min(4, end) + 1):
        byte = data[end - back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: its lead is further back
        if byte >= 0xC0:
            needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            if back < needed:
                return end - back
        break
    return end


def complete_prefix(data: bytes) -> int:
    """How many bytes of ``data`` can be sent now: through its last newline, or all of a too-long line."""
    newline = data.rfind(b"\n")
    if newline >= 0:
        return newline + 1
    if len(data) >= LOG_LINE_MAX:
        return utf8_cut(data, len(data))
    return 0


class Follower:
    """Follows one file from a byte offset, sending complete lines exactly once and in order.

    The file stays open between polls: while the agent holds it, its inode cannot be reused by a file
    created at the same path, so "another inode at the path" reliably means the file was replaced.
    Rotations are followed as ``tail -F`` does, and then some:

    - rename (logrotate ``create``): the old file is read to its end before the new one; while the new
      file is still empty, or the old one still grows, the old one is followed on, since a server whose
      output was redirected keeps writing to the file it opened (the new file waits: nothing is lost;
      after ``ROTATE_WAIT_S`` of a new file with bytes, it is taken even if the old one still grows);
    - copytruncate: the file shrank, or the bytes before the read position are no longer the ones sent
      (more was written after the truncation than the old file held): read again from byte 0;
    - delete: the open file is followed on until another file appears at the path;
    - the NUL hole that copytruncate leaves when the writer lacks ``O_APPEND`` is skipped, not sent.
    """

    def __init__(
        self,
        path: str,
        offset: int,
        inode: int | None,
        send: Callable[..., None],
        raw: bool = False,
        opened: Callable[[str], None] | None = None,
    ) -> None:
        """``opened(path)``: told each time the file at the path is opened (a new file there)."""
        self.path = path
        self.raw = raw  # send the bytes after the message instead of as a JSON string
        self._opened = opened
        self.offset = offset  # bytes sent so far: always the start of a line
        self.inode = inode  # of the file the offset belongs to; None: whatever file is there now
        self.pending = b""  # bytes after the offset waiting for their newline
        self._send = send
        self._fd: int | None = None
        self._fd_id = (0, 0)  # (st_dev, st_ino) of the open file
        self._missing = False
        self._seen = b""  # the last bytes before the read position, as read: a copytruncate changes them
        self._switch_now = False  # the next file at the path is read at once, even while empty
        self._new_since: float | None = None  # when a new file with bytes was first seen at the path
        self._hole = 0  # NUL bytes skipped since the last message, which the next one's offset covers
        self._told_end = False  # the console knows it has all there is (it waits for that, see poll)

    @property
    def read_pos(self) -> int:
        return self.offset + len(self.pending)

    def expect_new_file(self) -> None:
        """The agent itself rotated the log for a launch: go to the new file at once, empty or not."""
        self._switch_now = True

    def poll(self) -> float:
        """Send what is new; return how soon to look again (0: more is waiting already)."""
        if not self._ensure_open():
            return LOG_POLL_IDLE_S
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size < self.read_pos or not self._same_bytes_before(size):
            self._restart("truncated", self.inode)
        if size <= self.read_pos:
            self._tell_end(size)
            return LOG_POLL_IDLE_S
        self._read(size)
        if self.read_pos < size:
            return 0.0
        self._tell_end(size)
        return LOG_POLL_S

    def _tell_end(self, size: int) -> None:
        """At the file's end: say so once, in an empty frame, when no frame has (an empty file, or one
        whose last line is unfinished, as a progress bar's is): a console that waits to have read the
        whole log would otherwise wait for a newline that may never come."""
        if not self._told_end:
            self._send_lines(b"", 0, size, held=len(self.pending))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _same_bytes_before(self, size: int) -> bool:
        """Whether the bytes just before the read position are still those read (checked only when the
        file grew: a copytruncate followed by more bytes than the old file held looks like growth)."""
        seen = self._seen
        if not seen or size <= self.read_pos:
            return True
        assert self._fd is not None
        return os.pread(self._fd, len(seen), self.read_pos - len(seen)) == seen

    def _ensure_open(self) -> bool:
        """Open the file at the path, unless the open one is still the file there (or must be finished)."""
        try:
            st = os.stat(self.path)
        except OSError as exc:
            if self._fd is not None:
                return True  # deleted: what the writer still writes goes to the open file
            self._gone(exc.strerror or str(exc))
            return False
        if self._fd is not None:
            if (st.st_dev, st.st_ino) == self._fd_id:
                return True
            if not self._leave_for(st):
                return True
        self.close()
        if not S_ISREG(st.st_mode):  # a directory cannot be read, a FIFO would block the agent
            self._gone("not a regular file")
            return False
        try:
            self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            self._gone(exc.strerror or str(exc))
            return False
        opened = os.fstat(self._fd)  # the file actually opened, should the path change again meanwhile
        if not S_ISREG(opened.st_mode):  # swapped for a FIFO between the stat and the open
            self.close()
            self._gone("not a regular file")
            return False
        self._fd_id = (opened.st_dev, opened.st_ino)
        if self._opened is not None:
            self._opened(self.path)
        self._adopt(opened.st_ino)
        return True

    def _leave_for(self, st: os.stat_result) -> bool:
        """Another file is at the path: read the open one to its end first. True when it is time to
        switch: the agent rotated the log itself, or the new file has bytes (a writer uses it now) and the
        old one did not grow since the last look (its writer may still write to it: those lines come
        first), or the new file has waited ``ROTATE_WAIT_S``."""
        grew = self._drain()
        now = time.monotonic()
        if st.st_size > 0 and self._new_since is None:
            self._new_since = now
        waited = self._new_since is not None and now - self._new_since >= ROTATE_WAIT_S
        if self._switch_now or not S_ISREG(st.st_mode) or (st.st_size > 0 and (not grew or waited)):
            self._switch_now = False
            self._new_since = None
            self._finish()
            return True
        return False

    def _drain(self) -> bool:
        """Send the complete lines the open file has past the read position; whether it had any bytes."""
        assert self._fd is not None
        start = self.read_pos
        for _ in range(1 << 16):  # bounded: a file still written this fast is left at some point
            size = os.fstat(self._fd).st_size
            if size <= self.read_pos:
                break
            self._read(size)
        return self.read_pos > start

    def _finish(self) -> None:
        """Send the rest of the open file, a last line without its newline ended as it is left."""
        assert self._fd is not None
        self._drain()
        if self.pending:
            self._send_lines(self.pending, len(self.pending), os.fstat(self._fd).st_size)
            self.offset += len(self.pending)
        self.pending = b""

    def _adopt(self, inode: int) -> None:
        if self._missing:
            self._restart("appeared", inode)
        elif self.inode is None:
            self.inode = inode  # the console did not know the inode: trust its offset for this file
        elif inode != self.inode:
            self._restart("replaced", inode)
        self._missing = False

    def _gone(self, message: str) -> None:
        self.close()
        if not self._missing:
            self._missing = True
            self._send(
                {
                    "type": "log_reset",
                    "path": self.path,
                    "reason": "missing",
                    "inode": None,
                    "message": message,
                }
            )

    def _restart(self, reason: str, inode: int | None) -> None:
        self.offset, self.pending, self.inode, self._seen, self._hole = 0, b"", inode, b"", 0
        self._send({"type": "log_reset", "path": self.path, "reason": reason, "inode": inode})

    def _read(self, size: int) -> None:
        """One message's worth from the read position on (the caller knows the file has more)."""
        start = self.read_pos
        assert self._fd is not None
        # Room for one message's worth; a long line being gathered grows by that much at a time.
        limit = LOG_READ_MAX_RAW if self.raw else LOG_READ_MAX
        room = limit - len(self.pending) if len(self.pending) < limit else limit
        fresh = os.pread(self._fd, min(room, size - start), start)
        if fresh:
            self._seen = (self._seen + fresh)[-SEEN_BYTES:]
        data = self.pending + fresh
        hole = 0
        if not self.pending:  # a copytruncate's hole (the writer kept its offset) holds no text
            hole = len(data) - len(data.lstrip(b"\0"))
            data = data[hole:]
        cut = complete_prefix(data)
        if cut:
            self._send_lines(data[:cut], hole + cut, size, held=len(data) - cut)
            self.offset += hole + cut
        elif hole:
            self.offset += hole  # (sent with the next line's message, whose offset covers it)
            self._hole += hole
        self.pending = data[cut:]

    def _send_lines(self, data: bytes, length: int, size: int, held: int = 0) -> None:
        """``data``: the text of the next ``length`` bytes of the file from the offset (less a NUL hole
        before it, and less the newline of a file's unfinished last line, which the console adds);
        ``held``: the bytes read after them that wait for their newline."""
        start, self._hole = self.offset - self._hole, 0
        end = self.offset + length
        message: dict[str, Any] = {
            "type": "log",
            "path": self.path,
            "inode": self.inode,
            "offset": start,
            "end": end,
            "size": size,
            "held": held,
        }
        self._told_end = end + held >= size
        if self.raw:
            message["bytes"] = len(data)
            self._send(message, data)
        else:
            message["data"] = data.decode("utf-8", "replace")
            self._send(message)


class GrowthWatch:
    """Wakes the agent when the followed file is written (Linux inotify, through ctypes), so that a line
    is sent as it is written rather than at the next poll (an idle poll every 80 ms: 40 ms late on average).

    A thread blocks reading the inotify descriptor and calls ``wake`` after each batch of events. Nothing
    depends on it: without inotify (another OS, no ctypes, no watch left, a file system that does not
    report writes) the polls go on alone."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self.fd = -1
        self.wd = -1
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            self._add_watch = libc.inotify_add_watch
            self._rm_watch = libc.inotify_rm_watch
            self.fd = libc.inotify_init1(os.O_CLOEXEC)  # IN_CLOEXEC is O_CLOEXEC
        except (ImportError, OSError, AttributeError):
            return
        if self.fd >= 0:
            threading.Thread(target=self._read, args=(self.fd, wake), daemon=True).start()

    def watch(self, path: str | None) -> None:
        """Watch the file now at ``path`` (None: nothing). Called each time the follower opens a file: a
        replaced file is another inode, which the old watch does not see."""
        if self.fd < 0:
            return
        if self.wd >= 0:
            self._rm_watch(self.fd, self.wd)  # fails harmlessly when the old file is gone
            self.wd = -1
        if path is not None:
            self.wd = self._add_watch(self.fd, os.fsencode(path), IN_MODIFY)

    @staticmethod
    def _read(fd: int, wake: Callable[[], None]) -> None:
        while True:
            try:
                os.read(fd, 4096)  # blocks until the next events; what they say does not matter
            except OSError:
                return
            wake()


# --- launching and stopping ---------------------------------------------------------------------------

LOCK_NAME = ".gdnconsole-launch.lock"
PIDFILE_NAME = ".gdnconsole-server.json"
LOCK_STALE_S = 600.0  # a launch takes milliseconds: a lock this old was left by an agent that died
WATCH_FAST_S = 0.2  # how often a just-launched server is checked: a crash shows at once
WATCH_FAST_FOR_S = 60.0
WATCH_SLOW_S = 1.0
STOP_POLL_S = 0.05  # a relaunch waits on this: the new server starts within ~50 ms of the old one's end
STOP_REPORT_S = 1.0
KILL_WAIT_S = 10.0  # after SIGKILL: a process still there is stuck in the kernel (D state)
SAME_START_S = 0.05  # start times are epoch seconds rounded to clock ticks (10 ms)


class BadRequest(Exception):
    """A request the agent cannot carry out; answered with an error message (plus ``extra`` fields)."""

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.extra = extra


def beside(log: str, name: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(log)), name)


JSON_FILE_MAX = 1 << 20  # a pid file or lock is a few hundred bytes


def read_json_file(path: str) -> dict[str, Any] | None:
    """The object in a pid file or lock of ours, or None when it is missing, damaged or not ours to read.

    Its folder may be writable by others (/tmp): a FIFO planted there must not block the agent (opening
    one to read waits for a writer: O_NONBLOCK, then a regular-file check), a link is not followed (ours
    are renamed into place, never links), another user's file is not ours, a huge file is not read, and
    nesting deep enough to exhaust the stack is damage like any other.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            return None  # another user's record would have us stop a process of their choosing
        data = os.read(fd, JSON_FILE_MAX + 1)
        value = json.loads(data.decode("utf-8")) if len(data) <= JSON_FILE_MAX else None
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
    return value if isinstance(value, dict) else None


def write_json_file(path: str, value: dict[str, Any]) -> None:
    """Atomically: a reader (another console's agent) sees the old file or the new one, never half.

    The agent's own copy of ``gdnconsole/safefile.py`` (it travels alone): a random temporary name,
    created with O_EXCL|O_NOFOLLOW at 0600 before the first byte (the record holds the server's command
    line, API key included), then renamed, so a link or file planted in the folder is never written
    through or kept.
    """
    data = json.dumps(value).encode("utf-8")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(16):
        tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.urandom(8).hex()}.tmp")
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileExistsError:
            continue
        try:
            os.fchmod(fd, 0o600)
            with open(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return
    raise OSError(f"16 random temporary names beside {path} all exist")


def stale_reason(lock: dict[str, Any] | None, now: float) -> str | None:
    """Why a lock no longer protects anything, or None while its owner may still be launching."""
    if lock is None:
        return "unreadable"
    pid, taken = lock.get("pid"), lock.get("time")
    if not is_int(pid) or read_stat(pid) is None:
        return f"its agent (pid {pid}) is gone"
    if not isinstance(taken, (int, float)) or now - taken > LOCK_STALE_S:
        return f"older than {LOCK_STALE_S:.0f} s"
    return None


def take_lock(path: str, owner: str) -> dict[str, Any] | None:
    """Create the launch lock, or raise naming its holder; a stale lock is taken over and returned.

    O_EXCL makes creation atomic between agents. Two agents that find the same stale lock can both
    remove it; the window is the few microseconds between their reads, far below a human's double launch.
    """
    stale = None
    for _ in range(3):
        now = time.time()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            held = read_json_file(path)
            reason = stale_reason(held, now)
            if reason is None:
                assert held is not None
                raise BadRequest(
                    "another console is launching here: {} (agent pid {}, {:.0f} s ago); lock {}".format(
                        held.get("owner"), held.get("pid"), now - float(held.get("time", now)), path
                    ),
                    lock=held,
                ) from None
            stale = dict(held or {}, reason=reason)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"owner": owner, "pid": os.getpid(), "time": now}, fh)
        return stale
    raise BadRequest(f"the launch lock {path} keeps coming back")


def release_lock(path: str) -> None:
    held = read_json_file(path)
    if held is not None and held.get("pid") == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


# A new log is ours alone: SGLang's args dump (``server_args=ServerArgs(…)``) prints the API key, and
# ``--log-requests`` the prompts. `nohup … > log` would make it 0644; a reader the operator wants can be
# given the file (chmod) without a key having leaked first.
LOG_MODE = 0o600
LOG_OPEN = (
    os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


def log_refused(log: str, why: str) -> BadRequest:
    return BadRequest(f"the log {log} {why}: not written (remove it, or set the host's log to another path)")


def open_log(log: str, truncate: bool = False) -> int:
    """The server's log, opened to append (emptied when ``truncate``), as a raw descriptor.

    Someone who can write to the log's folder (/tmp) could plant a link there, or a file of their own:
    a link is never followed (O_NOFOLLOW), a FIFO, device or socket is never waited on (O_NONBLOCK, then a
    regular-file check) and another user's file is never written into. A missing log is created by this
    call alone (O_EXCL) at LOG_MODE. O_CLOEXEC: the server gets it as its stdout only (dup2 clears it).
    """
    for _ in range(16):
        try:
            fd = os.open(log, LOG_OPEN)
        except FileNotFoundError:
            try:
                fd = os.open(log, LOG_OPEN | os.O_CREAT | os.O_EXCL, LOG_MODE)
            except FileExistsError:
                continue  # planted or created meanwhile: open what is there, and check it
            except OSError as exc:
                raise log_refused(log, log_open_error(log, exc)) from None
        except OSError as exc:
            raise log_refused(log, log_open_error(log, exc)) from None
        try:
            info = os.fstat(fd)
            if not S_ISREG(info.st_mode):
                raise log_refused(log, "is not a regular file (a FIFO, device or socket)")
            if info.st_uid != os.geteuid():
                raise log_refused(log, f"belongs to another user (uid {info.st_uid})")
            os.set_blocking(fd, True)
            if truncate:
                os.ftruncate(fd, 0)
        except BaseException:
            os.close(fd)
            raise
        return fd
    raise log_refused(log, "keeps appearing and vanishing")


def log_open_error(log: str, exc: OSError) -> str:
    """ELOOP from O_NOFOLLOW says only "too many levels of symbolic links", ENXIO (a FIFO without a
    reader) "no such device": say what is there."""
    with contextlib.suppress(OSError):
        mode = os.lstat(log).st_mode
        if S_ISLNK(mode):
            return "is a symbolic link"
        if not S_ISREG(mode):
            return "is not a regular file (a FIFO, device or socket)"
    return f"cannot be opened ({exc.strerror or exc})"


def rotate_log(log: str, rotate: bool) -> None:
    """Keep the previous log as LOG.1 (or empty it), so the new server's log starts at byte 0.

    A link at LOG is refused, not moved along (someone planted it); one at LOG.1 is replaced by the
    rename, never written through.
    """
    if not rotate:
        os.close(open_log(log, truncate=True))
        return
    if os.path.islink(log):
        raise log_refused(log, "is a symbolic link")
    if os.path.isdir(log):
        raise log_refused(log, "is a directory")
    try:
        os.replace(log, log + ".1")
    except FileNotFoundError:
        pass  # no previous log: nothing to keep
    except OSError as exc:
        raise BadRequest(f"cannot keep the old log as {log}.1: {exc.strerror or exc}") from None


def start_detached(argv: list[str], env: dict[str, str], cwd: str | None, log: str) -> subprocess.Popen:  # type: ignore[type-arg]
    """The server in its own session (setsid): no terminal, no SIGHUP, its own process group to stop.

    No shell anywhere: argv goes to exec as it is. No PDEATHSIG either: the server must outlive this agent
    and the SSH connection.
    """
    full_env = dict(os.environ)
    full_env.update(env)
    with open(open_log(log), "ab") as out:
        try:
            return subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=full_env,
                cwd=cwd or None,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise BadRequest(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None


def str_list(request: dict[str, Any], key: str) -> list[str]:
    value = request.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise BadRequest(f"{key} must be a non-empty list of strings")
    return value


def str_map(request: dict[str, Any], key: str) -> dict[str, str]:
    value = request.get(key) or {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and "=" not in k for k, v in value.items()
    ):
        raise BadRequest(f"{key} must map variable names to strings")
    return value


def group_members(pgid: int) -> list[int]:
    """Live processes of a process group (zombies hold nothing)."""
    members = []
    for pid in list_pids():
        stat = read_stat(pid)
        if stat is not None and stat.pgid == pgid:
            members.append(pid)
    return members


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (by parent pid), for a server that shares a shell's group."""
    children: dict[int, list[int]] = {}
    for other in list_pids():
        stat = read_stat(other)
        if stat is not None:
            children.setdefault(stat.ppid, []).append(other)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Watched:
    """A server whose end the console must hear of at once."""

    def __init__(self, record: dict[str, Any], proc: Any = None) -> None:
        self.record = record
        self.proc = proc  # the Popen when this agent started it: its exit status, and no zombie left


class StopJob:
    """One stop in progress: SIGTERM sent, waiting for the group to empty, SIGKILL after the grace."""

    def __init__(self, request_id: Any, record: dict[str, Any], grace: float, how: str) -> None:
        self.id = request_id
        self.pid = int(record["pid"])
        self.pgid = record.get("pgid")
        self.start_time = record.get("start_time")
        self.grace = grace
        self.how = how
        self.began = time.monotonic()
        self.reported = self.began
        self.killed_at: float | None = None
        self.tree = [] if self.pgid is not None else descendants(self.pid)
        self.strays = 0

    def members(self) -> list[int]:
        if self.pgid is not None:
            return group_members(self.pgid)
        self.tree = sorted(set(self.tree) | set(descendants(self.pid)))
        return [pid for pid in [self.pid, *self.tree] if read_stat(pid) is not None]

    def kill(self) -> None:
        """SIGKILL what is left: the process group, or the recorded tree of a server in a shared group."""
        if self.pgid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pgid, signal.SIGKILL)
            return
        for pid in self.members():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# --- the agent ----------------------------------------------------------------------------------------


def bind_error(host: str, port: int) -> tuple[int, str] | None:
    """Why a server could not listen on host:port now (errno, words), or None when it could."""
    try:
        family = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except socket.gaierror as exc:
        return (0, f"{host} does not resolve on the host ({exc.strerror})")
    except OSError as exc:
        return (exc.errno or 0, exc.strerror or str(exc))
    return None


def listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on ``port`` (any address), from /proc/net/tcp and tcp6."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        text = read_bytes(table, 16 << 20)
        for line in (text or b"").decode("ascii", "replace").splitlines()[1:]:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and fields[1].rsplit(":", 1)[-1] == f"{port:04X}":
                inodes.add(fields[9])
    return inodes


def port_holders(port: int) -> list[dict[str, Any]]:
    """The processes whose open sockets listen on ``port``, as far as /proc shows (others' fds are not
    ours to read unless the agent runs as root)."""
    wanted = {f"socket:[{inode}]" for inode in listening_inodes(port)}
    holders: list[dict[str, Any]] = []
    for pid in list_pids() if wanted else []:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link in wanted:
                holders.append({"pid": pid, "name": read_comm(pid)})
                break
    return holders


class ServingPoll:
    """Polls one SGLang server's own endpoints from a thread of its own (``serving`` op).

    One keep-alive connection: a fresh TCP connection per request would cost the server an accept and
    a uvicorn access-log line each. A connection that failed is dropped and made again next round.
    """

    def __init__(
        self,
        send: Callable[[dict[str, Any]], None],
        host: str,
        port: int,
        interval: float,
        timeout: float,
        api_key: str | None,
        paths: list[str],
    ) -> None:
        self.send = send
        self.host, self.port = host, port
        self.interval, self.timeout = interval, timeout
        self.headers = {"Authorization": "Bearer " + api_key} if api_key else {}
        self.paths = paths
        self.stopped = threading.Event()
        self.connection: http.client.HTTPConnection | None = None
        self.thread = threading.Thread(target=self.run, name="gdnconsole-serving", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()  # the thread ends after the request in flight, bounded by the timeout

    def run(self) -> None:
        try:
            while not self.stopped.is_set():
                began = time.monotonic()
                replies = [self.get(path) for path in self.paths]
                if self.stopped.is_set():
                    break
                self.send(
                    {
                        "type": "serving",
                        "t": time.time(),
                        "host": self.host,
                        "port": self.port,
                        "replies": replies,
                    }
                )
                self.stopped.wait(max(0.0, self.interval - (time.monotonic() - began)))
        except (BrokenPipeError, OSError):
            pass  # stdout gone: the main loop ends the agent
        finally:
            self.drop()

    def get(self, path: str) -> dict[str, Any]:
        began = time.monotonic()
        reply: dict[str, Any] = {
            "path": path,
            "status": None,
            "error": None,
            "body": None,
            "truncated": False,
        }
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.connection.request("GET", path, headers=self.headers)
            response = self.connection.getresponse()
            data = response.read(SERVING_BODY_MAX + 1)
            reply["status"] = response.status
            reply["truncated"] = len(data) > SERVING_BODY_MAX
            reply["body"] = data[:SERVING_BODY_MAX].decode("utf-8", "replace")
            if reply["truncated"] or response.will_close:
                self.drop()  # the rest of a cut body would be read as the next answer
        except socket.timeout:  # noqa: UP041 (before 3.10 it is not TimeoutError, and the agent runs on 3.8)
            reply["error"] = f"timed out after {self.timeout:g} s"
            self.drop()
        except (OSError, http.client.HTTPException) as exc:
            reply["error"] = str(exc) or type(exc).__name__
            self.drop()
        reply["ms"] = round((time.monotonic() - began) * 1000.0, 1)
        return reply

    def drop(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class Agent:
    """Answers requests and runs periodic work; ``serve`` calls it from one thread."""

    def __init__(self, writer: Writer, wake: Callable[[], None] | None = None) -> None:
        """``wake``: makes ``serve`` call ``log_written`` soon (from another thread); None: no waking."""
        self.send = writer.send
        self.growth = GrowthWatch(wake) if wake is not None else None
        self.last_poll = 0.0
        self.gpus = Gpus()
        self.scanner = Scanner(boot_time(), clock_ticks(), process_scope())
        self.interval = 0.0
        self.next_sample: float | None = None
        self.follower: Follower | None = None
        self.next_poll: float | None = None
        self.watched: dict[int, Watched] = {}
        self.next_watch: float | None = None
        self.watch_fast_until = 0.0
        self.stop_job: StopJob | None = None
        self.next_stop: float | None = None
        self.serving: ServingPoll | None = None

    # requests

    def handle(self, line: bytes) -> None:
        op = None
        request: Any = None
        try:
            request = json.loads(line.decode("utf-8"))
            if not isinstance(request, dict):
                raise BadRequest("a request is a JSON object")
            op = request.get("op")
            handler = getattr(self, "op_" + op, None) if isinstance(op, str) else None
            if handler is None:
                raise BadRequest(f"unknown op {op!r}")
            handler(request)
        except (BadRequest, ValueError) as exc:
            self.send_error(request, op, str(exc), getattr(exc, "extra", {}))
        except Exception as exc:
            self.send_error(request, op, f"{type(exc).__name__}: {exc}", {})

    def send_error(self, request: Any, op: Any, message: str, extra: dict[str, Any]) -> None:
        error = {"type": "error", "op": op, "message": message}
        if isinstance(request, dict) and "id" in request:
            error["id"] = request["id"]  # the console matches the answer to the request that failed
        error.update(extra)
        self.send(error)

    def op_hello(self, request: dict[str, Any]) -> None:
        self.send(
            {
                "type": "hello",
                "agent": VERSION,
                "hostname": socket.gethostname(),
                "python": "{}.{}.{}".format(*sys.version_info[:3]),
                "pid": os.getpid(),
                "sglang": sglang_version(),
                "nvml": self.gpus.describe(),
                "gpus": self.gpus.static(),
                "boot_time": self.scanner.boot,
                "clock_ticks": self.scanner.ticks,
            }
        )

    def op_sample(self, request: dict[str, Any]) -> None:
        interval = number(request, "interval", DEFAULT_INTERVAL_S)
        if interval < 0:
            raise BadRequest("interval must be >= 0")
        self.interval = interval
        self.next_sample = time.monotonic() if interval > 0 else None

    def op_follow(self, request: dict[str, Any]) -> None:
        path = request.get("path")
        offset = request.get("offset", 0)
        inode = request.get("inode")
        if not isinstance(path, str) or not path:
            raise BadRequest("follow needs a path")
        if not is_int(offset) or offset < 0 or not (inode is None or is_int(inode)):
            raise BadRequest("offset must be an integer >= 0 and inode an integer or null")
        self.op_unfollow(request)
        opened = self.growth.watch if self.growth is not None else None
        raw = request.get("raw") is True
        self.follower = Follower(path, offset, inode, self.send, raw=raw, opened=opened)
        self.next_poll = time.monotonic()

    def op_unfollow(self, request: dict[str, Any]) -> None:
        if self.follower is not None:
            self.follower.close()
        if self.growth is not None:
            self.growth.watch(None)
        self.follower, self.next_poll = None, None

    def log_written(self) -> None:
        """The followed file was written: look at it now, or as soon as a busy log may be read again."""
        if self.next_poll is not None:
            self.next_poll = min(self.next_poll, max(time.monotonic(), self.last_poll + LOG_WAKE_GAP_S))

    def op_ping(self, request: dict[str, Any]) -> None:
        self.send({"type": "pong", "id": request.get("id"), "t": time.time()})

    def op_processes(self, request: dict[str, Any]) -> None:
        self.send(self.scanner.message())

    def op_launch(self, request: dict[str, Any]) -> None:
        argv, env = str_list(request, "argv"), str_map(request, "env")
        cwd, log, owner = request.get("cwd"), request.get("log"), request.get("owner", "unknown")
        if not isinstance(log, str) or not log or not (cwd is None or isinstance(cwd, str)):
            raise BadRequest("launch needs a log path (and cwd a string or null)")
        log = os.path.abspath(log)
        if not os.path.isdir(os.path.dirname(log)):
            raise BadRequest(
                f"the log's directory {os.path.dirname(log)} does not exist here: create it, or set the"
                " host's log to a file in a directory that exists"
            )
        lock = beside(log, LOCK_NAME)
        stale = take_lock(lock, str(owner))
        try:
            self.refuse_if_running(log)
            rotate_log(log, request.get("rotate", True) is not False)
            if self.follower is not None and os.path.abspath(self.follower.path) == log:
                self.follower.expect_new_file()
            proc = start_detached(argv, env, cwd, log)
            record = self.record_of(proc.pid, argv, log, str(owner), adopted=False)
            record.update({"env": env, "cwd": os.path.abspath(cwd) if cwd else os.getcwd()})
            write_json_file(beside(log, PIDFILE_NAME), record)
        finally:
            release_lock(lock)
        self.watch(Watched(record, proc), fast=True)
        self.catch_up_log(log)  # the console sees the old log's end before it hears of the new server
        self.send({"type": "launched", "id": request.get("id"), "server": record, "stale_lock": stale})

    def op_stop(self, request: dict[str, Any]) -> None:
        pid, pgid, start = request.get("pid"), request.get("pgid"), request.get("start_time")
        grace = number(request, "grace", 30.0)
        if not is_int(pid) or not (pgid is None or is_int(pgid)) or not isinstance(start, (int, float)):
            raise BadRequest("stop needs pid, pgid (an integer or null) and start_time")
        if self.stop_job is not None:
            raise BadRequest(f"a stop of pid {self.stop_job.pid} is in progress")
        record = {"pid": pid, "pgid": pgid, "start_time": start}
        stat = read_stat(pid)
        if stat is not None and not self.same_process(pid, start):
            raise BadRequest(
                f"pid {pid} is not the server that was launched (another start time): not signalled"
            )
        if stat is not None and pgid is not None and stat.pgid != pgid:
            raise BadRequest(f"pid {pid} left process group {pgid}: not signalled")
        job = StopJob(request.get("id"), record, grace, "sigterm" if stat is not None else "gone")
        if stat is not None:
            os.kill(pid, signal.SIGTERM)
        self.stop_job = job
        self.send_stopping(job, "SIGTERM" if stat is not None else None, len(job.members()))
        self.next_stop = time.monotonic() + STOP_POLL_S

    def op_pidfile(self, request: dict[str, Any]) -> None:
        log = request.get("log")
        if not isinstance(log, str) or not log:
            raise BadRequest("pidfile needs a log path")
        log = os.path.abspath(log)
        record = read_json_file(beside(log, PIDFILE_NAME))
        alive = self.record_alive(record)
        if alive and record is not None and int(record["pid"]) not in self.watched:
            self.watch(Watched(record), fast=False)
        self.send({"type": "pidfile", "id": request.get("id"), "log": log, "server": record, "alive": alive})

    def op_adopt(self, request: dict[str, Any]) -> None:
        pid, log = request.get("pid"), request.get("log")
        if not is_int(pid) or not isinstance(log, str) or not log:
            raise BadRequest("adopt needs a pid and a log path")
        log = os.path.abspath(log)
        argv = read_argv(pid)
        if argv is None or read_stat(pid) is None:
            raise BadRequest(f"no process {pid} on this host")
        if not is_server(argv):
            raise BadRequest("pid {} is not an SGLang server: {}".format(pid, " ".join(argv)[:200]))
        current = read_json_file(beside(log, PIDFILE_NAME))
        if self.record_alive(current) and current is not None and current.get("pid") != pid:
            raise BadRequest("pid {} is the server of this log already".format(current.get("pid")))
        record = self.record_of(pid, argv, log, str(request.get("owner", "unknown")), adopted=True)
        record.update({"env": read_environ(pid), "cwd": read_cwd(pid)})
        write_json_file(beside(log, PIDFILE_NAME), record)
        self.watch(Watched(record), fast=False)
        self.send({"type": "adopted", "id": request.get("id"), "server": record})

    # launching and stopping, the details

    def op_port(self, request: dict[str, Any]) -> None:
        host, port = request.get("host") or "127.0.0.1", request.get("port")
        if not isinstance(host, str) or not is_int(port) or not 0 < port < 65536:
            raise BadRequest("port needs a host (a string) and a port number (1-65535)")
        error = bind_error(host, port)
        holders = port_holders(port) if error is not None else []
        reason = error[1] if error is not None else None
        reply = {"type": "port", "id": request.get("id"), "host": host, "port": port}
        self.send({**reply, "free": error is None, "reason": reason, "holders": holders})

    def op_serving(self, request: dict[str, Any]) -> None:
        interval = number(request, "interval", SERVING_MIN_INTERVAL_S)
        timeout = number(request, "timeout", SERVING_TIMEOUT_S)
        host, port = request.get("host", SGLANG_HOST), request.get("port", SGLANG_PORT)
        api_key = request.get("api_key")
        paths = request.get("paths", list(SERVING_PATHS))
        if not isinstance(host, str) or not host or not is_int(port) or not 0 < port < 65536:
            raise BadRequest("serving needs a host name and a port 1-65535")
        if not (api_key is None or isinstance(api_key, str)) or timeout <= 0:
            raise BadRequest("api_key must be a string or null, and timeout > 0")
        if not isinstance(paths, list) or not all(isinstance(p, str) and p.startswith("/") for p in paths):
            raise BadRequest("paths must be a list of paths that start with /")
        if self.serving is not None:
            self.serving.stop()
            self.serving = None
        if interval > 0:
            interval = max(interval, SERVING_MIN_INTERVAL_S)
            self.serving = ServingPoll(self.send, host, port, interval, timeout, api_key, paths)

    def record_of(self, pid: int, argv: list[str], log: str, owner: str, adopted: bool) -> dict[str, Any]:
        """The pid file's record. An adopted server's group counts only if it leads it: a server started
        from a script shares the script's group, which stop must never kill."""
        stat = read_stat(pid)
        pgid = stat.pgid if stat is not None else pid
        return {
            "pid": pid,
            "pgid": pgid if (not adopted or pgid == pid) else None,
            "start_time": self.scanner.epoch(stat.start_ticks) if stat is not None else None,
            "argv": argv,
            "log": log,
            "owner": owner,
            "time": time.time(),
            "adopted": adopted,
        }

    def same_process(self, pid: int, start_time: Any) -> bool:
        """``pid`` runs and is the process that started at ``start_time`` (not a reuse of its number)."""
        stat = read_stat(pid)
        if stat is None or not isinstance(start_time, (int, float)):
            return False
        try:
            return abs(self.scanner.epoch(stat.start_ticks) - start_time) < SAME_START_S
        except OverflowError:  # a 400-digit start time in a damaged pid file
            return False

    def record_alive(self, record: dict[str, Any] | None) -> bool:
        return (
            record is not None
            and is_int(record.get("pid"))
            and self.same_process(record["pid"], record.get("start_time"))
        )

    def refuse_if_running(self, log: str) -> None:
        record = read_json_file(beside(log, PIDFILE_NAME))
        if self.record_alive(record):
            assert record is not None
            raise BadRequest(
                "a server launched by {} still runs here (pid {}): stop it first".format(
                    record.get("owner"), record.get("pid")
                ),
                server=record,
            )

    def watch(self, watched: Watched, fast: bool) -> None:
        self.watched[int(watched.record["pid"])] = watched
        now = time.monotonic()
        if fast:
            self.watch_fast_until = now + WATCH_FAST_FOR_S
        self.next_watch = now + (WATCH_FAST_S if fast else WATCH_SLOW_S)

    def catch_up_log(self, path: str | None = None) -> None:
        """Send what the followed log holds now (if it is ``path``), so that later messages come after it."""
        follower = self.follower
        if follower is None or (path is not None and os.path.abspath(follower.path) != path):
            return
        for _ in range(64):  # at most 16 MiB: a backlog larger than that goes on at the normal pace
            if follower.poll() != 0.0:
                break

    def check_watched(self) -> None:
        for pid, watched in list(self.watched.items()):
            if self.same_process(pid, watched.record.get("start_time")):
                continue
            del self.watched[pid]
            code = watched.proc.poll() if watched.proc is not None else None  # reaps our own child
            self.catch_up_log()  # the fatal lines are read before the console hears of the exit
            self.send(
                {
                    "type": "server_exit",
                    "pid": pid,
                    "pgid": watched.record.get("pgid"),
                    "returncode": code,
                    "t": time.time(),
                }
            )
            self.send(self.scanner.message())

    def watch_due(self) -> None:
        self.check_watched()
        now = time.monotonic()
        if not self.watched:
            self.next_watch = None
        else:
            self.next_watch = now + (WATCH_FAST_S if now < self.watch_fast_until else WATCH_SLOW_S)

    def send_stopping(self, job: StopJob, sent: str | None, alive: int) -> None:
        elapsed = round(time.monotonic() - job.began, 3)
        self.send(
            {
                "type": "stopping",
                "id": job.id,
                "pid": job.pid,
                "signal": sent,
                "elapsed": elapsed,
                "alive": alive,
            }
        )

    def stop_due(self) -> None:
        job = self.stop_job
        assert job is not None
        now = time.monotonic()
        self.next_stop = now + STOP_POLL_S
        if job.pid in self.watched and self.watched[job.pid].proc is not None:
            self.watched[job.pid].proc.poll()  # our own child: reap it so that it leaves the group
        main_alive = self.same_process(job.pid, job.start_time)
        members = job.members()
        if not members:
            return self.finish_stop(job)
        if job.killed_at is None and (not main_alive or now - job.began >= job.grace):
            if main_alive:
                job.how = "sigkill"
            else:
                job.strays = len(members)  # the server is gone: nothing of it is left to drain
            job.kill()
            job.killed_at = now
            self.send_stopping(job, "SIGKILL", len(members))
        elif job.killed_at is not None and now - job.killed_at > KILL_WAIT_S:
            self.stop_job, self.next_stop = None, None
            raise BadRequest(f"processes survive SIGKILL (stuck in the kernel?): {members}")
        elif now - job.reported >= STOP_REPORT_S:
            job.reported = now
            self.send_stopping(job, None, len(members))

    def finish_stop(self, job: StopJob) -> None:
        self.stop_job, self.next_stop = None, None
        self.check_watched()  # server_exit first: the console knows the server is gone when stop returns
        self.send(
            {
                "type": "stopped",
                "id": job.id,
                "pid": job.pid,
                "pgid": job.pgid,
                "how": job.how,
                "elapsed": round(time.monotonic() - job.began, 3),
                "strays": job.strays,
            }
        )

    # periodic work

    def wait_s(self, now: float) -> float | None:
        """Seconds until the next piece of work is due; None when nothing is scheduled."""
        due = [
            t for t in (self.next_sample, self.next_poll, self.next_watch, self.next_stop) if t is not None
        ]
        return max(0.0, min(due) - now) if due else None

    def run_due(self, now: float) -> None:
        if self.next_poll is not None and now >= self.next_poll:
            self.guarded("follow", self.poll_log)
        if self.next_sample is not None and now >= self.next_sample:
            self.next_sample = max(self.next_sample + self.interval, now)  # a slow sample does not pile up
            self.guarded("sample", self.sample)
        if self.next_stop is not None and now >= self.next_stop:
            self.guarded("stop", self.stop_due)
        if self.next_watch is not None and now >= self.next_watch:
            self.guarded("watch", self.watch_due)

    def guarded(self, op: str, work: Callable[[], None]) -> None:
        """Periodic work that fails is reported and tried again next time, never the agent's end."""
        try:
            work()
        except Exception as exc:
            self.send({"type": "error", "op": op, "message": f"{type(exc).__name__}: {exc}"})

    def poll_log(self) -> None:
        assert self.follower is not None
        self.last_poll = time.monotonic()
        self.next_poll = self.last_poll + self.follower.poll()

    def sample(self) -> None:
        gpus = self.gpus.sample()
        self.send({"type": "gpus", "t": time.time(), "nvml": self.gpus.describe(), "gpus": gpus})
        self.send(self.scanner.message())

    def close(self) -> None:
        self.op_unfollow({})
        if self.serving is not None:
            self.serving.stop()
        self.gpus.close()


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def number(request: dict[str, Any], key: str, default: float) -> float:
    value = request.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRequest(f"{key} must be a number")
    return float(value)


# --- the loop -----------------------------------------------------------------------------------------

EOF = b""
WAKE = b"\0wake"  # from the inotify thread: the followed file was written (no request line looks like it)


def read_requests(stdin: IO[bytes], inbox: queue.Queue[bytes]) -> None:
    """Feed stdin's lines to the main loop; an empty item says stdin closed.

    The bootstrap read the program from this same buffered reader, which may hold requests already: so
    this goes on with ``sys.stdin.buffer``, never the raw file descriptor.
    """
    try:
        for line in iter(stdin.readline, b""):
            inbox.put(line)
    finally:
        inbox.put(EOF)


def next_request(inbox: queue.Queue[bytes], wait: float | None) -> bytes | None:
    """The next line within ``wait`` seconds (None: block), or None when there is none yet."""
    try:
        return inbox.get(timeout=wait) if wait is None or wait > 0 else inbox.get_nowait()
    except queue.Empty:
        return None


class Waker:
    """Wakes ``serve`` from another thread with a WAKE in its inbox: one at a time, however many writes."""

    def __init__(self, inbox: queue.Queue[bytes]) -> None:
        self.inbox = inbox
        self.pending = False

    def wake(self) -> None:
        if not self.pending:
            self.pending = True
            self.inbox.put(WAKE)

    def woken(self) -> None:
        # Before the look it leads to: a write after this point wakes the loop again.
        self.pending = False


def serve(agent: Agent, inbox: queue.Queue[bytes], waker: Waker | None = None) -> None:
    """Until stdin closes: answer requests as they come, run periodic work when it is due."""
    while True:
        line = next_request(inbox, agent.wait_s(time.monotonic()))
        if line == EOF:
            return
        if line == WAKE:
            if waker is not None:
                waker.woken()
            agent.log_written()
        elif line is not None:
            agent.handle(line)
        agent.run_due(time.monotonic())


def widen_stdout_pipe(size: int = 1 << 20) -> None:
    """A busy log is a bulk transfer: with Linux's default 64 KiB pipe every 256 KiB message takes several
    writes, each waiting for sshd to drain the pipe; a 1 MiB pipe lets one message go in one write
    (measured +25% log throughput). Not a pipe, or not Linux: nothing to do."""
    try:
        import fcntl

        fcntl.fcntl(sys.stdout.fileno(), F_SETPIPE_SZ, size)
    except (ImportError, OSError, ValueError, AttributeError):
        pass


def main() -> None:
    widen_stdout_pipe()
    inbox: queue.Queue[bytes] = queue.Queue()
    reader = threading.Thread(target=read_requests, args=(sys.stdin.buffer, inbox), daemon=True)
    reader.start()
    waker = Waker(inbox)
    agent = Agent(Writer(sys.stdout.buffer), waker.wake)
    status = 0
    try:
        serve(agent, inbox, waker)
        agent.close()
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # the console is gone: nobody to tell
    except Exception:
        traceback.print_exc()  # stderr: the console shows it as the agent's last words
        status = 1
    finally:
        sys.stderr.flush()
        # Not a normal interpreter exit: that would wait on the reader thread's lock on stdin (a fatal error
        # at shutdown when stdin is still open) and flush a stdout that may be a broken pipe.
        os._exit(status)


if __name__ == "__main__":
    main()
