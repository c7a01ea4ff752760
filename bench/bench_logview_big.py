"""The log view on 200 MB of Decode batch lines (issue 26): opening it, printing it into a pipe, and
following it while 200 MB arrive at once.

Each case runs in a fresh subprocess (its peak RSS is its own; the pages of the file that the scan maps
are the page cache's, counted there too), the app headless through Textual's ``run_test``:

- open: from creating the app until the index and the tracker's scan are done, then quitting;
- pipe: ``gdnconsole log view FILE > /dev/null`` (plain lines, no screen);
- follow: a view following a small log when 600 MB are appended at once: polls until it shows the last
  line, how many of them, and what it skipped (a backlog past ``SKIP_BYTES`` is skipped, and said).

    python bench/bench_logview_big.py [--mb 200] [--follow-mb 600]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DECODE = (
    "[2026-11-30 09:{m:02d}:{s:02d} TP0] Decode batch, #running-req: {r}, #full token: {f}, "
    "full token usage: 0.{u}, mamba num: {r}, mamba usage: 0.{u}, accept len: 1.{a}, "
    "accept rate: 0.{a}, cuda graph: True, gen throughput (token/s): {g}.12, #queue-req: 0\n"
)


def decode_lines(path: Path, megabytes: int, seed: int = 26) -> None:
    """About ``megabytes`` MiB of realistic Decode batch lines (the 0.5.11 dialect) and nothing else."""
    rng = random.Random(seed)
    block = "".join(
        DECODE.format(
            m=i // 60 % 60,
            s=i % 60,
            r=rng.randint(1, 48),
            f=rng.randint(1000, 80000),
            u=rng.randint(10, 99),
            a=rng.randint(10, 99),
            g=rng.randint(200, 900),
        )
        for i in range(4096)
    ).encode()
    with path.open("ab") as out:
        for _ in range((megabytes << 20) // len(block)):
            out.write(block)


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def open_child(path: Path) -> dict[str, float]:
    """In the subprocess: open the view, wait for the index and the scan, quit."""
    import asyncio

    from gdnconsole.ui.screens.logscreen import LogViewApp

    figures: dict[str, float] = {}

    async def run() -> None:
        t0 = time.perf_counter()
        app = LogViewApp(path, poll_interval=None)
        async with app.run_test(size=(120, 36)) as pilot:
            pane = app.log_screen.pane
            while not pane.indexed or pane.busy:
                await pilot.pause(0.05)
            figures["read_s"] = time.perf_counter() - t0
            figures["lines"] = pane.view.total
            await pilot.press("G")
            await app.workers.wait_for_complete()
            t1 = time.perf_counter()
            await pilot.press("q")
        figures["quit_s"] = time.perf_counter() - t1
        figures["peak_rss_mib"] = peak_mib()

    asyncio.run(run())
    return figures


def follow_child(path: Path, megabytes: int) -> dict[str, float]:
    """In the subprocess: follow a small log, append ``megabytes`` MiB at once, poll until caught up."""
    import asyncio

    from gdnconsole.ui.screens.logscreen import LogViewApp

    figures: dict[str, float] = {}

    async def run() -> None:
        app = LogViewApp(path, follow=True, poll_interval=None)
        async with app.run_test(size=(120, 36)) as pilot:
            pane = app.log_screen.pane
            while not pane.indexed or pane.busy:
                await pilot.pause(0.05)
            decode_lines(path, megabytes)
            size = path.stat().st_size
            t0 = time.perf_counter()
            polls = 0
            while pane.doc.index.end < size or pane.view.total != pane.doc.index.line_count:
                worker = pane.poll()
                assert worker is not None
                await worker.wait()
                await pilot.pause()
                polls += 1
            figures["catch_up_s"] = time.perf_counter() - t0
            figures["polls"] = polls
            figures["skipped_mib"] = sum(s.size for s in pane.skips) / 2**20
            figures["skipped_lines"] = sum(s.lines for s in pane.skips)
            figures["lines"] = pane.view.total
            t1 = time.perf_counter()
            await pilot.press("q")
        figures["quit_s"] = time.perf_counter() - t1
        figures["peak_rss_mib"] = peak_mib()

    asyncio.run(run())
    return figures


def in_child(*args: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=True, cwd=ROOT
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def pipe_figures(path: Path) -> dict[str, float]:
    """`gdnconsole log view FILE > /dev/null`: wall time and the child's peak RSS."""
    gdnconsole = shutil.which("gdnconsole", path=str(Path(sys.executable).parent)) or "gdnconsole"
    t0 = time.perf_counter()
    with open("/dev/null", "wb") as null:
        subprocess.run([gdnconsole, "log", "view", str(path)], stdout=null, check=True)
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=200, help="MiB of decode lines")
    parser.add_argument("--follow-mb", type=int, default=600, help="MiB appended at once to a followed log")
    parser.add_argument("--open-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--follow-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.open_child is not None:
        print(json.dumps(open_child(args.open_child)))
        return
    if args.follow_child is not None:
        print(json.dumps(follow_child(args.follow_child, args.follow_mb)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "decode.log"
        decode_lines(log, args.mb)
        piped = pipe_figures(log)  # first: RUSAGE_CHILDREN's peak is that of every child waited for
        opened = in_child("--open-child", str(log))
        small = Path(tmp) / "followed.log"
        decode_lines(small, 1)
        followed = in_child("--follow-child", str(small), "--follow-mb", str(args.follow_mb))
    print(f"log view, {args.mb} MiB of Decode batch lines ({opened['lines']:,.0f} lines)")
    print(f"  open: index + scan {opened['read_s']:.2f} s, quit {opened['quit_s']:.2f} s")
    print(f"        peak RSS {opened['peak_rss_mib']:.0f} MiB")
    print(f"  pipe: `log view FILE > /dev/null` {piped['wall_s']:.2f} s")
    print(f"        peak RSS {piped['peak_rss_mib']:.0f} MiB")
    print(
        f"  follow, {args.follow_mb} MiB appended at once: caught up in {followed['catch_up_s']:.2f} s "
        f"({followed['polls']:.0f} polls), skipped {followed['skipped_mib']:.0f} MiB "
        f"({followed['skipped_lines']:,.0f} lines), quit {followed['quit_s']:.2f} s"
    )
    print(f"        peak RSS {followed['peak_rss_mib']:.0f} MiB")


if __name__ == "__main__":
    main()
