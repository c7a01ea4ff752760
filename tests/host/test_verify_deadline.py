"""The verification's timeout is the whole wait: on a server that reads the request and never answers,
VERIFY FAILED comes when the profile's `verify.timeout` is up, and its message gives the wait as the code
measured it (it once came after 2 min 45 s, saying "30 s")."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from gdnconsole.config.hosts import Verify
from gdnconsole.host import launcher
from gdnconsole.timefmt import span
from tests.host.launchkit import connected, journal_for, launch_host

TIMEOUT_S = 1.0
OUTER_S = 40.0  # far under the 120 s of silence the old client waited while saying TIMEOUT_S


async def test_a_hung_server_fails_verification_after_the_configured_wait(tmp_path: Path) -> None:
    host = launch_host(tmp_path, chat_fault="hang")
    assert host.profile is not None
    quick = dataclasses.replace(host.profile, verify=Verify(prompt="2+2?", max_tokens=4, timeout=TIMEOUT_S))
    host = dataclasses.replace(host, profiles={quick.name: quick})
    journal = journal_for(tmp_path, host)
    async with connected(host) as session:
        attempt = await launcher.relaunch(session, quick, journal=journal)
        assert attempt.outcome == "running", attempt
        # The prober verifies by itself once the log says ready and /health answers.
        failed = await asyncio.wait_for(
            session.wait_until(lambda: session.serving.verified is False, OUTER_S), OUTER_S + 5
        )
        assert failed, (session.serving.reason, session.serving.verifying)
        state = session.serving
        assert state.waited_ms is not None and state.reason is not None
        assert state.reason.startswith("timeout:"), state.reason
        assert f"within {span(state.waited_ms / 1000)}" in state.reason, (state.reason, state.waited_ms)
