"""The log view on a log with one 200 MB line (issue 16): peak memory and the time to quit.

A line is read as its head and tail around a note of its size once it passes 1 MiB, so memory per line is
bounded and no read outlasts a keypress. Runs in a fresh subprocess (its peak RSS is its own), headless
through Textual's ``run_test``; the peak counts the pages of the file the scan maps, which are the page
cache's, not the console's own.

    python bench/bench_giant_line.py [--mb 200]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(path: Path) -> dict[str, float]:
    """In the subprocess: open the view, let it read the file, then quit; the figures."""
    import asyncio
    import resource

    from gdnconsole.ui.screens.logscreen import LogViewApp

    figures: dict[str, float] = {}

    async def run() -> None:
        app = LogViewApp(path, follow=False)
        async with app.run_test(size=(120, 36)) as pilot:
            t0 = time.perf_counter()
            while not app.log_screen.pane.indexed or app.log_screen.pane.busy:
                await pilot.pause(0.05)
            figures["read_s"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            await pilot.press("q")
        figures["quit_s"] = time.perf_counter() - t1
        figures["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    asyncio.run(run())
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the giant line")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "giant.log"
        with log.open("wb") as fh:
            fh.write(b"[2026-11-30 10:00:00] Started server process [1]\n")
            for _ in range(args.mb):
                fh.write(b"x" * (1 << 20))
            fh.write(b"\n[2026-11-30 10:00:01] the line after\n")
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(log)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"log view, one {args.mb} MB line: read in {figures['read_s']:.2f} s")
    print(f"  quit: {figures['quit_s']:.2f} s (issue 16: 60-90 s before)")
    print(f"  peak RSS: {figures['peak_rss_mib']:.0f} MiB (issue 16: 650-1100 MiB before)")


if __name__ == "__main__":
    main()
