"""Relaunch latency: from the relaunch key to the new server's process start, beside what the old server
and the GPU driver took (its exit after SIGTERM, and its memory being freed). The rest is our overhead
(checker, agent round trips, polling granularity, fork/exec); the target is under 0.5 s.

Runs a simulated ct129 on this machine (local agent), with the GPU memory release lag of a real driver.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from gdnconsole.config.hosts import Host, Profile, Simulate, Speculative
from gdnconsole.host import launcher
from gdnconsole.host.journal import Journal
from gdnconsole.host.session import HostSession

RUNS = 3
RELEASE_LAG_S = 0.5


def host(home: Path, port: int) -> Host:
    table: dict[str, object] = {"speed": 50.0, "release_lag_s": RELEASE_LAG_S, "home": str(home)}
    prof = Profile(
        name="final",
        model="Qwen/Qwen3.6-27B",
        tp=2,
        port=port,
        speculative=Speculative(algorithm="NEXTN", num_steps=1, eagle_topk=1, num_draft_tokens=2),
        args=("--mamba-scheduler-strategy", "extra_buffer"),
        env={"SGLANG_ENABLE_SPEC_V2": "1"},
    )
    sim = Simulate(2, "NVIDIA RTX A6000", 49140, "0.5.11", 50.0, True, "ok", table)
    return Host(
        name="benchbox", ssh=None, local=True, python=sys.executable, profiles={"final": prof}, simulate=sim
    )


def _launched_group(session: HostSession) -> int:
    record = session.launched
    assert record is not None and record.pgid is not None, "the launched server has no process group"
    return record.pgid


async def one(session: HostSession, journal: Journal) -> tuple[float, float, float]:
    profile = session.host.profiles["final"]
    marks: dict[str, float] = {}

    def heard(topic: str) -> None:
        if topic == "server_exit" and "exit" not in marks:
            marks["exit"] = time.time()
        if topic == "launched" and "exit" in marks:
            marks["started"] = time.time()  # the agent's reply: the new process runs (exec done)

    def said(message: str) -> None:
        if message.startswith("starting"):
            marks["released"] = time.time()

    session.subscribe(heard)
    began = time.time()
    attempt = await launcher.relaunch(session, profile, journal=journal, on_progress=said)
    await launcher.settle(session, attempt, timeout=60, journal=journal)
    session._listeners.remove(heard)
    # Not the pid file's start_time: /proc's boot time is whole seconds, so epochs from it are off by
    # up to a second. The reply's arrival bounds the start from above, so the overhead is not flattered.
    total = marks["started"] - began
    stop = marks["exit"] - began
    free = marks["released"] - marks["exit"]
    return total, stop, free


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        h = host(Path(tmp) / "simhome", port)
        journal = Journal(h.name, Path(tmp) / "journal.jsonl")
        session = HostSession(h, sample_interval=1.0)
        runner = asyncio.create_task(session.run())
        groups: set[int] = set()
        try:
            await session.wait_until(lambda: session.complete and session.pidfile_seen, 30)
            first = await launcher.launch(session, h.profiles["final"], journal=journal)
            await launcher.settle(session, first, timeout=60, journal=journal)
            rows = []
            for _ in range(RUNS):
                groups.add(_launched_group(session))
                rows.append(await one(session, journal))
                groups.add(_launched_group(session))
            total, stop, free = (statistics.median(col) for col in zip(*rows, strict=True))
            overhead = total - stop - free
            print(f"relaunch key -> new server process start: {total:.3f} s (median of {RUNS})")
            print(f"  old server's exit after SIGTERM:          {stop:.3f} s")
            print(f"  its GPU memory freed (driver lag {RELEASE_LAG_S} s):  {free:.3f} s")
            verdict = "ok" if overhead < 0.5 else "OVER TARGET"
            print(
                f"  overhead (ours):                          {overhead:.3f} s  (target < 0.5 s: {verdict})"
            )
        finally:
            for pgid in groups:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, signal.SIGKILL)
            await session.stop()
            runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await runner


if __name__ == "__main__":
    asyncio.run(main())
