"""A streamed answer's decode rate as the console measures it over SSH, beside the rate the server decodes at.

The simulated server decodes RATE tokens per second (no speculation: one token a step) behind OpenSSH's
sshd on loopback; the console launches it, waits for VERIFIED, and streams answers through its SSH local
port forward. Prints the median and the spread of the measured rate, ``(n - 1) / (last - first token)``,
and its distance from RATE: what the forward, the agent's link and this machine's load cost the figure
an operator reads. The test of the same path (tests/host/test_prompt_ssh.py) asserts the formula, not the
distance.

    python bench/bench_stream_rate.py
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gdnconsole.chat.client import ChatRequest  # noqa: E402
from gdnconsole.config.hosts import Host, Profile, Simulate, Speculative  # noqa: E402
from gdnconsole.config.hosts import SshTarget as ConfigTarget  # noqa: E402
from gdnconsole.host import launcher  # noqa: E402
from gdnconsole.host.journal import Journal  # noqa: E402
from gdnconsole.host.link import SshTarget  # noqa: E402
from gdnconsole.host.session import HostSession  # noqa: E402
from tests import needs  # noqa: E402
from tests.sshhosts import SshdHost, free_loopback_port, make_sshd_files, start_loopback_sshd  # noqa: E402

RATE = 40.0
ANSWERS = 5


def sim_host(h: SshdHost, home: Path) -> Host:
    table: dict[str, object] = {"speed": 50.0, "release_lag_s": 0.0, "home": str(home), "tokens_per_s": RATE}
    port = free_loopback_port()
    prof = Profile(name="p", model="Qwen/Qwen3.6-27B", tp=2, port=port, speculative=Speculative())
    sim = Simulate(2, "NVIDIA RTX A6000", 49140, "0.5.11", 50.0, True, "ok", table)
    return Host(
        name="benchbox",
        ssh=ConfigTarget(alias=f"{h.user}@{h.host}:{h.port}", user=h.user, hostname=h.host, port=h.port),
        local=False,
        python=sys.executable,
        log="sglang_serve.log",
        profiles={"p": prof},
        simulate=sim,
    )


async def rates(h: SshdHost, work: Path) -> list[float]:
    host = sim_host(h, work / "simhome")
    target = SshTarget(
        host=h.host,
        port=h.port,
        user=h.user,
        known_hosts=h.known_hosts,
        client_keys=(h.client_key,),
        ssh_config=h.ssh_config,
    )
    session = HostSession(host, ssh=target, sample_interval=0.2, backoff=(0.05, 0.1, 0.2))
    runner = asyncio.create_task(session.run())
    journal = Journal(host.name, work / "journal.jsonl")
    pgid: int | None = None
    try:
        if not await session.wait_until(lambda: session.complete and session.pidfile_seen, 60):
            raise RuntimeError(f"the session did not come up: {session.link_message}")
        attempt = await launcher.launch(session, host.profiles["p"], journal=journal)
        if session.launched is not None:
            pgid = session.launched.pgid
        attempt = await launcher.settle(session, attempt, until="verified", timeout=120, journal=journal)
        if attempt.outcome != "verified":
            raise RuntimeError(f"the server was not verified: {attempt.outcome}")
        out: list[float] = []
        client = await session.endpoint.chat_client()
        async with client:
            for i in range(ANSWERS):
                result = await client.chat(
                    ChatRequest(f"Describe the GPU host ({i}).", max_tokens=400), on_delta=lambda f, t: None
                )
                if not result.ok or result.tokens_per_s is None:
                    raise RuntimeError(f"answer {i} failed: {result.error}")
                out.append(result.tokens_per_s)
        return out
    finally:
        if pgid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
        await session.stop()
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner


def main() -> None:
    if not needs.have("sshd"):
        print(f"skipped: {needs.missing_message('sshd')}")
        return
    with tempfile.TemporaryDirectory(prefix="gdn-stream-") as tmp:
        work = Path(tmp)
        daemon, h = start_loopback_sshd(make_sshd_files(work / "sshd"))
        try:
            measured = asyncio.run(rates(h, work))
        finally:
            daemon.stop()
    median = statistics.median(measured)
    off = [abs(r - RATE) / RATE for r in measured]
    print(f"server decodes {RATE:.0f} tok/s; streamed over the SSH forward, {ANSWERS} answers:")
    print(
        f"  measured median {median:.2f} tok/s ({(median - RATE) / RATE:+.1%}), "
        f"range {min(measured):.2f}-{max(measured):.2f}, worst {max(off):.1%} off"
    )


if __name__ == "__main__":
    main()
