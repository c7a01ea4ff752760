"""A connected HostSession for the headless commands that act on a host (launch, stop, prompt)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from gdnconsole.cli.common import EXIT_UNREACHABLE, fail
from gdnconsole.config.hosts import Host
from gdnconsole.host.link import LinkState
from gdnconsole.host.session import HostSession

CONNECT_TIMEOUT_S = 30.0


@contextlib.asynccontextmanager
async def connected(host: Host, *, probe: bool = True) -> AsyncIterator[HostSession]:
    """A session with the whole picture (GPUs, processes, log, pid file); exit 3 when unreachable.

    ``probe``: poll the server's health and verify it once ready (launch --wait verified needs it)."""
    session = HostSession(host, backoff=(CONNECT_TIMEOUT_S,), probe=probe)
    runner = asyncio.create_task(session.run())
    try:
        ok = await session.wait_until(
            lambda: (
                (session.complete and session.pidfile_seen)
                or session.link not in (LinkState.CONNECTING, LinkState.CONNECTED)
            ),
            CONNECT_TIMEOUT_S,
        )
        if session.link is LinkState.CONNECTING:  # still trying: the reason of the last try, if any
            why = f" ({session.link_message})" if session.link_message else ""
            fail(f"{host.name}: not connected within {CONNECT_TIMEOUT_S:g} s{why}", EXIT_UNREACHABLE)
        if session.link is not LinkState.CONNECTED:
            fail(f"{host.name}: {session.link_message or session.link.value}", EXIT_UNREACHABLE)
        if not ok:  # connected, yet something never came: say what, not the link's state
            fail(f"{host.name}: {waited_for(session)} within {CONNECT_TIMEOUT_S:g} s", EXIT_UNREACHABLE)
        yield session
    finally:
        await session.stop()
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):  # a bug in the session says so itself (run())
            await runner


def waited_for(session: HostSession) -> str:
    """What a connected session still lacks of its first picture, in words."""
    log = session.log
    missing = [
        (not session.hello, "the agent's hello"),
        (not session.gpus_seen, "a GPU sample"),
        (not session.processes_seen, "a process scan"),
        (not log.seen, f"word about the log {log.path}"),
        (
            log.seen and not log.caught_up,
            f"the log {log.path} read to its end (byte {log.offset} of {log.size})",
        ),
        (not session.pidfile_seen, "the agent's answer about the pid file beside the log"),
    ]
    named = [what for lacking, what in missing if lacking]
    return "connected, but still waiting for " + (", ".join(named) or "the first picture")
