"""GPU memory accounting of the simulated host: which process holds how much memory on which GPU.

Every process that holds GPU memory writes one JSON record per GPU under ``$GDNSIM_HOME/gpus/``, named
``PID-START-gpuN.json`` (START: the process's start time from ``/proc/PID/stat``, so that a reused pid is
never taken for the holder). Records are written atomically (temporary file + ``os.replace``), so readers
see either the old record or the new one, never half of one.

A holder counts while ``/proc/PID`` exists with the same start time and is not a zombie. The first reader
that finds it gone writes a ``.gone`` marker holding the moment it died; the memory stays counted until
``release_lag_s`` later (real drivers take a moment to tear a context down), then a reader removes both.
Holders touch their records every ``HEARTBEAT_S`` while alive, so a death that nobody looked at for a
while is dated by the last heartbeat, not by the moment somebody finally noticed.
Many processes read and write at once: a file that vanishes or does not parse is skipped, never fatal.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import gdnsim.config as config

HEARTBEAT_S = 1.0  # how often a live holder touches its records
BASELINE_MIB = 4  # an idle GPU shows a few MiB used (driver context under persistence mode)
BASELINE_KEY = "gpu_baseline_mib"  # optional sim.json key overriding BASELINE_MIB
RECORD_SUFFIX = ".json"
GONE_SUFFIX = ".gone"

Clock = Callable[[], float]


@dataclass(frozen=True)
class Holder:
    """One process holding memory on one GPU, as nvidia-smi and NVML list it."""

    pid: int
    gpu: int
    used_mib: int
    util_pct: int
    name: str  # the holder's cmdline[0] (its process title), else its comm
    alive: bool = True  # False: gone, but its memory is not released yet (release lag)


@dataclass(frozen=True)
class _Record:
    pid: int
    start: int
    gpu: int
    used_mib: int
    util_pct: int
    name: str
    path: Path


# --- /proc ----------------------------------------------------------------------------------------


def proc_start(pid: int) -> int | None:
    """The start time (clock ticks since boot) of a live process; None if it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    # comm (field 2) may hold spaces and parentheses: the fields after it start past the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    try:
        return int(fields[19])
    except ValueError:
        return None


def proc_name(pid: int) -> str | None:
    """What nvidia-smi shows as a process's name: cmdline[0] (a title set by the process), else comm."""
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
        if argv0:
            return argv0.decode(errors="replace")
        return Path(f"/proc/{pid}/comm").read_text().strip() or None
    except OSError:
        return None


# --- what a GPU reports besides memory (one model, shared by pynvml and nvidia-smi) -------------------


def bus_id(gpu: int) -> str:
    return f"00000000:{gpu + 1:02X}:00.0"


def temperature_c(gpu: int, util_pct: int) -> int:
    return 30 + gpu + util_pct // 2


def power_mw(util_pct: int) -> int:
    """About 22 W idle, up to the A6000's 300 W limit under full load."""
    return 22_000 + util_pct * 2_780


def fan_pct(util_pct: int) -> int:
    return 30 + util_pct // 3


# --- the ledger -----------------------------------------------------------------------------------


class Ledger:
    """The GPU state of one simulated host; ``clock`` is injectable so that the release lag can be tested."""

    def __init__(self, root: Path, cfg: config.SimConfig, clock: Clock = time.time) -> None:
        self.root = root
        self.cfg = cfg
        self.clock = clock

    @classmethod
    def at(cls, home: Path, clock: Clock = time.time) -> Ledger:
        """The ledger of the simulated host whose home directory is ``home``."""
        return cls(home / "gpus", config.load(home / "sim.json"), clock)

    @property
    def baseline_mib(self) -> int:
        value = self.cfg.extra.get(BASELINE_KEY, BASELINE_MIB)
        return value if isinstance(value, int) else BASELINE_MIB

    def check_gpu(self, gpu: int) -> None:
        if not 0 <= gpu < self.cfg.gpus:
            raise ValueError(f"no GPU {gpu} on this host (it has {self.cfg.gpus})")

    def uuid(self, gpu: int) -> str:
        """Stable per host and index, shaped like a real one: GPU-8hex-4hex-4hex-4hex-12hex."""
        digest = hashlib.sha256(f"{self.root.parent}:{gpu}".encode()).hexdigest()
        return f"GPU-{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"

    # writing

    def report(self, gpu: int, used_mib: int, util_pct: int = 0) -> None:
        """This process now holds ``used_mib`` on ``gpu``; 0 frees it at once (as cudaFree would)."""
        self.check_gpu(gpu)
        pid = os.getpid()
        start = proc_start(pid)
        if start is None:
            raise RuntimeError(f"cannot read /proc/{pid}/stat")
        if used_mib <= 0:
            _unlink(self._path(pid, start, gpu, RECORD_SUFFIX))
            return
        self.write_record(pid, start, gpu, used_mib, util_pct, proc_name(pid) or "python3")

    def write_record(self, pid: int, start: int, gpu: int, used_mib: int, util_pct: int, name: str) -> None:
        """Write one holder's record atomically (public so that tests can forge stale records)."""
        self.root.mkdir(parents=True, exist_ok=True)
        util = max(0, min(100, int(util_pct)))
        body: dict[str, object] = {"pid": pid, "start": start, "gpu": gpu, "used_mib": int(used_mib)}
        body |= {"util_pct": util, "name": name}
        _write_atomic(self._path(pid, start, gpu, RECORD_SUFFIX), json.dumps(body))

    # reading

    def holders(self, gpu: int | None = None) -> list[Holder]:
        """Every process whose memory still counts, on one GPU or on all, ordered by GPU then pid."""
        found = []
        for record in self._records():
            if gpu is not None and record.gpu != gpu:
                continue
            alive = self._counts(record)
            if alive is None:
                continue
            name = (proc_name(record.pid) if alive else None) or record.name
            found.append(Holder(record.pid, record.gpu, record.used_mib, record.util_pct, name, alive))
        return sorted(found, key=lambda h: (h.gpu, h.pid))

    def total_mib(self, gpu: int) -> int:
        self.check_gpu(gpu)
        return self.cfg.gpu_mib

    def used_mib(self, gpu: int) -> int:
        """Baseline plus every counted holder; never more than the GPU has (a real one cannot overcommit)."""
        total = self.total_mib(gpu)
        return min(total, self.baseline_mib + sum(h.used_mib for h in self.holders(gpu)))

    def free_mib(self, gpu: int) -> int:
        return self.total_mib(gpu) - self.used_mib(gpu)

    def util_pct(self, gpu: int) -> int:
        """Utilisation of a GPU: the busiest of its live holders."""
        self.check_gpu(gpu)
        return max((h.util_pct for h in self.holders(gpu) if h.alive), default=0)

    # internals

    def _path(self, pid: int, start: int, gpu: int, suffix: str) -> Path:
        return self.root / f"{pid}-{start}-gpu{gpu}{suffix}"

    def _records(self) -> Iterator[_Record]:
        try:
            paths = sorted(self.root.glob(f"*{RECORD_SUFFIX}"))
        except OSError:
            return
        for path in paths:
            record = _parse(path)
            if record is not None:
                yield record

    def _counts(self, record: _Record) -> bool | None:
        """True: the holder lives; False: gone but within the release lag; None: released (files removed)."""
        if proc_start(record.pid) == record.start:
            return True
        gone_path = self._path(record.pid, record.start, record.gpu, GONE_SUFFIX)
        lag = self.cfg.release_lag_s
        now = self.clock()
        died = min(now, _mtime(record.path) + 2 * HEARTBEAT_S)
        if lag > 0 and now < self._gone_since(gone_path, died) + lag:
            return False
        _unlink(record.path)
        _unlink(gone_path)
        return None

    @staticmethod
    def _gone_since(gone_path: Path, now: float) -> float:
        """When a reader first saw the holder gone; the first marker written wins."""
        seen = _read_time(gone_path)
        if seen is not None:
            return seen
        tmp = _tmp_path(gone_path)
        try:
            tmp.write_text(repr(now))
            os.link(tmp, gone_path)  # unlike os.replace, fails if another reader got there first
        except FileExistsError:
            seen = _read_time(gone_path)
            return now if seen is None else seen
        except OSError:  # a filesystem without hard links: last writer wins, still atomic
            with contextlib.suppress(OSError):
                os.replace(tmp, gone_path)
        finally:
            _unlink(tmp)
        return now


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return float("inf")


def _read_time(path: Path) -> float | None:
    try:
        return float(path.read_text())
    except (OSError, ValueError):
        return None


def _parse(path: Path) -> _Record | None:
    """A record, or None for a file that vanished, does not parse, or lacks a field."""
    try:
        raw = json.loads(path.read_text())
        record = _Record(
            pid=raw["pid"],
            start=raw["start"],
            gpu=raw["gpu"],
            used_mib=raw["used_mib"],
            util_pct=raw.get("util_pct", 0),
            name=str(raw.get("name", "")),
            path=path,
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    ints = (record.pid, record.start, record.gpu, record.used_mib, record.util_pct)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in ints):
        return None
    return record


def _tmp_path(path: Path) -> Path:
    """A temporary name of this process and thread (threads of one process may write the same record)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def _write_atomic(path: Path, text: str) -> None:
    tmp = _tmp_path(path)
    tmp.write_text(text)
    os.replace(tmp, path)


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


# --- the contract the simulated server and the stand-in tools use ---------------------------------


def ledger(clock: Clock = time.time) -> Ledger:
    """The ledger of the simulated host named by ``$GDNSIM_HOME`` (sim.json is read afresh each time)."""
    return Ledger.at(config.home(), clock)


def report(gpu: int, used_mib: int, util_pct: int = 0) -> None:
    """This process now holds ``used_mib`` on physical GPU ``gpu`` (replaces its previous record there)."""
    ledger().report(gpu, used_mib, util_pct)
    _start_heartbeat()


_heartbeat_started = threading.Event()


def _start_heartbeat() -> None:
    """Touch this process's records every HEARTBEAT_S for as long as it lives (a daemon thread)."""
    if _heartbeat_started.is_set():
        return
    _heartbeat_started.set()
    threading.Thread(target=_heartbeat, args=(config.home() / "gpus", os.getpid()), daemon=True).start()


def _heartbeat(root: Path, pid: int) -> None:
    while True:
        time.sleep(HEARTBEAT_S)
        for path in root.glob(f"{pid}-*{RECORD_SUFFIX}"):
            with contextlib.suppress(OSError):
                os.utime(path)


def free_mib(gpu: int) -> int:
    return ledger().free_mib(gpu)


def used_mib(gpu: int) -> int:
    return ledger().used_mib(gpu)


def total_mib(gpu: int) -> int:
    return ledger().total_mib(gpu)


def util_pct(gpu: int) -> int:
    return ledger().util_pct(gpu)


def holders(gpu: int | None = None) -> list[Holder]:
    return ledger().holders(gpu)
