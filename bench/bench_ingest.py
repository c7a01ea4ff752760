"""The console reading a host's log over SSH, on a real sshd on loopback.

Prints:
- lines/s and MB/s the console ingests (HostSession following the log from byte 0 until caught up),
  beside `ssh host cat FILE` through the same sshd as the ceiling;
- the time from a stage line written on the host to the stage change in the session (median of 20);
- the console's peak memory (RSS) after ingesting the whole log (10 million lines by default).

    python bench/bench_ingest.py [--lines 10000000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gdnconsole.config.hosts import Host  # noqa: E402
from gdnconsole.config.hosts import SshTarget as ConfigTarget  # noqa: E402
from gdnconsole.host.link import SshTarget  # noqa: E402
from gdnconsole.host.session import HostSession  # noqa: E402
from gdnconsole.sglang.stages import Stage  # noqa: E402
from tests.sshhosts import SshdHost, make_sshd_files, start_loopback_sshd  # noqa: E402

DECODE = (
    "[2026-11-30 10:00:{s:02d} TP0] Decode batch, #running-req: 12, #full token: 21312, "
    "full token usage: 0.01, mamba num: 8, mamba usage: 0.05, accept len: 1.86, accept rate: 0.86, "
    "cuda graph: True, gen throughput (token/s): 551.63, #queue-req: 0\n"
)
ACCESS = (
    '[2026-11-30 10:00:{s:02d}] INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
)


def write_log(path: Path, lines: int) -> int:
    block = "".join((ACCESS if i % 10 == 0 else DECODE).format(s=i % 60) for i in range(10_000))
    with path.open("w") as fh:
        fh.write("[2026-11-30 09:59:00] server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B')\n")
        for _ in range(lines // 10_000):
            fh.write(block)
    return path.stat().st_size


def ceiling(host: SshdHost, path: Path) -> float:
    argv = host.ssh_argv("cat", str(path))
    start = time.perf_counter()
    with subprocess.Popen(argv, stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        while proc.stdout.read(1 << 20):
            pass
    return time.perf_counter() - start


async def ingest(h: SshdHost, workdir: Path, log: Path, size: int) -> tuple[float, list[float]]:
    host = Host(
        name="bench",
        ssh=ConfigTarget(alias="bench", user=h.user, hostname=h.host, port=h.port),
        local=False,
        python=sys.executable,
        workdir=str(workdir),
        log=log.name,
    )
    target = SshTarget(
        host=h.host,
        port=h.port,
        user=h.user,
        known_hosts=h.known_hosts,
        client_keys=(h.client_key,),
        ssh_config=h.ssh_config,
    )
    session = HostSession(host, ssh=target, sample_interval=1.0)
    runner = asyncio.create_task(session.run())
    start = time.perf_counter()
    await session.wait_until(lambda: session.log.seen and session.log.offset >= size, 3600)
    elapsed = time.perf_counter() - start
    latencies = []
    for i in range(20):
        # A relaunch appended to the log: a new startup whose first stage line must show at once.
        before = len(session.log.tracker.startups)
        written = time.perf_counter()
        with log.open("a") as fh:
            fh.write(
                f"[2026-11-30 11:00:{i:02d}] server_args=ServerArgs(model_path='x')\n"
                f"[2026-11-30 11:00:{i:02d} TP0] Load weight begin. avail mem=46.93 GB\n"
            )

        def loading(b: int = before) -> bool:
            startup = session.log.tracker.current
            return (
                len(session.log.tracker.startups) > b
                and startup is not None
                and startup.stage is Stage.LOADING
            )

        assert await session.wait_until(loading, 10)
        latencies.append(time.perf_counter() - written)
    await session.stop()
    runner.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await runner
    return elapsed, latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=10_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gdn-ingest-") as tmp:
        work = Path(tmp)
        log = work / "sglang_serve.log"
        size = write_log(log, args.lines)
        daemon, host = start_loopback_sshd(make_sshd_files(work / "sshd"))
        try:
            t_cat = min(ceiling(host, log) for _ in range(2))
            elapsed, latencies = asyncio.run(ingest(host, work, log, size))
        finally:
            daemon.stop()
    mb = size / 2**20
    lines = args.lines + 1
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"log: {lines:,} lines, {mb:.0f} MiB")
    print(f"ceiling, ssh cat:   {mb / t_cat:7.1f} MiB/s  ({t_cat:.2f} s)")
    print(
        f"console ingest:     {mb / elapsed:7.1f} MiB/s  ({elapsed:.2f} s, {lines / elapsed:,.0f} lines/s)"
        f"  = {t_cat / elapsed:.0%} of the ceiling (target >= 50%)"
    )
    print(
        f"line written -> stage change: median {statistics.median(latencies) * 1000:.0f} ms, "
        f"max {max(latencies) * 1000:.0f} ms (target < 100 ms)"
    )
    print(f"console peak RSS after {lines:,} lines: {peak:.0f} MiB (target < 200 MB)")


if __name__ == "__main__":
    main()
