"""How the prompt panel looks, mid-stream and with a burst's results, from hand-made results, fixed decode
points and a fixed clock (regenerate with `pytest tests/ui --snapshot-update`)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from gdnconsole.chat.burst import BurstResult
from gdnconsole.chat.client import ChatResult
from gdnconsole.sglang.decodepoints import DecodePoint
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.screens.promptpanel import PromptScreen
from gdnconsole.ui.screens.promptsession import SessionChanged
from gdnconsole.ui.widgets.promptform import PRESET_BY_NAME
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, serving_session
from tests.ui.test_dashboard_snapshots import fixed_app

SnapCompare = Callable[..., bool]
Steps = Callable[[Pilot[Any]], Awaitable[None]]
SMALL = (80, 24)
NOW = 101.42  # the panel's clock: 1.42 s after the request was sent at 100.0

REASONING = (
    "The ball costs x and the bat x + 1.00, so 2x + 1.00 = 1.10 and x = 0.05. "
    "Check: 0.05 + 1.05 = 1.10, and the bat costs exactly 1.00 more. "
)
ANSWER = "The ball costs $0.05 (five cents): the bat costs $1.05,"


def decode_points() -> list[DecodePoint]:
    """Ten minutes of serving: a relaunch with more draft tokens halfway lifts accept length and rate."""
    points = []
    for i in range(120):
        after = i >= 60
        wobble = math.sin(i / 4.0)
        rate = (57.0 if after else 41.0) + 3.0 * wobble + 2.0 * math.sin(i / 1.7)
        accept = (2.31 if after else 1.62) + 0.12 * wobble
        points.append(DecodePoint(time=1000.0 + 5.0 * i, gen_throughput=rate, accept_len=accept, running=1))
    return points


def prompt_app(tmp_path: Path) -> DashboardApp:
    return fixed_app(serving_session(tmp_path))


async def open_panel(pilot: Pilot[Any]) -> PromptScreen:
    """Press p; the panel with the session VERIFIED, the fixed decode points and the fixed clock."""
    await settle(pilot)
    await pilot.press("p")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, PromptScreen)
    screen.clock = lambda: NOW
    screen.form.box.cursor_blink = False  # a blinking cursor would be caught on or off
    session = screen.session
    session.prober.sync()  # the serving state is this server's (as the prober makes it when it runs)
    session.serving.prove(ChatResult(ok=True, total_ms=412.0))
    session.decode_points.clear()
    session.decode_points.extend(decode_points())
    screen.post_message(SessionChanged())
    await settle(pilot)
    return screen


async def streaming(pilot: Pilot[Any]) -> None:
    """The reasoning preset, its thinking streamed, the answer coming in; a request still running."""
    screen = await open_panel(pilot)
    screen.form.apply(PRESET_BY_NAME["reasoning"])
    request = screen.form.request()
    answer = screen.answer
    answer.begin(request, 100.0)
    for word in REASONING.split(" "):
        answer.delta("reasoning_content", word + " ", 100.21)
    for word in ANSWER.split(" "):
        answer.delta("content", word + " ", 101.1)
    screen._start("prompt", screen.run_worker(asyncio.Event().wait(), group="prompt"))  # the request runs
    answer.paint(NOW)
    await pilot.pause()


def ok(ttft: float, total: float, rate: float) -> ChatResult:
    return ChatResult(ok=True, status=200, ttft_ms=ttft, total_ms=total, prompt_tokens=24, completion_tokens=64,
                      tokens_per_s=rate, finish_reason="length")  # fmt: skip


def burst_result() -> BurstResult:
    results = [ok(180.0 + 23.5 * i, 1400.0 + 61.0 * i, 47.5 - 1.3 * i) for i in range(29)]
    results += [ChatResult(error="HTTP 503 Service Unavailable: The server is overloaded")] * 2
    results.append(ChatResult(error="the server closed the connection mid-answer after 12 chunks"))
    return BurstResult(32, 3391.0, results)


async def burst_results(pilot: Pilot[Any]) -> None:
    screen = await open_panel(pilot)
    screen.query_one("#pf-burst").value = "32"  # type: ignore[attr-defined]
    screen.set_class(True, "-burst")
    screen.kind = "burst"
    screen.burst_view.begin(32, 100.0)
    screen.burst_view.show(burst_result(), 1.79)
    await settle(pilot)


def test_prompt_panel_mid_stream(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(prompt_app(tmp_path), terminal_size=SIZE, run_before=streaming)


def test_prompt_panel_mid_stream_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(prompt_app(tmp_path), terminal_size=SMALL, run_before=streaming)


def test_prompt_panel_burst_results(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(prompt_app(tmp_path), terminal_size=SIZE, run_before=burst_results)
