"""What the agent reports, as typed values: parsed once, at the session's edge.

The agent speaks JSON lines (its module docstring is the protocol). Everything above the session reads
attributes of these small frozen dataclasses instead of ``.get("…")`` on the agent's dicts, so a field
that is missing or of the wrong type is decided here, once: a number that is not a number is None, a
list that is not a list is empty. Nothing here raises on a malformed message: an agent of another
version, or a damaged line, must not take the console down.
"""

from __future__ import annotations

import math
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Moved below the host layer (issue 27): the rules read it; the session builds it (HostFacts.of).
from gdnconsole.sglang.hostfacts import HostFacts as HostFacts


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    """A finite number, as a float; None for anything else (a 400-digit integer overflows a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(word) for word in _list(value))


def _env(value: Any) -> dict[str, str] | None:
    """A process's environment as the agent read it; None when it was not ours to read."""
    if not isinstance(value, dict):
        return None
    return {str(k): str(v) for k, v in value.items()}


@dataclass(frozen=True)
class NvmlSource:
    """Where the GPU figures come from: "pynvml", "nvidia-smi" or "none", and why not pynvml."""

    source: str = "none"
    reason: str | None = None

    @classmethod
    def parse(cls, raw: Any) -> NvmlSource:
        data = _dict(raw)
        return cls(source=_str(data.get("source")) or "none", reason=_str(data.get("reason")))


@dataclass(frozen=True)
class GpuProcess:
    """A process that holds memory on a GPU. ``name`` and ``pgid`` are None for one that is gone."""

    pid: int
    used_mib: int | None = None
    name: str | None = None
    pgid: int | None = None

    @classmethod
    def parse(cls, raw: Any) -> GpuProcess | None:
        data = _dict(raw)
        pid = _int(data.get("pid"))
        if pid is None:
            return None
        return cls(pid, _int(data.get("used_mib")), _str(data.get("name")), _int(data.get("pgid")))


@dataclass(frozen=True)
class Gpu:
    """One GPU as the hello lists it (identity) or as a sample gives it (identity and figures)."""

    index: int
    uuid: str | None = None
    name: str | None = None
    compute_capability: str | None = None
    total_mib: int | None = None
    used_mib: int | None = None
    free_mib: int | None = None
    util_pct: int | None = None
    processes: tuple[GpuProcess, ...] = ()
    errors: Mapping[str, str] = field(default_factory=dict)  # field -> why it could not be read

    @classmethod
    def parse(cls, raw: Any, position: int) -> Gpu:
        data = _dict(raw)
        capability = data.get("compute_capability")
        processes = (GpuProcess.parse(p) for p in _list(data.get("processes")))
        index = _int(data.get("index"))
        return cls(
            index=position if index is None else index,
            uuid=_str(data.get("uuid")),
            name=_str(data.get("name")),
            compute_capability=str(capability) if capability not in (None, "") else None,
            total_mib=_int(data.get("total_mib")),
            used_mib=_int(data.get("used_mib")),
            free_mib=_int(data.get("free_mib")),
            util_pct=_int(data.get("util_pct")),
            processes=tuple(p for p in processes if p is not None),
            errors={str(k): str(v) for k, v in _dict(data.get("errors")).items()},
        )


def parse_gpus(raw: Any) -> tuple[Gpu, ...]:
    return tuple(Gpu.parse(item, n) for n, item in enumerate(_list(raw)))


@dataclass(frozen=True)
class Hello:
    """The agent's first message: who and what the host is."""

    agent: str | None = None
    hostname: str | None = None
    python: str | None = None
    pid: int | None = None
    sglang: str | None = None  # the installed SGLang's version; None when it is not installed
    nvml: NvmlSource = NvmlSource()
    gpus: tuple[Gpu, ...] = ()
    boot_time: float | None = None
    clock_ticks: int | None = None

    @classmethod
    def parse(cls, raw: Any) -> Hello:
        data = _dict(raw)
        return cls(
            agent=_str(data.get("agent")),
            hostname=_str(data.get("hostname")),
            python=_str(data.get("python")),
            pid=_int(data.get("pid")),
            sglang=_str(data.get("sglang")) or None,
            nvml=NvmlSource.parse(data.get("nvml")),
            gpus=parse_gpus(data.get("gpus")),
            boot_time=_float(data.get("boot_time")),
            clock_ticks=_int(data.get("clock_ticks")),
        )


@dataclass(frozen=True)
class Rank:
    """A child of an SGLang server: a scheduler (``sglang::scheduler_TP1``) or another helper process."""

    pid: int
    ppid: int | None = None
    pgid: int | None = None
    title: str | None = None  # the process title, ``sglang::scheduler_TP1``
    rank: str | None = None  # ``TP1``, ``DP0 TP1``…; None for a helper that is no rank
    start_time: float | None = None
    cmdline: tuple[str, ...] = ()

    @classmethod
    def parse(cls, raw: Any) -> Rank | None:
        data = _dict(raw)
        pid = _int(data.get("pid"))
        if pid is None:
            return None
        return cls(
            pid=pid,
            ppid=_int(data.get("ppid")),
            pgid=_int(data.get("pgid")),
            title=_str(data.get("title")),
            rank=_str(data.get("rank")),
            start_time=_float(data.get("start_time")),
            cmdline=_strings(data.get("cmdline")),
        )


def parse_ranks(raw: Any) -> tuple[Rank, ...]:
    ranks = (Rank.parse(item) for item in _list(raw))
    return tuple(r for r in ranks if r is not None)


@dataclass(frozen=True)
class Server:
    """An SGLang server process on the host (``launch_server`` or ``sglang serve``) and its ranks."""

    pid: int
    pgid: int | None = None
    sid: int | None = None
    ppid: int | None = None
    start_time: float = 0.0
    cmdline: tuple[str, ...] = ()
    port: int | None = None
    host: str | None = None  # the address it binds
    cwd: str | None = None
    env: Mapping[str, str] | None = None  # CUDA_VISIBLE_DEVICES and SGLANG_*; None: not ours to read
    children: tuple[Rank, ...] = ()

    @classmethod
    def parse(cls, raw: Any) -> Server | None:
        data = _dict(raw)
        pid = _int(data.get("pid"))
        if pid is None:
            return None
        return cls(
            pid=pid,
            pgid=_int(data.get("pgid")),
            sid=_int(data.get("sid")),
            ppid=_int(data.get("ppid")),
            start_time=_float(data.get("start_time")) or 0.0,
            cmdline=_strings(data.get("cmdline")),
            port=_int(data.get("port")),
            host=_str(data.get("host")),
            cwd=_str(data.get("cwd")),
            env=_env(data.get("env")),
            children=parse_ranks(data.get("children")),
        )


def parse_servers(raw: Any) -> tuple[Server, ...]:
    servers = (Server.parse(item) for item in _list(raw))
    return tuple(s for s in servers if s is not None)


@dataclass(frozen=True)
class ServerRecord:
    """The server this console launched or adopted, as the pid file beside the log records it."""

    pid: int
    pgid: int | None = None
    start_time: float | None = None
    argv: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    log: str | None = None
    owner: str | None = None
    time: float | None = None
    adopted: bool = False

    @classmethod
    def parse(cls, raw: Any) -> ServerRecord | None:
        data = _dict(raw)
        pid = _int(data.get("pid"))
        if pid is None:
            return None
        return cls(
            pid=pid,
            pgid=_int(data.get("pgid")),
            start_time=_float(data.get("start_time")),
            argv=_strings(data.get("argv")),
            env=_env(data.get("env")) or {},
            cwd=_str(data.get("cwd")),
            log=_str(data.get("log")),
            owner=_str(data.get("owner")),
            time=_float(data.get("time")),
            adopted=data.get("adopted") is True,
        )


@dataclass(frozen=True)
class ServerExit:
    """A launched, adopted or pid-file server is gone. ``returncode`` only for a server this agent
    started (negative: the signal)."""

    pid: int
    pgid: int | None = None
    returncode: int | None = None
    t: float | None = None

    @classmethod
    def parse(cls, raw: Any) -> ServerExit | None:
        data = _dict(raw)
        pid = _int(data.get("pid"))
        if pid is None:
            return None
        return cls(pid, _int(data.get("pgid")), _int(data.get("returncode")), _float(data.get("t")))

    def words(self) -> str:
        """How it ended, in a few words: "ended by SIGTERM", "exited with code 1", "ended"."""
        code = self.returncode
        if code is None:
            return "ended"
        if code < 0:
            try:
                return f"ended by {signal.Signals(-code).name}"
            except ValueError:
                return f"ended by signal {-code}"
        return f"exited with code {code}"


def _whole(value: Any, missing: int) -> int | None:
    """An int field that may be left out (``missing``); None when it is there and no int."""
    if value is None:
        return missing
    return _int(value)


@dataclass(frozen=True)
class LogChunk:
    """A ``log`` frame: whole lines of the server log, bytes ``offset`` to ``end`` of the file.

    ``size``: the file's size as the agent saw it; ``held``: bytes after ``end`` that wait for their
    newline (a progress bar). ``inode`` is None when the frame does not say (``names_inode`` false) or
    the agent knows no file yet. ``data`` always ends with a newline (the agent sends whole lines; a last
    one without is a long line cut) unless it is empty."""

    offset: int
    end: int
    size: int
    held: int = 0
    inode: int | None = None
    names_inode: bool = False
    data: bytes = b""

    @classmethod
    def parse(cls, raw: Any) -> LogChunk | None:
        """None for a damaged frame (an offset, end or size that is no int): it is not applied."""
        data = _dict(raw)
        offset, end = _whole(data.get("offset"), 0), _whole(data.get("end"), 0)
        if offset is None or end is None:
            return None
        size = _whole(data.get("size"), end)
        if size is None:
            return None
        held = _int(data.get("held"))
        inode = data.get("inode")
        body = data.get("raw")
        if not isinstance(body, bytes):
            text = data.get("data")
            body = ("" if text is None else str(text)).encode()
        if body and not body.endswith(b"\n"):
            body += b"\n"
        return cls(
            offset=offset,
            end=end,
            size=size,
            held=held if held is not None and held > 0 else 0,
            inode=_int(inode),
            names_inode="inode" in data and (inode is None or _int(inode) is not None),
            data=body,
        )


@dataclass(frozen=True)
class LogReset:
    """A ``log_reset`` frame: the file was truncated or replaced, and is followed from its start.
    ``reason``: "truncated", "replaced", "missing", "appeared" (anything else is kept as said)."""

    reason: str = "replaced"
    inode: int | None = None

    @classmethod
    def parse(cls, raw: Any) -> LogReset:
        data = _dict(raw)
        reason = data.get("reason")
        return cls(str(reason) if reason else "replaced", _int(data.get("inode")))


@dataclass(frozen=True)
class Pong:
    """A ``pong`` frame: the answer to the ping with this ``id``."""

    id: int

    @classmethod
    def parse(cls, raw: Any) -> Pong | None:
        request = _int(_dict(raw).get("id"))
        return None if request is None else cls(request)
