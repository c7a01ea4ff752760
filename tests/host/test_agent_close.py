"""Closing a local agent sees it out however many times the closing task is cancelled (a quitting app
cancels its workers more than once): otherwise the process's transport is left for the garbage collector
to find after the event loop has closed (pytest's "unraisable exception" warning, seen under the tune
screen's tests)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from gdnconsole.host.link import LocalAgent


async def test_a_close_cancelled_again_and_again_still_sees_the_agent_out() -> None:
    agent = await LocalAgent.start(sys.executable, {}, None)
    closing = asyncio.create_task(agent.close())
    for _ in range(3):
        await asyncio.sleep(0)  # let the close reach its next wait
        closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert agent.proc.returncode is not None  # exited, and asyncio saw it exit: its transport is closed
