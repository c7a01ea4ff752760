"""Test prompts against a host's server: the one flow that `gdnconsole prompt` and the prompt panel share.

A prompt is sent through the session's client (an SSH local port forward, or directly for a local host,
with the API key of the server's command line), timed, and completed with the server's average accept
length when the answer did not carry its own. Its outcome is evidence about the server: an answer proves
it (VERIFIED), a failure refutes a verified one. The evidence goes to the session's serving state and to
the journal's attempt of the running server, so that another console, `status` included, sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gdnconsole.chat.burst import BurstResult, burst
from gdnconsole.chat.model import ChatRequest, ChatResult, Timeouts
from gdnconsole.host import launcher
from gdnconsole.host.journal import Journal
from gdnconsole.host.session import HostSession

Delta = Callable[[str, str], None]  # (field: "content" or "reasoning_content", text)


@dataclass(frozen=True)
class BurstOutcome:
    result: BurstResult
    accept_length: float | None  # the server's average over the burst (its answers carry none)


async def ask(
    session: HostSession,
    request: ChatRequest,
    *,
    timeouts: Timeouts | None = None,
    on_delta: Delta | None = None,
    journal: Journal | None = None,
) -> ChatResult:
    """One prompt, streamed to ``on_delta`` when the request streams. The server's failures are in the
    result; ChatError only when there is nothing to send it to (no server port known, the link down)."""
    client = await session.endpoint.chat_client(timeouts)
    async with client:
        result = await client.chat(request, on_delta=on_delta if request.stream else None)
        if result.ok and result.accept_length is None:
            average = await client.accept_length()  # this request's own figure is not known
            if average is not None:
                result.accept_length, result.accept_source = average, "server"
    record_evidence(session, result, journal)
    return result


async def ask_burst(
    session: HostSession,
    request: ChatRequest,
    count: int,
    *,
    timeouts: Timeouts | None = None,
    on_result: Callable[[ChatResult], None] | None = None,
    journal: Journal | None = None,
) -> BurstOutcome:
    """``count`` copies of ``request`` at once; ``on_result`` hears each answer as it completes. ChatError
    as for ``ask``."""
    client = await session.endpoint.chat_client(timeouts)
    async with client:
        result = await burst(client, request, count, on_result=on_result)
        average = await client.accept_length() if result.ok else None
    evidence = next((r for r in result.results if r.ok), result.results[0] if result.results else None)
    if evidence is not None:
        record_evidence(session, evidence, journal)
    return BurstOutcome(result, average)


def record_evidence(session: HostSession, result: ChatResult, journal: Journal | None = None) -> None:
    """What an answer (or a failure) says about the server: in the session, then in the journal. A
    console that did not verify the server itself (`gdnconsole prompt`) first takes the journal's word
    for it, so that its failed prompt loses the VERIFIED another console recorded."""
    launcher.recall_verification(session, journal)
    before = session.serving.proof()
    session.endpoint.note_prompt(result)
    if session.serving.proof() != before:
        launcher.record_verification(session, journal)
