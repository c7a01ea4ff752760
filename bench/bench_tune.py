"""The tune sweep's own overhead per combination: everything but the server's startup (launch to
VERIFIED), the previous server's stop (its drain and the release of its GPU memory) and the measured
requests: the rules check, the journal and store writes, the agent round trips, the polling granularity.
The target is under one second per combination.

Runs the issue's grid (the baseline and nine combinations, batches 1 and 8) against a simulated ct129 on
this machine (local agent). With eagle_topk 1 SGLang sets num_draft_tokens to num_steps + 1, so the nine
are three servers: the others share their figures and are not launched (nor timed) again. The defaults
are quick; `--speed 4 --tokens-per-s 40 --requests 8 --max-tokens 128` is the issue's "9 combinations
at speed 4" with the tune command's defaults.
"""

from __future__ import annotations

import argparse
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
from gdnconsole.host.journal import Journal
from gdnconsole.host.session import HostSession
from gdnconsole.tune import prompts
from gdnconsole.tune.grid import DEFAULT_GRID, parse_grid
from gdnconsole.tune.measure import Load
from gdnconsole.tune.store import TuneStore
from gdnconsole.tune.sweep import Options, Sweep, run


def host(home: Path, port: int, speed: float, tokens_per_s: float) -> Host:
    table: dict[str, object] = {
        "speed": speed, "release_lag_s": 0.5, "tokens_per_s": tokens_per_s, "home": str(home),
    }  # fmt: skip
    prof = Profile(
        name="final",
        model="Qwen/Qwen3.6-27B",
        tp=2,
        port=port,
        speculative=Speculative(algorithm="NEXTN", num_steps=1, eagle_topk=1, num_draft_tokens=2),
        args=("--mamba-scheduler-strategy", "extra_buffer"),
        env={"SGLANG_ENABLE_SPEC_V2": "1"},
    )
    sim = Simulate(2, "NVIDIA RTX A6000", 49140, "0.5.11", speed, True, "ok", table)
    return Host(
        name="benchbox", ssh=None, local=True, python=sys.executable, profiles={"final": prof}, simulate=sim
    )


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def sweep(args: argparse.Namespace, tmp: Path) -> tuple[Sweep, float]:
    box = host(tmp / "simhome", free_port(), args.speed, args.tokens_per_s)
    load = Load(prompts.load("chat"), (1, 8), args.requests, args.max_tokens)
    options = Options(tuple(parse_grid(DEFAULT_GRID)), load, timeout=600.0)
    session = HostSession(box, sample_interval=0.2)
    runner = asyncio.create_task(session.run())
    groups: set[int] = set()

    def remember(topic: str) -> None:
        record = session.launched
        if topic == "launched" and record is not None and record.pgid is not None:
            groups.add(record.pgid)

    session.subscribe(remember)
    try:
        assert await session.wait_until(lambda: session.complete and session.pidfile_seen, 30)
        began = time.monotonic()
        store, journal = TuneStore(box.name, tmp / "journal"), Journal(box.name, tmp / "journal" / "j.jsonl")
        done = await run(
            session, box.profiles["final"], options, store=store, journal=journal, say=lambda _: None
        )
        return done, time.monotonic() - began
    finally:
        await session.stop()
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
        for pgid in groups:  # the sweep stops its servers; a failed run must not leave one behind
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)


def report(done: Sweep, wall: float, args: argparse.Namespace) -> None:
    print(
        f"sweep of {len(done.combos)} combinations ({len(done.timings) - 1} launched) + baseline "
        f"at speed {args.speed:g}, "
        f"{args.tokens_per_s:g} tok/s, {args.requests} requests × batches 1,8, {args.max_tokens} tokens: "
        f"{wall:.1f} s"
    )
    print(f"{'combination':<12}{'total':>8}{'stop':>8}{'startup':>9}{'requests':>10}{'overhead':>10}")
    for t in done.timings:
        print(
            f"{t.label:<12}{t.total_s:>8.2f}{t.stop_s:>8.2f}{t.startup_s:>9.2f}{t.busy_s:>10.2f}"
            f"{t.overhead_s:>10.3f}"
        )
    overheads = [t.overhead_s for t in done.timings]
    print(
        f"console overhead per combination: median {statistics.median(overheads):.3f} s, "
        f"max {max(overheads):.3f} s (target < 1 s)"
    )
    best = done.best
    if best is not None:
        print(f"best: {best.combo.label} at batch {best.batch}, {best.speedup:.2f}× the baseline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--speed", type=float, default=20.0)
    parser.add_argument("--tokens-per-s", type=float, default=400.0)
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        done, wall = asyncio.run(sweep(args, Path(tmp)))
    report(done, wall, args)


if __name__ == "__main__":
    main()
