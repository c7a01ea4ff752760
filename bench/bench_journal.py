"""The launch journal at 100k attempts: what a launch spends on it, and how soon `j` shows its rows.

A journal of ATTEMPTS attempts (three lines each, as a launch writes them: "starting", "running" with
its pid, and how it ended) is written to a temporary folder. Then, in a fresh process each time:

- the launch path: what `gdnconsole launch` asks of the journal (the next number and the diff against
  the last attempt, the "running" line, the attempt of the server's pid for its verification, the
  outcome), timed, with the process's peak memory above what it held before;
- a search for a pid no attempt ran (`status` on a server started by hand), through the whole file;
- `j`: the journal screen pushed on a headless app (Textual's test driver, 120x36), timed until its
  table has its rows.

Issue 26 measured 12.8 s and 349 MiB for a launch, and no rows after 20 s for `j`, on such a journal
read whole. tests/host/test_journal.py asserts that the launch path reads back only to the last
attempt's first line, and tests/ui/test_journal_paging.py the screen's pages, not these times.

    python bench/bench_journal.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ATTEMPTS = 100_000
ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", "--tp-size", "2",
        "--host", "127.0.0.1", "--port", "30000", "--speculative-algorithm", "NEXTN",
        "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "2",
        "--mamba-scheduler-strategy", "extra_buffer", "--mem-fraction-static", "0.88"]  # fmt: skip
STAGES = {"starting": 2.0, "distributed": 1.0, "loading": 37.1, "loaded": 1.0, "memory": 1.0, "graphs": 5.9,
          "scheduler_ready": 1.0, "listening": 1.0, "warmup": 1.0, "ready": 1.0}  # fmt: skip
WARNINGS = ["Attention backend not specified. Use flashinfer backend by default.",
            "Max running requests is reset to 48 for speculative decoding."]  # fmt: skip


def write_journal(path: Path, attempts: int = ATTEMPTS) -> None:
    start = time.time() - attempts * 60
    with path.open("w", encoding="utf-8") as fh:
        for n in range(1, attempts + 1):
            base = {"number": n, "time": start + 60 * n, "host": "benchbox", "profile": "final",
                    "argv": [*ARGV, "--cuda-graph-max-bs", str(n % 7 * 32 + 32)],
                    "env": {"SGLANG_ENABLE_SPEC_V2": "1"}, "diff": ["~ --cuda-graph-max-bs 64 → 96"],
                    "id": f"{n:016x}"}  # fmt: skip
            pid = 10_000 + n
            fh.write(json.dumps({**base, "outcome": "starting"}) + "\n")
            fh.write(json.dumps({**base, "outcome": "running", "pid": pid}) + "\n")
            final = {"outcome": "verified" if n % 3 else "crashed", "pid": pid, "stages": STAGES,
                     "stage": "ready", "warnings": WARNINGS,
                     "verify": {"ok": True, "latency_ms": 412.0, "reason": None}}  # fmt: skip
            fh.write(json.dumps({**base, **final}) + "\n")


LAUNCH_PATH = r"""
import resource, sys, time
from pathlib import Path
from gdnconsole.host.journal import Journal
journal = Journal("benchbox", Path(sys.argv[1]), warn=lambda _: None)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
attempt = journal.begin("final", sys.argv[2:], {"SGLANG_ENABLE_SPEC_V2": "1"})  # number and diff
attempt.outcome, attempt.pid = "running", 4242
journal.record(attempt)  # the agent said it runs
found = journal.of_pid(4242)  # record_verification: the attempt of the server that answered
assert found is not None and found.number == attempt.number
attempt.outcome = "verified"
journal.update(attempt)  # settle's outcome
took = time.perf_counter() - started
grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
started = time.perf_counter()
assert journal.of_pid(1) is None  # `status` on a server started by hand: the whole file searched
missed = time.perf_counter() - started
print(f"{took * 1000:.1f} {grew / 1024:.1f} {missed * 1000:.1f}")
"""

J_OPEN = r"""
import asyncio, sys, time
from pathlib import Path
from textual.app import App
from textual.widgets import DataTable
from gdnconsole.host.journal import Journal
from gdnconsole.ui.screens.journal import JournalScreen

class Bench(App[None]):
    pass

async def main() -> None:
    app = Bench()
    async with app.run_test(size=(120, 36)) as pilot:
        journal = Journal("benchbox", Path(sys.argv[1]), warn=lambda _: None)
        started = time.perf_counter()
        screen = JournalScreen(journal, None)
        await app.push_screen(screen)
        table = screen.query_one(DataTable)
        while table.row_count == 0:
            await pilot.pause(0.001)
        await pilot.pause()  # painted
        print(f"{(time.perf_counter() - started) * 1000:.1f} {table.row_count}")

asyncio.run(main())
"""


def fresh(script: str, *args: str) -> list[str]:
    """``script`` run in a fresh interpreter (isolated: the package as installed, not the cwd)."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", script, *args], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_journal: {done.stderr.strip()}")
    return done.stdout.split()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "benchbox.jsonl"
        write_journal(path)
        size = path.stat().st_size / (1 << 20)
        launch = [fresh(LAUNCH_PATH, str(path), *ARGV) for _ in range(3)]
        took = sorted(float(ms) for ms, _, _ in launch)[1]
        grew = max(float(mib) for _, mib, _ in launch)
        missed = sorted(float(ms) for _, _, ms in launch)[1]
        print(f"journal of {ATTEMPTS} attempts ({3 * ATTEMPTS} lines, {size:.0f} MiB)")
        print(f"  launch path: {took:.1f} ms (median of 3), peak memory +{grew:.1f} MiB")
        print(f"  a pid no attempt ran (the whole file searched): {missed:.0f} ms")
        opened = [fresh(J_OPEN, str(path)) for _ in range(3)]
        ms = sorted(float(t) for t, _ in opened)[1]
        print(f"  j: rows on screen after {ms:.0f} ms (median of 3; {opened[0][1]} rows, the newest page)")
        small = Path(folder) / "small.jsonl"
        write_journal(small, 1000)  # the screen's own cost: a page's rows, whatever the journal's size
        ms = sorted(float(fresh(J_OPEN, str(small))[0]) for _ in range(3))[1]
        print(f"  j on a journal of 1000 attempts, for comparison: {ms:.0f} ms")


if __name__ == "__main__":
    main()
