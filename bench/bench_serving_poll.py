"""CPU cost of reading a full SGLang 0.5.23 exposition (4 DP ranks) at 1 Hz: ours beside sgtop's (issue 28).

The page: rendered now from the wheel's own collectors (bench/serving_page.py) when the wheel is unpacked
at --wheel, else the copy kept in bench/data/ (made the same way); /v1/loads and /server_info answers from
bench/data/ (load_snapshot.py 0523:196-225; /server_info's fields metricfacts reads). A separate process
(bench/servepage.py) serves them on 127.0.0.1, each /metrics a second later than the last (histograms
growing), so no figure here includes serving. Figures, as CPU seconds per poll and as % of one core at
one poll a second:

- ours, console: ``ServingFeed.take`` of a round holding the three answers, then ``windowed(60)`` and
  ``windowed(300)`` as the serving panel asks, after 300 rounds (the 5-minute window full), in process
  (process_time); beside it the frame's decode (json + ServingRound.parse) the console does first;
- ours, agent: the real agent subprocess (bootstrap command and payload, as the console starts it) with
  the ``serving`` op at interval 1.0, its CPU from /proc schedstat over the rounds its frames count;
- sgtop: ``DirectClient.poll()`` (and with ``snapshot()``, what its screen reads each refresh) on the same
  endpoint back to back after 300 polls (its kept deltas full, as our windows), and sgtop's own loop at
  1 Hz in a subprocess over its first seconds. sgtop's GPU query (nvidia-smi, localgpu.py) is replaced
  by one returning [] in both: our figures leave GPU sampling out too.

Also what each ends up showing: the DP groups it reads from the page. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from bench_agent_cpu import cpu_seconds
from servepage import GrowingPage

from gdnconsole.host import agent
from gdnconsole.host.servingfeed import ServingFeed
from gdnconsole.host.servingpoll import LOADS, METRICS, SERVER_INFO, ServingRound

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
PAGE = DATA / "metrics-0.5.23-dp4.txt"
LOADS_JSON = DATA / "loads-0.5.23-dp4.json"
INFO_JSON = DATA / "server_info-0.5.23-dp4.json"
WARM_ROUNDS = 300  # the 5-minute window full at one poll a second
SGTOP_LOOP = """
import sys, time
import sgtop.direct
sgtop.direct.query_local_gpus = lambda timeout=2.0: []
client = sgtop.direct.DirectClient("127.0.0.1", int(sys.argv[1]))
while True:
    began = time.monotonic()
    client.poll()
    client.snapshot()
    print("polled", flush=True)
    time.sleep(max(0.0, 1.0 - (time.monotonic() - began)))
"""


def the_page(wheel: Path, folder: Path) -> tuple[str, str]:
    """(the page's text, where it came from)."""
    if (wheel / "sglang/srt/observability/metrics_collector.py").exists():
        out = folder / "metrics.txt"
        argv = [sys.executable, str(HERE / "serving_page.py"), "--wheel", str(wheel), "--out", str(out)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return out.read_text(), f"rendered now from the wheel at {wheel}"
        print(f"rendering from {wheel} failed, using the kept page: {done.stderr.strip()[-300:]}")
    return PAGE.read_text(), f"kept page {PAGE.relative_to(HERE.parent)} (no wheel at {wheel})"


@contextlib.contextmanager
def page_server(page: Path) -> Iterator[int]:
    argv = [sys.executable, str(HERE / "servepage.py"), str(page), str(LOADS_JSON), str(INFO_JSON)]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        yield int(server.stdout.readline())
    finally:
        server.kill()
        server.wait(10)


def per_call(fn: Callable[[], object], n: int) -> float:
    """CPU seconds of one call of ``fn``, the mean of ``n`` back to back."""
    began = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - began) / n


def console_side(text: str, n: int) -> tuple[float, float, list[str]]:
    """(CPU s per take + both windows, per frame decode, DP groups shown) after WARM_ROUNDS rounds."""
    grow = GrowingPage(text)
    info, loads = INFO_JSON.read_text(), LOADS_JSON.read_text()
    feed = ServingFeed()

    def frame(i: int) -> str:
        replies = [
            {"path": p, "status": 200, "error": None, "ms": 3.0, "body": b, "truncated": False}
            for p, b in ((METRICS, grow.at(i)), (LOADS, loads), (SERVER_INFO, info))
        ]
        return json.dumps(
            {"type": "serving", "t": 1.8e9 + i, "host": "127.0.0.1", "port": 1, "replies": replies}
        )

    def one(round_: ServingRound) -> None:
        feed.take(round_)
        feed.windowed(60.0)
        feed.windowed(300.0)

    for i in range(WARM_ROUNDS):
        one(decode(frame(i)))
    lines = [frame(WARM_ROUNDS + i) for i in range(n)]
    decode_s = per_call(lambda: decode(lines[0]), n)
    rounds = iter([decode(line) for line in lines])
    take_s = per_call(lambda: one(next(rounds)), n)
    if feed.problem:
        print(f"the feed said: {feed.problem}")
    return take_s, decode_s, [f"DP{r.dp_rank}" for r in feed.figures.ranks] if feed.figures else []


def decode(line: str) -> ServingRound:
    round_ = ServingRound.parse(json.loads(line))
    assert round_ is not None
    return round_


class Lines(Protocol):
    def readline(self) -> object: ...


def timed_rounds(pid: int, lines: Lines, warm: int, rounds: int) -> tuple[float, int]:
    """CPU seconds of ``pid`` per line it writes, over ``rounds`` lines after ``warm`` (start-up)."""
    for _ in range(warm):
        lines.readline()
    own0 = cpu_seconds(pid)[0]
    for _ in range(rounds):
        if not lines.readline():
            raise RuntimeError(f"process {pid} stopped writing")
    return (cpu_seconds(pid)[0] - own0) / rounds, rounds


def agent_side(port: int, rounds: int) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen(
        [sys.executable, *agent.BOOTSTRAP_ARGS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(agent.bootstrap_payload())
        for request in (
            {"op": "hello"},
            {"op": "serving", "host": "127.0.0.1", "port": port, "interval": 1.0},
        ):
            proc.stdin.write((json.dumps(request) + "\n").encode())
        proc.stdin.flush()
        return timed_rounds(proc.pid, ServingFrames(proc.stdout), 3, rounds)[0]
    finally:
        proc.stdin.close()
        proc.wait(10)


class ServingFrames:
    """The agent's stdout, one ``serving`` frame per readline (its other messages skipped)."""

    def __init__(self, stdout: IO[bytes]) -> None:
        self.stdout = stdout

    def readline(self) -> bytes:
        while line := self.stdout.readline():
            if json.loads(line).get("type") == "serving":
                return line
        return b""


def sgtop_in_process(port: int, n: int) -> tuple[float, float, list[str]] | None:
    """(CPU s per poll, per poll + snapshot, the DP groups it shows), or None without sgtop."""
    try:
        import sgtop.direct  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        return None
    sgtop.direct.query_local_gpus = lambda timeout=2.0: []  # GPU sampling is left out of every figure
    client: Any = sgtop.direct.DirectClient("127.0.0.1", port)
    for _ in range(WARM_ROUNDS):  # /get_server_info once; its deltas kept, as ours, to 300 polls
        client.poll()
    poll_s = per_call(client.poll, n)
    both_s = per_call(lambda: (client.poll(), client.snapshot()), n)
    return poll_s, both_s, sorted(client.snapshot()["active"])


def sgtop_loop(port: int, rounds: int) -> float:
    proc = subprocess.Popen([sys.executable, "-c", SGTOP_LOOP, str(port)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        return timed_rounds(proc.pid, proc.stdout, 3, rounds)[0]
    finally:
        proc.kill()
        proc.wait(10)


def row(label: str, seconds: float | None, note: str = "") -> None:
    if seconds is None:
        print(f"{label:<44} {'-':>9} {'-':>13}  {note}")
    else:
        print(f"{label:<44} {seconds * 1000:9.2f} {seconds * 100:12.2f}%  {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wheel", type=Path, default=HERE.parent / "build/sgw/u0.5.23")
    parser.add_argument("--n", type=int, default=100, help="back-to-back calls per in-process figure")
    parser.add_argument("--rounds", type=int, default=15, help="1 Hz rounds per subprocess figure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gdn-bench-serving-") as tmp:
        text, source = the_page(args.wheel, Path(tmp))
        page = Path(tmp) / "page.txt"
        page.write_text(text)
        families = sum(1 for line in text.splitlines() if line.startswith("# TYPE"))
        series = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
        print(f"page: {source}; {len(text.encode()) / 1024:.0f} KiB, {families} families, {series} lines")
        take_s, decode_s, our_groups = console_side(text, args.n)
        with page_server(page) as port:
            agent_s = agent_side(port, args.rounds)
            sg = sgtop_in_process(port, args.n)
            loop_s = sgtop_loop(port, args.rounds) if sg is not None else None
    print("sgtop's GPU query (nvidia-smi) replaced by one returning []: GPU sampling is in no figure")
    print(f"{'':<44} {'ms/poll':>9} {'core at 1 Hz':>13}")
    row("ours, console: take + windowed(60, 300)", take_s, f"after {WARM_ROUNDS} rounds, n={args.n}")
    row("ours, console: frame decode (json, parse)", decode_s, "before take, per frame")
    row("ours, agent: serving op at 1 Hz", agent_s, f"subprocess, {args.rounds} rounds")
    row("ours, all three (agent + decode + take)", agent_s + decode_s + take_s, "two machines' CPU, summed")
    if sg is None:
        print("sgtop not installed (pip install sgtop==0.1.7): its rows are left out")
    row("sgtop: DirectClient.poll()", sg[0] if sg else None, f"after {WARM_ROUNDS} polls, n={args.n}")
    row("sgtop: poll() + snapshot()", sg[1] if sg else None, "what its screen reads each refresh")
    row("sgtop: its poll loop at 1 Hz", loop_s, f"subprocess, its first {args.rounds} s: windows near empty")
    print(f"DP groups shown: ours {len(our_groups)} ({', '.join(our_groups)})", end="")
    if sg is not None:
        print(f'; sgtop {len(sg[2])} ({", ".join(sg[2])}: it keeps tp_rank="0" series only)')
    else:
        print()


if __name__ == "__main__":
    main()
