"""Log line to screen: from a line appended to a host's log to that line on the dashboard, in a real
terminal. Target: < 50 ms median, < 100 ms p99.

Runs the real `gdnconsole HOST` (this checkout's code) on a local simulated host inside tmux (120x36, a
server of the bench's own), appends uniquely tagged lines to the host's log at seeded random intervals,
and times each one until the console writes it to the terminal, read from tmux's control-mode stream (the
bench wakes on the bytes, it does not poll the screen). `tail -F` of the same file in the same kind of
terminal gives the floor. Prints figures; asserts nothing.

    python bench/bench_log_latency.py [--lines 100]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostsfile import console_argv, console_env, write_hosts
from tmuxterm import Tmux, available

SIZE = (120, 36)
TAG = rb"LAT\d{5}Z"
GAPS_S = (0.1, 0.7)  # between lines: a log that is written now and then, as a server's is once serving
STARTUP_S = 60.0  # for the first line, written while the console starts


def line(number: int) -> tuple[bytes, bytes]:
    tag = f"LAT{number:05d}Z".encode()
    return tag, b"[2026-05-01 12:00:00] " + tag + b" a line from the latency bench\n"


def append(log: Path, data: bytes) -> float:
    """Write ``data`` at the end of ``log`` (one write, closed at once); the time just before it."""
    with log.open("ab") as fh:
        started = time.monotonic()
        fh.write(data)
    return started


def measure(tmux: Tmux, session: str, command: str, log: Path, count: int, seed: int) -> list[float]:
    """Milliseconds from each append to its line's first appearance in the terminal's output."""
    watcher = tmux.control(session, SIZE, command)
    watcher.watch(TAG)
    try:
        tag, data = line(0)
        append(log, data)
        if watcher.wait_for(tag, STARTUP_S) is None:
            raise RuntimeError(f"{session}: the first line never reached the screen")
        time.sleep(2.0)  # links, first samples and first paints are not what is measured
        rng = random.Random(seed)
        out = []
        for number in range(1, count + 1):
            time.sleep(rng.uniform(*GAPS_S))
            tag, data = line(number)
            written = append(log, data)
            shown = watcher.wait_for(tag, 10.0)
            if shown is None:
                raise RuntimeError(f"{session}: line {number} never reached the screen")
            out.append((shown - written) * 1000)
        return out
    finally:
        tmux.run("kill-session", "-t", session, check=False)
        watcher.close()


def figures(ms: list[float]) -> str:
    p99 = statistics.quantiles(ms, n=100, method="inclusive")[98] if len(ms) >= 2 else ms[0]
    return f"median {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms, max {max(ms):.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=100)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    if not available():
        print("tmux is not installed: skipped")
        return
    with tempfile.TemporaryDirectory(prefix="gdn-bench-latency-") as tmp:
        folder = Path(tmp)
        hosts = write_hosts(folder, ["lat"])
        log = folder / "lat" / "serve.log"
        tmux = Tmux("gdnlat")
        try:
            console = tmux.command_line(console_argv(["lat"]), console_env(folder, hosts))
            shown = measure(tmux, "console", console, log, args.lines, args.seed)
            plain = folder / "tail.log"
            plain.write_bytes(b"")
            tail = tmux.command_line(["tail", "-n", "+1", "-F", str(plain)], {})
            floor = measure(tmux, "tail", tail, plain, max(10, args.lines // 5), args.seed)
        finally:
            tmux.close()
    gaps = f"{GAPS_S[0]}-{GAPS_S[1]} s apart"
    print(f"log line → dashboard screen (tmux {SIZE[0]}x{SIZE[1]}, local simulated host), "
          f"{len(shown)} lines {gaps}: {figures(shown)}; target < 50 ms median, < 100 ms p99")  # fmt: skip
    print(f"  for scale, tail -F in the same terminal ({len(floor)} lines): {figures(floor)}")


if __name__ == "__main__":
    main()
