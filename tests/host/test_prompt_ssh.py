"""Test prompts and VERIFIED against the simulated server behind OpenSSH's sshd (issue 6 §5): the
server binds the host's loopback and is reached through the session's SSH local port forward."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from pathlib import Path

import pytest

from gdnconsole.chat.client import ChatError, ChatRequest, Health
from gdnconsole.cli.status import session_json
from gdnconsole.config.hosts import Speculative
from gdnconsole.host import launcher
from gdnconsole.host.forward import LISTEN_HOST
from gdnconsole.host.journal import Journal
from gdnconsole.host.serving import ProbeTiming
from gdnconsole.host.session import HostSession
from tests.host.launchkit import connected, journal_for, kill_group, launch_host, profile, set_scenario
from tests.host.test_session import FAST_BACKOFF, running, target
from tests.sshhosts import NetnsHost, SshdHost

RATE = 40.0  # the simulator's decode rate for these tests, tokens per second
PLAIN = Speculative()  # no speculation: every decode step is exactly one token at RATE
QUICK = ProbeTiming(backoff=(0.05, 0.1, 0.2), healthy_every=0.2, health_timeout=2.0)


def listening_addresses(port: int) -> set[str]:
    """The local addresses with a TCP socket listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(_address(address))
    return found


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


async def _ready(session: HostSession, journal: Journal, **changes: object) -> int:
    """Launch a profile (with ``changes``) and wait until it is verified; returns its pid."""
    attempt = await launcher.relaunch(session, profile(**changes), journal=journal)
    attempt = await launcher.settle(session, attempt, until="verified", timeout=60, journal=journal)
    assert attempt.outcome == "verified", (attempt.outcome, attempt.verify, attempt.fatal)
    assert attempt.pid is not None
    return attempt.pid


async def test_streamed_and_whole_answers_through_the_forward(tmp_path: Path, sshd: SshdHost) -> None:
    host = launch_host(tmp_path, ssh=sshd, tokens_per_s=RATE)
    journal = journal_for(tmp_path, host)
    async with connected(host, sshd) as session:
        await _ready(session, journal, speculative=PLAIN, args=(), env={})
        # VERIFIED everywhere it shows: the session, status --json, the journal.
        assert session.serving.verified is True and session.serving.latency_ms
        assert session_json(session)["server"]["verified"] is True
        last = journal.attempts()[-1]
        assert last.outcome == "verified" and last.verify and last.verify.ok is True

        client = await session.endpoint.chat_client()
        async with client:
            local = int(client.base_url.rsplit(":", 1)[1])
            seen: list[tuple[str, str]] = []
            streamed = await client.chat(
                ChatRequest("Describe the GPU host.", max_tokens=400),
                on_delta=lambda f, t: seen.append((f, t)),
            )
            whole = await client.chat(ChatRequest("Describe the GPU host.", max_tokens=400, stream=False))
        # The forward listens on this machine's loopback and nowhere else.
        assert listening_addresses(local) == {LISTEN_HOST}
    assert streamed.ok, streamed.error
    assert streamed.status == 200 and streamed.finish_reason == "stop"
    assert streamed.prompt_tokens and streamed.completion_tokens and streamed.completion_tokens >= 16
    assert "".join(t for _, t in seen) == streamed.text and streamed.chunks == len(seen)
    assert streamed.ttft_ms is not None and 0 < streamed.ttft_ms < streamed.total_ms
    # The decode rate is the benchmarks' (n - 1) / (last - first token); how close it comes to the server's
    # own rate over SSH is a figure of bench/bench_stream_rate.py, not a bet on this machine's load.
    decode_s = (streamed.total_ms - streamed.ttft_ms) / 1000.0
    assert streamed.tokens_per_s == pytest.approx((streamed.completion_tokens - 1) / decode_s), streamed
    # The same messages give the same answer (the simulator is deterministic), whole this time.
    assert whole.ok and whole.text == streamed.text and whole.ttft_ms is None
    assert whole.completion_tokens == streamed.completion_tokens


async def test_api_key_is_sent_and_a_wrong_one_is_a_clear_401(tmp_path: Path, sshd: SshdHost) -> None:
    host = launch_host(tmp_path, ssh=sshd)
    journal = journal_for(tmp_path, host)
    async with connected(host, sshd) as session:
        await _ready(
            session, journal, args=("--mamba-scheduler-strategy", "extra_buffer", "--api-key", "s3cret")
        )
        client = await session.endpoint.chat_client()
        assert client.api_key == "s3cret"
        async with client:
            good = await client.chat(ChatRequest("hello", max_tokens=8))
            client.api_key = "wrong"
            await client.aclose()  # a new connection pool with the wrong header
            bad = await client.chat(ChatRequest("hello", max_tokens=8))
    assert good.ok, good.error
    assert (
        not bad.ok and bad.status == 401 and bad.error == "/v1/models answered 401 Unauthorized: Unauthorized"
    )
    # The key is in no journal line and no argv the console shows.
    assert "s3cret" not in journal.path.read_text()
    assert "<redacted:" in " ".join(journal.attempts()[-1].argv)


async def test_each_fault_of_the_chat_endpoint_has_its_message(tmp_path: Path, sshd: SshdHost) -> None:
    host = launch_host(tmp_path, ssh=sshd)
    journal = journal_for(tmp_path, host)
    async with connected(host, sshd) as session:
        await _ready(session, journal)
        client = await session.endpoint.chat_client()
        client.timeouts.answer = 1.0
        messages: dict[str, str | None] = {}
        async with client:
            for fault in ("hang", "drop", "bad-sse", "bad-json"):
                set_scenario(host, chat_fault=fault)
                result = await asyncio.wait_for(
                    client.chat(ChatRequest("hi", stream=fault != "bad-json")), 20
                )
                assert not result.ok
                messages[fault] = result.error
            set_scenario(host, chat_fault="none")
            healthy = await client.chat(ChatRequest("hi"))
    assert messages["hang"] and messages["hang"].startswith("timeout: no answer from")
    assert messages["drop"] and "closed the connection mid-answer" in messages["drop"]
    assert messages["bad-sse"] and messages["bad-sse"].startswith("malformed stream: line")
    assert messages["bad-json"] and messages["bad-json"].startswith("malformed response:")
    assert healthy.ok, healthy.error


async def test_a_failed_prompt_or_health_check_loses_verified(tmp_path: Path, sshd: SshdHost) -> None:
    host = launch_host(tmp_path, ssh=sshd)
    journal = journal_for(tmp_path, host)
    session = HostSession(host, ssh=target(sshd), sample_interval=0.2, backoff=FAST_BACKOFF, probe=QUICK)
    groups: list[int] = []
    try:
        async with running(session):
            assert await session.wait_until(lambda: session.complete and session.pidfile_seen, 30)
            pid = await _ready(session, journal)
            groups.append(pid)
            # A prompt that errors takes VERIFIED away, with the reason.
            set_scenario(host, chat_fault="drop")
            client = await session.endpoint.chat_client()
            async with client:
                failed = await client.chat(ChatRequest("hi"))
            session.endpoint.note_prompt(failed)
            assert session.serving.verified is False
            assert session.serving.reason and session.serving.reason.startswith("a prompt failed:")
            # A good answer proves it again.
            set_scenario(host, chat_fault="none")
            assert (await session.endpoint.verify_now()).ok and session.serving.verified is True
            # The server stops answering /health (its main process is frozen): VERIFIED is lost.
            os.kill(pid, signal.SIGSTOP)
            try:
                lost = await session.wait_until(lambda: session.serving.verified is False, 30)
                assert lost and session.serving.health is Health.ERROR
                assert session.serving.reason and session.serving.reason.startswith("health check failed")
            finally:
                os.kill(pid, signal.SIGCONT)
            # Answering again: health passes, and the verification runs again by itself.
            assert await session.wait_until(lambda: session.serving.verified is True, 30)
    finally:
        for pgid in groups:
            kill_group(pgid)


async def test_the_forward_comes_back_with_the_link(tmp_path: Path, netns_host: NetnsHost) -> None:
    host = launch_host(tmp_path, ssh=netns_host, python="python3")
    journal = journal_for(tmp_path, host)
    ssh = target(netns_host, keepalive_interval=0.2, keepalive_count_max=2)
    session = HostSession(host, ssh=ssh, sample_interval=0.2, backoff=FAST_BACKOFF, probe=QUICK)
    groups: list[int] = []
    try:
        async with running(session):
            assert await session.wait_until(lambda: session.complete and session.pidfile_seen, 30)
            groups.append(await _ready(session, journal))
            first = await session.endpoint.chat_client()
            async with first:
                before = await first.chat(ChatRequest("hi", max_tokens=8))
            assert before.ok, before.error
            netns_host.link_down()
            try:
                assert await session.wait_until(lambda: session.link.value != "connected", 20)
                # While the link is down the endpoint says so at once (nothing hangs).
                with pytest.raises(ChatError, match="the SSH link is not connected"):
                    await session.endpoint.chat_client()
            finally:
                netns_host.link_up()
            assert await session.wait_until(lambda: session.link.value == "connected", 30)
            again = await session.endpoint.chat_client()
            async with again:
                after = await again.chat(ChatRequest("hi", max_tokens=8))
            assert after.ok, after.error
            assert again.base_url == first.base_url  # the same local port as before the drop
            assert listening_addresses(int(again.base_url.rsplit(":", 1)[1])) == {LISTEN_HOST}
    finally:
        for pgid in groups:
            kill_group(pgid)
