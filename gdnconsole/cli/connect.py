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
        if not ok or session.link is not LinkState.CONNECTED:
            fail(f"{host.name}: {session.link_message or session.link.value}", EXIT_UNREACHABLE)
        yield session
    finally:
        await session.stop()
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):  # a bug in the session says so itself (run())
            await runner
