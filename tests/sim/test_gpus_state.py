"""GPU memory accounting of the simulated host (gdnsim.gpustate) and the ``gdnsim.hold`` process."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.simmodules import import_sim

if TYPE_CHECKING:
    from tests.conftest import SimHost, SimHostFactory

BASELINE = 4
NO_SUCH_PID = 4_194_305  # above the kernel's largest pid_max (2**22): /proc never has it


gpustate = import_sim("gdnsim.gpustate")

Hold = Callable[..., subprocess.Popen[str]]


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def await_line(proc: subprocess.Popen[str], timeout: float = 10.0) -> str:
    """The next line the process prints, within ``timeout`` seconds."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no output from pid {proc.pid} within {timeout} s"
    return proc.stdout.readline().strip()


@pytest.fixture
def hold() -> Iterator[Hold]:
    """Start ``python -m gdnsim.hold ARGS`` on a host and wait for its ``ready``; killed at teardown."""
    procs: list[subprocess.Popen[str]] = []

    def start(host: SimHost, *args: str) -> subprocess.Popen[str]:
        cmd = [sys.executable, "-m", "gdnsim.hold", *args]
        proc = subprocess.Popen(cmd, env=host.env, stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert await_line(proc) == "ready"
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()  # reaped: /proc/PID is gone (a zombie would count as gone too)


def records(host: SimHost) -> list[str]:
    return sorted(p.name for p in (host.home / "gpus").iterdir())


# --- a holder process -----------------------------------------------------------------------------


def test_hold_raises_used_by_exactly_its_mib_on_its_gpu(sim_host: SimHostFactory, hold: Hold) -> None:
    host = sim_host(gpus=2, gpu_mib=49140)
    state = gpustate.Ledger.at(host.home)
    assert [state.used_mib(0), state.used_mib(1)] == [BASELINE, BASELINE]

    proc = hold(host, "--gpu", "1", "--mib", "25000", "--util", "37")

    assert state.used_mib(1) == BASELINE + 25000
    assert state.free_mib(1) == 49140 - BASELINE - 25000
    assert state.used_mib(0) == BASELINE
    assert state.total_mib(1) == 49140
    assert state.util_pct(1) == 37
    assert state.util_pct(0) == 0
    [holder] = state.holders()
    assert (holder.pid, holder.gpu, holder.used_mib, holder.util_pct, holder.alive) == (
        proc.pid,
        1,
        25000,
        37,
        True,
    )
    assert state.holders(0) == []


def test_killing_the_holder_releases_at_once_with_no_lag(sim_host: SimHostFactory, hold: Hold) -> None:
    host = sim_host(release_lag_s=0)
    state = gpustate.Ledger.at(host.home)
    proc = hold(host, "--gpu", "0", "--mib", "1000")
    assert state.used_mib(0) == BASELINE + 1000

    stop(proc)

    assert state.used_mib(0) == BASELINE
    assert state.holders() == []
    assert records(host) == []  # the reader removed the record


def test_a_zombie_holder_counts_as_gone(sim_host: SimHostFactory, hold: Hold) -> None:
    host = sim_host(release_lag_s=0)
    state = gpustate.Ledger.at(host.home)
    proc = hold(host, "--gpu", "0", "--mib", "1000")
    proc.kill()
    deadline = time.monotonic() + 10
    while gpustate.proc_start(proc.pid) is not None:  # dead but not reaped: a zombie
        assert time.monotonic() < deadline
    assert state.used_mib(0) == BASELINE
    proc.wait()


def test_memory_stays_held_for_the_release_lag(sim_host: SimHostFactory, hold: Hold) -> None:
    host = sim_host(release_lag_s=2.0)
    clock = FakeClock(1000.0)
    state = gpustate.Ledger.at(host.home, clock)
    proc = hold(host, "--gpu", "0", "--mib", "1000", "--util", "50")
    stop(proc)

    assert state.used_mib(0) == BASELINE + 1000  # first seen gone at 1000.0
    [holder] = state.holders(0)
    assert not holder.alive
    assert state.util_pct(0) == 0  # a gone process computes nothing

    clock.now = 1001.9
    assert state.used_mib(0) == BASELINE + 1000
    clock.now = 1002.0
    assert state.used_mib(0) == BASELINE
    assert records(host) == []


def test_the_first_reader_to_see_a_holder_gone_sets_the_release_time(
    sim_host: SimHostFactory, hold: Hold
) -> None:
    host = sim_host(release_lag_s=2.0)
    early, late = FakeClock(1000.0), FakeClock(1001.5)
    proc = hold(host, "--gpu", "1", "--mib", "500")
    stop(proc)

    assert gpustate.Ledger.at(host.home, early).used_mib(1) == BASELINE + 500
    later_reader = gpustate.Ledger.at(host.home, late)
    assert later_reader.used_mib(1) == BASELINE + 500
    late.now = 1002.0  # 2 s after the first sighting, not after the second
    assert later_reader.used_mib(1) == BASELINE


def test_the_title_becomes_the_process_name(sim_host: SimHostFactory, hold: Hold) -> None:
    host = sim_host()
    proc = hold(host, "--gpu", "0", "--mib", "100", "--title", "sglang::scheduler_TP0")

    cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
    assert cmdline[0] == b"sglang::scheduler_TP0"
    assert Path(f"/proc/{proc.pid}/comm").read_text().strip() == "sglang::schedul"
    [holder] = gpustate.Ledger.at(host.home).holders()
    assert (holder.pid, holder.name) == (proc.pid, "sglang::scheduler_TP0")


def test_several_holders_add_up_and_util_is_the_busiest(sim_host: SimHostFactory, hold: Hold) -> None:
    host = sim_host()
    state = gpustate.Ledger.at(host.home)
    a = hold(host, "--gpu", "0", "--mib", "1000", "--util", "20")
    b = hold(host, "--gpu", "0", "--mib", "2000", "--util", "90")
    hold(host, "--gpu", "1", "--mib", "4000")

    assert state.used_mib(0) == BASELINE + 3000
    assert state.util_pct(0) == 90
    assert [h.pid for h in state.holders(0)] == sorted([a.pid, b.pid])
    stop(b)
    assert state.used_mib(0) == BASELINE + 1000
    assert state.util_pct(0) == 20
    assert state.used_mib(1) == BASELINE + 4000


# --- in-process records ---------------------------------------------------------------------------


def test_report_replaces_this_processs_record_and_zero_frees_it(sim_host: SimHostFactory) -> None:
    host = sim_host()
    state = gpustate.Ledger.at(host.home)
    state.report(0, 1000, 10)
    state.report(0, 3000, 60)
    assert state.used_mib(0) == BASELINE + 3000
    assert [(h.pid, h.used_mib, h.util_pct) for h in state.holders()] == [(os.getpid(), 3000, 60)]
    state.report(0, 0)
    assert state.used_mib(0) == BASELINE
    assert records(host) == []


def test_module_functions_follow_gdnsim_home(
    sim_host: SimHostFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = sim_host(gpus=4, gpu_mib=81559)
    monkeypatch.setenv("GDNSIM_HOME", str(host.home))
    gpustate.report(3, 700, 5)
    assert gpustate.total_mib(3) == 81559
    assert gpustate.used_mib(3) == BASELINE + 700
    assert gpustate.free_mib(3) == 81559 - BASELINE - 700
    assert gpustate.util_pct(3) == 5
    assert [h.gpu for h in gpustate.holders()] == [3]
    gpustate.report(3, 0)


def test_a_gpu_the_host_lacks_is_an_error(sim_host: SimHostFactory) -> None:
    state = gpustate.Ledger.at(sim_host(gpus=2).home)
    with pytest.raises(ValueError, match="no GPU 2"):
        state.report(2, 100)
    with pytest.raises(ValueError):
        state.used_mib(-1)


def test_used_never_exceeds_total(sim_host: SimHostFactory) -> None:
    state = gpustate.Ledger.at(sim_host(gpu_mib=1000).home)
    state.report(0, 5000)
    assert (state.used_mib(0), state.free_mib(0)) == (1000, 0)
    state.report(0, 0)


def test_baseline_can_be_set_in_sim_json(sim_host: SimHostFactory) -> None:
    state = gpustate.Ledger.at(sim_host(gpu_baseline_mib=300).home)
    assert state.used_mib(1) == 300


# --- stale and broken files -----------------------------------------------------------------------


def test_a_reused_pid_is_not_the_holder(sim_host: SimHostFactory) -> None:
    """A record whose pid now belongs to another process (another start time) is stale."""
    host = sim_host(release_lag_s=0)
    state = gpustate.Ledger.at(host.home)
    me = os.getpid()
    state.write_record(me, gpustate.proc_start(me) - 1, 0, 8000, 0, "old-run")
    assert state.used_mib(0) == BASELINE
    assert records(host) == []


def test_a_record_of_a_vanished_pid_is_released(sim_host: SimHostFactory) -> None:
    host = sim_host(release_lag_s=1.0)
    clock = FakeClock()
    state = gpustate.Ledger.at(host.home, clock)
    state.write_record(NO_SUCH_PID, 12345, 1, 8000, 40, "leftover")
    [holder] = state.holders()
    assert (holder.name, holder.alive, holder.used_mib) == ("leftover", False, 8000)
    clock.now += 1.0
    assert state.holders() == []


def test_a_death_nobody_saw_is_dated_by_the_last_heartbeat(sim_host: SimHostFactory) -> None:
    """A holder that died long before anyone looked has already released its memory."""
    host = sim_host(release_lag_s=5.0)
    clock = FakeClock(time.time())
    state = gpustate.Ledger.at(host.home, clock)
    state.write_record(NO_SUCH_PID, 12345, 0, 8000, 0, "crashed-an-hour-ago")
    [name] = records(host)
    path = host.home / "gpus" / name
    hour_ago = clock.now - 3600
    os.utime(path, (hour_ago, hour_ago))
    assert state.used_mib(0) == BASELINE
    # A holder that stopped heartbeating only now is still inside its lag.
    state.write_record(NO_SUCH_PID, 12346, 0, 1000, 0, "just-died")
    assert state.used_mib(0) == BASELINE + 1000


def test_broken_files_are_ignored(sim_host: SimHostFactory) -> None:
    host = sim_host()
    state = gpustate.Ledger.at(host.home)
    state.report(1, 2000)
    gpus = host.home / "gpus"
    me, start = os.getpid(), gpustate.proc_start(os.getpid())
    (gpus / "1-2-gpu1.json").write_text('{"pid": 1, "start": 2, "gpu": 1, "used_')  # half written
    (gpus / "3-4-gpu1.json").write_bytes(b"\xff\xfe\x00garbage")
    (gpus / "5-6-gpu1.json").write_text("[1, 2, 3]")
    (gpus / "7-8-gpu1.json").write_text("")
    bad_types = {"pid": me, "start": start, "gpu": 1, "used_mib": "lots", "util_pct": 0, "name": "x"}
    (gpus / f"{me}-{start}-gpu9.json").write_text(json.dumps(bad_types))
    (gpus / f".{me}-{start}-gpu1.json.99.tmp").write_text('{"pid": ')  # a writer's temporary file
    (gpus / "subdir.json").mkdir()

    assert state.used_mib(1) == BASELINE + 2000
    assert [h.used_mib for h in state.holders()] == [2000]
    state.report(1, 0)


def test_missing_gpus_directory_means_no_holders(sim_host: SimHostFactory) -> None:
    host = sim_host()
    (host.home / "gpus").rmdir()
    state = gpustate.Ledger.at(host.home)
    assert state.holders() == []
    assert state.used_mib(0) == BASELINE
    state.report(0, 10)  # recreates it
    assert state.used_mib(0) == BASELINE + 10
    state.report(0, 0)


def test_readers_never_see_a_half_written_record(sim_host: SimHostFactory) -> None:
    """Two threads rewrite this process's record as fast as they can while a reader reads: every read
    sees a whole record, and no writer trips over the other's temporary file."""
    host = sim_host()
    state = gpustate.Ledger.at(host.home)
    state.report(0, 1000)
    errors: list[BaseException] = []
    seen: set[int] = set()

    def write(mib: int) -> None:
        try:
            for _ in range(200):
                state.report(0, mib)
        except BaseException as exc:  # surfaced below: a thread's exception would be lost
            errors.append(exc)

    writers = [threading.Thread(target=write, args=(mib,)) for mib in (1000, 2000)]
    for writer in writers:
        writer.start()
    while any(w.is_alive() for w in writers):
        seen.add(state.used_mib(0))
    for writer in writers:
        writer.join()
    assert errors == []
    assert seen <= {BASELINE + 1000, BASELINE + 2000}
    assert [p.name for p in (host.home / "gpus").iterdir() if p.name.endswith(".tmp")] == []
    state.report(0, 0)
