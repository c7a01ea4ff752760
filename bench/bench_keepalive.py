"""How long a cut link takes to be noticed: a real sshd in a network namespace, its veth taken down.

Prints, for keepalive every 0.5 s with 2 unanswered probes allowed (ARCHITECTURE.md: about interval ×
(count + 1) = 1.5 s), the median and worst of RUNS cuts:
- asyncssh alone: from the cut to the connection's close;
- the console: from the cut to HostSession saying the link is no longer connected.

The tests assert only that the cut is noticed while the link is down (tests/host/test_session.py,
tests/host/test_sshhosts.py); the seconds are here. Needs root, `ip` and sshd; says so and stops without.

    python bench/bench_keepalive.py
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import asyncssh  # noqa: E402

from gdnconsole.config.hosts import Host  # noqa: E402
from gdnconsole.config.hosts import SshTarget as ConfigTarget  # noqa: E402
from gdnconsole.host.link import LinkState, SshTarget  # noqa: E402
from gdnconsole.host.session import HostSession  # noqa: E402
from tests import needs  # noqa: E402
from tests.sshhosts import NetnsHost, netns_sshd  # noqa: E402

RUNS = 5
INTERVAL_S = 0.5
COUNT_MAX = 2


async def raw_cut(h: NetnsHost) -> float:
    conn = await asyncssh.connect(
        **h.connect_options(keepalive_interval=INTERVAL_S, keepalive_count_max=COUNT_MAX)
    )
    try:
        h.link_down()
        cut = time.perf_counter()
        await asyncio.wait_for(conn.wait_closed(), 60)
        return time.perf_counter() - cut
    finally:
        conn.abort()
        h.link_up()


async def session_cuts(h: NetnsHost, workdir: Path) -> list[float]:
    (workdir / "sglang_serve.log").write_text("[2026-11-30 10:00:00] before\n")
    host = Host(
        name="bench",
        ssh=ConfigTarget(alias="bench", user=h.user, hostname=h.host, port=h.port),
        local=False,
        python=sys.executable,
        workdir=str(workdir),
        log="sglang_serve.log",
    )
    target = SshTarget(
        host=h.host,
        port=h.port,
        user=h.user,
        known_hosts=h.known_hosts,
        client_keys=(h.client_key,),
        ssh_config=h.ssh_config,
        keepalive_interval=INTERVAL_S,
        keepalive_count_max=COUNT_MAX,
    )
    session = HostSession(host, ssh=target, sample_interval=0.2, backoff=(0.05, 0.1, 0.2))
    runner = asyncio.create_task(session.run())
    noticed: list[float] = []
    try:
        for _ in range(RUNS):
            if not await session.wait_until(lambda: session.link is LinkState.CONNECTED, 60):
                raise RuntimeError(f"the session did not connect: {session.link_message}")
            h.link_down()
            cut = time.perf_counter()
            try:
                if not await session.wait_until(lambda: session.link is not LinkState.CONNECTED, 60):
                    raise RuntimeError("the cut was not noticed within 60 s")
                noticed.append(time.perf_counter() - cut)
            finally:
                h.link_up()
    finally:
        await session.stop()
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
    return noticed


def line(name: str, values: list[float]) -> str:
    median, worst = statistics.median(values), max(values)
    return f"{name:<24} median {median:5.2f} s, worst {worst:5.2f} s ({len(values)} cuts)"


def main() -> None:
    missing = [tool for tool in ("ip", "sshd") if not needs.have(tool)]
    if os.geteuid() != 0 or missing:
        why = f"{', '.join(missing)} missing" if missing else "not root"
        print(f"skipped: network namespaces need root, `ip` and sshd ({why})")
        return
    expected = INTERVAL_S * (COUNT_MAX + 1)
    print(f"keepalive every {INTERVAL_S} s, {COUNT_MAX} unanswered allowed: expected about {expected:.1f} s")
    with tempfile.TemporaryDirectory(prefix="gdn-keepalive-") as tmp:
        work = Path(tmp)
        with netns_sshd(work / "netns") as h:
            raw = [asyncio.run(raw_cut(h)) for _ in range(RUNS)]
            console = asyncio.run(session_cuts(h, work))
    print(line("asyncssh, cut -> closed", raw))
    print(line("console, cut -> not up", console))


if __name__ == "__main__":
    main()
