"""The prompt panel (`p`): prompts against a live simulated server, streamed and timed; the reasoning apart
from the answer; errors shown and the panel still usable; cancelling; bursts; history recall; the decode
sparklines; the form's checks; keys in footer, help and palette."""

from __future__ import annotations

import io
import itertools
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.pilot import Pilot
from textual.theme import Theme
from textual.widgets import DataTable, Input, Static

from gdnconsole.chat.client import ChatRequest, ChatResult
from gdnconsole.config.hosts import Host
from gdnconsole.host.prompthistory import PromptHistory
from gdnconsole.host.session import HostSession
from gdnconsole.ui import tones
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.screens.promptpanel import PromptScreen
from gdnconsole.ui.widgets.promptform import PRESET_BY_NAME, PromptBox
from tests.host import test_session
from tests.host.launchkit import set_scenario
from tests.host.test_session import sim_host, sim_server
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, dashboard, on_screen, serving_session, session_for, until
from tests.ui.test_dashboard_snapshots import fixed_app

__all__ = ["sim_server"]  # fixture

SMALL = (80, 24)


@pytest.fixture
def reasoning_server(sim_server: Callable[[Host], Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The simulated server as ct129 runs it, with a reasoning parser (thinking on unless a request says)."""
    args = [*test_session.CT129_ARGS, "--reasoning-parser", "qwen3"]
    monkeypatch.setattr(test_session, "CT129_ARGS", args)
    yield sim_server


def plain(content: object, width: int = 100) -> str:
    """A widget's content (Text or a Rich table) as the terminal shows it."""
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(content)
    return console.export_text()


def shown(screen: PromptScreen, selector: str) -> str:
    return plain(screen.query_one(selector, Static).content)


def words(text: str) -> str:
    """Text compared without the line breaks of its wrapping."""
    return " ".join(text.split())


def panel(app: DashboardApp) -> PromptScreen:
    screen = app.screen
    assert isinstance(screen, PromptScreen), type(screen)
    return screen


async def files_done(pilot: Pilot[None]) -> None:
    """Let the panel's history reads and writes finish (the sessions' own workers run on: no ``settle``)."""
    files = [w for w in pilot.app.workers if w.group.startswith("history-")]
    if files:  # (an empty list would wait for every worker)
        await pilot.app.workers.wait_for_complete(files)
    await pilot.pause()


async def open_panel(pilot: Pilot[None], app: DashboardApp) -> PromptScreen:
    await pilot.press("p")
    assert await until(pilot, lambda: on_screen(app, PromptScreen), 5)
    await files_done(pilot)
    return panel(app)


@asynccontextmanager
async def live(tmp_path: Path, server: Callable[[Host], Any], **table: object) -> AsyncIterator[Any]:
    """The dashboard on a simulated host whose server is up and VERIFIED, with the prompt panel open."""
    host = sim_host(tmp_path, **table)
    server(host)
    session = session_for(host, tmp_path)
    app = dashboard(session)
    async with app.run_test(size=SIZE) as pilot:
        verified = await until(pilot, lambda: session.serving.verified is True, 60)
        assert verified, (session.serving, session.link_message)
        screen = await open_panel(pilot, app)
        yield pilot, app, session, screen
        await session.stop()


def paints(screen: PromptScreen) -> list[str]:
    """From now on, every text the answer's box is given, in order, as the terminal shows it."""
    box = screen.query_one("#answer-text", Static)
    texts: list[str] = []
    update = box.update

    def record(content: Any = "", *, layout: bool = True) -> None:
        texts.append(plain(content))
        update(content, layout=layout)

    box.update = record  # type: ignore[method-assign]
    return texts


def send_key(app: DashboardApp, key: str) -> None:
    """A key as the terminal sends it, without waiting as ``pilot.press`` does for the app to go idle
    (which, while an answer streams in, is after the answer has ended)."""
    event = events.Key(key, None)
    event.set_sender(app)
    app.post_message(event)


async def run_done(pilot: Pilot[None], screen: PromptScreen, key: str = "ctrl+r") -> None:
    """Press ``key`` and wait until the request it started has ended (and the history is written)."""
    started = screen.started
    await pilot.press(key)
    assert await until(pilot, lambda: screen.started > started and screen.running is None, 30)
    await files_done(pilot)


async def test_a_typed_prompt_streams_in_with_its_figures(tmp_path: Path, reasoning_server: Any) -> None:
    async with live(tmp_path, reasoning_server, tokens_per_s=10.0) as (pilot, app, session, screen):
        box = screen.form.box
        assert box.has_focus
        box.clear()
        await pilot.press(*"Ping")
        screen.form.thinking = False  # the answer only: reasoning has its own test
        screen.query_one("#pf-max", Input).value = "12"
        painted = paints(screen)
        send_key(app, "ctrl+r")
        assert await until(pilot, lambda: screen.started == 1 and screen.running is None, 30)
        result = screen.answer.result
        assert result is not None and result.ok, result
        # What the screen showed, in order: each text a longer part of the answer, ending with all of it.
        # (Whether a tick fell inside this 1.2 s answer is the machine's business: the partial answer on
        # screen is the next test's event.)
        texts = [words(t) for t in painted if t.strip()]
        assert texts and texts[-1] == words(result.text), texts
        assert all(b.startswith(a) for a, b in itertools.pairwise(texts)), texts
        assert words(shown(screen, "#answer-text")) == words(result.text)
        assert shown(screen, "#answer-status").startswith("✔ answered in ")
        figures = shown(screen, "#answer-figures")
        assert result.ttft_ms is not None and result.tokens_per_s is not None
        assert "TTFT" in figures and tones.ms(result.ttft_ms) in figures, figures
        assert f"{result.tokens_per_s:.1f} tok/s" in figures and tones.ms(result.total_ms) in figures
        assert f"{result.prompt_tokens} in · {result.completion_tokens} out" in figures
        assert result.completion_tokens == 12 and result.finish_reason == "length"
        # The server gives no per-request figure when streaming: the server-wide average, labelled.
        assert result.accept_source == "server" and f"{result.accept_length:.2f} server avg" in figures
        assert session.serving.verified is True  # a good answer keeps the proof
        await files_done(pilot)
        [entry] = PromptHistory(session.host.name).entries()
        assert entry.request["prompt"] == "Ping" and entry.request["max_tokens"] == 12
        assert entry.request["thinking"] is False and entry.result["completion_tokens"] == 12
        box.clear()
        await pilot.press("up")  # on the (only) first line: the prompt just run comes back
        assert box.text == "Ping"


async def test_the_answer_shows_on_screen_while_it_streams_and_esc_keeps_it(
    tmp_path: Path, reasoning_server: Any
) -> None:
    """A slow answer (3 to 8 s): part of it is on screen while the request still runs; esc cancels and
    what came stays, marked cancelled."""
    async with live(tmp_path, reasoning_server, tokens_per_s=5.0) as (pilot, app, session, screen):
        screen.form.thinking = False
        painted = paints(screen)
        send_key(app, "ctrl+r")
        assert await until(pilot, lambda: bool(shown(screen, "#answer-text").strip()), 30)
        assert screen.running is not None and screen.answer.result is None  # still streaming
        assert shown(screen, "#answer-status").startswith("◐ streaming")
        await pilot.press("escape")
        assert await until(pilot, lambda: screen.running is None, 10)
        partial = screen.answer.result
        assert partial is not None and partial.error == "cancelled by the user"
        assert shown(screen, "#answer-status").startswith("■ cancelled after ")
        texts = [words(t) for t in painted if t.strip()]
        assert texts[-1] == words(partial.text) == words(shown(screen, "#answer-text")), texts
        assert all(b.startswith(a) for a, b in itertools.pairwise(texts)), texts
        assert session.serving.verified is True  # cancelling is not a failed answer


async def test_the_reasoning_preset_shows_the_thinking_apart(tmp_path: Path, reasoning_server: Any) -> None:
    async with live(tmp_path, reasoning_server, tokens_per_s=400.0) as (pilot, _app, _session, screen):
        assert screen.form.thinking is None  # the sanity preset leaves the model's default
        await pilot.press("f2", "f2", "f2")  # sanity → long context → code → reasoning
        assert screen.form.preset == "reasoning" and screen.form.thinking is True
        assert screen.form.box.text == PRESET_BY_NAME["reasoning"].prompt
        await run_done(pilot, screen, "f5")
        result = screen.answer.result
        assert result is not None and result.ok and result.reasoning and result.text, result
        assert screen.answer.has_class("-reasoning")
        assert words(shown(screen, "#answer-reasoning")) == words(result.reasoning)
        assert words(shown(screen, "#answer-text")) == words(result.text)
        reasoning_box = screen.query_one("#answer-reasoning-box")
        assert (
            reasoning_box.display and reasoning_box.region.y < screen.query_one("#answer-text-box").region.y
        )
        await pilot.press("ctrl+t")  # on → off: thinking off, no reasoning comes back
        assert screen.form.thinking is False
        await run_done(pilot, screen)
        result = screen.answer.result
        assert result is not None and result.ok and not result.reasoning
        assert not screen.answer.has_class("-reasoning")


async def test_a_failed_answer_shows_its_error_and_the_panel_stays_usable(
    tmp_path: Path, reasoning_server: Any
) -> None:
    async with live(tmp_path, reasoning_server, tokens_per_s=400.0) as (pilot, app, session, screen):
        set_scenario(session.host, chat_fault="drop")  # the connection closes mid-answer
        await run_done(pilot, screen)
        result = screen.answer.result
        assert result is not None and not result.ok and result.error
        status = shown(screen, "#answer-status")
        assert status.startswith("✖ ") and words(result.error) in words(status)
        assert "Traceback" not in status
        assert session.serving.verified is False  # a failed prompt takes VERIFIED away, visibly
        assert "✖ not verified" in shown(screen, "#prompt-head")
        await pilot.press("f2")  # still answering keys
        assert screen.form.preset == "long"
        await pilot.press("f2", "f2", "f2")
        set_scenario(session.host, chat_fault="none")
        await run_done(pilot, screen)
        result = screen.answer.result
        assert result is not None and result.ok, result
        assert await until(pilot, lambda: "✔ verified" in shown(screen, "#prompt-head"), 5)
        assert isinstance(app.screen, PromptScreen)


async def test_a_hanging_request_is_cancelled_with_esc(tmp_path: Path, reasoning_server: Any) -> None:
    async with live(tmp_path, reasoning_server) as (pilot, app, session, screen):
        set_scenario(session.host, chat_fault="hang")  # the server reads the request and says nothing
        await pilot.press("ctrl+r")
        assert await until(pilot, lambda: "waiting for the first token" in shown(screen, "#answer-status"), 5)
        enabled = {b.action for _ns, b, on, _t in screen.active_bindings.values() if on}
        assert "cancel" in enabled and "close" not in enabled  # esc cancels now, it does not close
        await pilot.press("escape")
        assert await until(pilot, lambda: screen.running is None, 10)
        assert shown(screen, "#answer-status").startswith("■ cancelled after ")
        assert isinstance(app.screen, PromptScreen)
        await files_done(pilot)
        [entry] = PromptHistory(session.host.name).entries()
        assert entry.result["error"] == "cancelled by the user"
        set_scenario(session.host, chat_fault="none")
        await pilot.press("escape")  # nothing runs: esc closes the panel
        assert await until(pilot, lambda: not isinstance(app.screen, PromptScreen), 5)


async def test_a_burst_of_four(tmp_path: Path, reasoning_server: Any) -> None:
    async with live(tmp_path, reasoning_server, tokens_per_s=40.0) as (pilot, app, session, screen):
        screen.query_one("#pf-burst", Input).value = "4"
        progress: list[str] = []  # every text the status line is given, in order (no poll can miss one)
        status = screen.query_one("#burst-status", Static)
        update = status.update

        def record(content: Any = "", *, layout: bool = True) -> None:
            progress.append(plain(content))
            update(content, layout=layout)

        status.update = record  # type: ignore[method-assign]
        send_key(app, "ctrl+g")
        assert await until(pilot, lambda: screen.started == 1 and screen.running is None, 30)
        assert screen.has_class("-burst") and not screen.answer.display
        await files_done(pilot)
        assert any(line.startswith("◐ ") and " of 4 done · " in line for line in progress), progress
        burst = screen.burst_view.burst
        assert burst is not None and burst.requests == 4 and len(burst.ok) == 4
        assert shown(screen, "#burst-status").startswith("✔ 4 requests, all answered")
        summary = shown(screen, "#burst-summary")
        assert (
            f"{burst.total_tokens_per_s:.1f} tok/s" in summary
            and f"{burst.completion_tokens:,} out" in summary
        )
        table = screen.query_one("#burst-table", DataTable)
        rows = [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]
        # Four answers: p90 and p99 would be the maximum, so the table says max, and n.
        assert [r[0] for r in rows] == ["p50", "max"]
        assert rows[0][1] == tones.ms(burst.ttft(50)) and rows[1][2] == f"{burst.rate(100):.1f} tok/s"
        assert rows[1][3] == tones.ms(max(r.total_ms for r in burst.ok))
        assert "n = 4 (p90 needs 10, p99 needs 100)" in summary
        [entry] = PromptHistory(session.host.name).entries()
        assert entry.kind == "burst" and entry.result["ok"] == 4


async def test_history_recall_with_up_down_and_alt(tmp_path: Path) -> None:
    history = PromptHistory("ct129")
    for prompt in ("first prompt", "second\nprompt on two lines", "third prompt"):
        history.record_run(ChatRequest(prompt), ChatResult(ok=True))
    app = fixed_app(serving_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_panel(pilot, app)
        box = screen.query_one(PromptBox)
        box.load_text("a draft")
        await pilot.press("up")
        assert box.text == "third prompt" and box.cursor_location == (0, 0)
        await pilot.press("up")
        assert box.text == "second\nprompt on two lines"
        await pilot.press("up")
        assert box.text == "first prompt"
        await pilot.press("up")  # the oldest: the cursor stays, nothing changes
        assert box.text == "first prompt"
        await pilot.press("down")
        assert box.text == "second\nprompt on two lines" and box.cursor_location == (1, 19)
        await pilot.press("up")  # on the last line of two: the cursor moves up, no recall
        assert box.text == "second\nprompt on two lines" and box.cursor_location[0] == 0
        await pilot.press("alt+down", "alt+down")
        assert box.text == "a draft"  # back to what was being typed
        await pilot.press("alt+up")
        assert box.text == "third prompt"


async def test_sparklines_follow_the_decode_points(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    app = fixed_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_panel(pilot, app)
        before = len(session.decode_points)
        lines = [
            f"[2026-11-30 09:10:{k:02d} TP0] Decode batch, #running-req: 1, #full token: 1300, full token "
            f"usage: 0.01, accept len: {1.5 + k / 10:.2f}, accept rate: 0.70, cuda graph: True, gen throughput "
            f"(token/s): {30 + 5 * k:.2f}, #queue-req: 0"
            for k in range(6)
        ]
        data = "".join(line + "\n" for line in lines)
        offset = session.log.offset
        session.handle({"type": "log", "offset": offset, "end": offset + len(data.encode()),
                        "size": offset + len(data.encode()), "inode": 1, "data": data})  # fmt: skip
        await settle(pilot)
        points = list(session.decode_points)
        assert len(points) == before + 6
        spark = screen.query_one("#spark-rate Sparkline")
        assert list(spark.data or []) == [p.gen_throughput for p in points]  # type: ignore[attr-defined]
        accept = screen.query_one("#spark-accept Sparkline")
        assert list(accept.data or [])[-6:] == [1.5, 1.6, 1.7, 1.8, 1.9, 2.0]  # type: ignore[attr-defined]
        rate = " ".join(shown(screen, "#spark-rate .spark-figures").split())
        low = min(p.gen_throughput for p in points)
        assert rate == f"55.0 tok/s min {low:.1f} max {max(p.gen_throughput for p in points):.1f}"
        assert " ".join(shown(screen, "#spark-accept .spark-figures").split()).startswith("2.00 min ")
        assert "last " in str(screen.sparks.border_title)


async def test_form_errors_and_no_endpoint(tmp_path: Path) -> None:
    session = HostSession(Host(name="bare", ssh=None, local=True), mirror=tmp_path / "mirror.log")
    app = fixed_app(session)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = await open_panel(pilot, app)
        screen.query_one("#pf-max", Input).value = "0"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert screen.running is None and screen.query_one("#pf-max", Input).has_focus
        assert screen.query_one("#pf-max").has_class("-invalid")
        screen.query_one("#pf-max", Input).value = ""  # empty: the server's default
        screen.form.box.focus()
        await run_done(pilot, screen)
        status = shown(screen, "#answer-status")
        assert status.startswith("✖ bare has no server and no launch profile: which port?"), status
        assert "no server running" in shown(screen, "#prompt-head")
        assert "no Decode batch lines in the log yet" in shown(screen, "#spark-rate .spark-figures")


async def test_keys_agree_in_footer_help_and_palette(tmp_path: Path) -> None:
    for binding in PromptScreen.BINDINGS:
        assert isinstance(binding, Binding)
        assert binding.id and binding.id.startswith("prompt.") and binding.description
    app = fixed_app(serving_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_panel(pilot, app)
        actions = {b.action for _ns, b, on, _t in screen.active_bindings.values() if on}
        assert {"run", "burst", "thinking", "next_preset", "close", "help"} <= actions
        assert "cancel" not in actions  # nothing runs
        from gdnconsole.ui.commands import binding_commands

        commands = {c.title for c in binding_commands(screen)}
        assert {"Run", "Burst", "Thinking", "Next preset", "Close", "Help"} <= commands
        await pilot.press("f1")
        assert await until(pilot, lambda: on_screen(app, HelpScreen), 5)
        text = plain(app.screen.query_one("#help-table", Static).content, 120)
        for binding in PromptScreen.BINDINGS:
            assert isinstance(binding, Binding) and binding.id in text
        assert "ctrl+r, f5" in text and "alt+up" in text
        await pilot.press("escape", "escape")
        assert await until(pilot, lambda: not isinstance(app.screen, (PromptScreen, HelpScreen)), 5)
        await pilot.press("question_mark")  # the dashboard's help lists the panel's keys too
        assert await until(pilot, lambda: on_screen(app, HelpScreen), 5)
        text = plain(app.screen.query_one("#help-table", Static).content, 120)
        assert "prompt panel (p)" in text and "dash.prompt" in text and "prompt.burst" in text


async def test_an_unstreamed_answer_on_0_5_23_has_its_own_accept_length(
    tmp_path: Path, reasoning_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    renamed = {"--mamba-scheduler-strategy": "--mamba-radix-cache-strategy"}  # the flag's 0.5.23 name
    monkeypatch.setattr(test_session, "CT129_ARGS", [renamed.get(a, a) for a in test_session.CT129_ARGS])
    async with live(tmp_path, reasoning_server, sglang="0.5.23", tokens_per_s=400.0) as (
        pilot,
        _a,
        _s,
        screen,
    ):
        await pilot.click("#pf-stream")  # streaming off: SGLang then returns the request's meta_info
        assert screen.form.request(meta_info=True).return_meta_info
        await run_done(pilot, screen)
        result = screen.answer.result
        assert result is not None and result.ok and result.ttft_ms is None, result
        assert result.accept_source == "request" and result.accept_length is not None
        assert f"{result.accept_length:.2f} this request" in shown(screen, "#answer-figures")
        assert "not streamed" in shown(screen, "#answer-status")


async def test_a_new_theme_repaints_the_figures_in_its_colours(tmp_path: Path) -> None:
    app = fixed_app(serving_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_panel(pilot, app)
        request = screen.form.request()
        screen.answer.begin(request, 0.0)
        screen.answer.finish(ChatResult(ok=True, status=200, total_ms=900.0, text="Hi.", completion_tokens=2))

        def tick_colour() -> str | None:
            content = screen.query_one("#answer-status", Static).content
            assert isinstance(content, Text)
            style = content.spans[0].style
            assert isinstance(style, Style) and style.color is not None
            return style.color.name

        dark = tick_colour()
        assert dark == app.theme_variables["success"].lower()
        app.register_theme(Theme("test-light", primary="#0055AA", success="#007A3D", dark=False))
        app.theme = "test-light"
        await settle(pilot)
        assert tick_colour() == app.theme_variables["success"].lower() != dark  # the new theme's green


def test_percentiles_are_shown_only_where_the_sample_supports_them() -> None:
    from gdnconsole.ui.widgets.burstview import supported

    assert next(n for n in range(1, 200) if supported(90, n)) == 10
    assert next(n for n in range(1, 200) if supported(99, n)) == 100
    assert not supported(50, 1) and supported(50, 2)


async def test_a_sparkline_of_one_point_draws_nothing(tmp_path: Path) -> None:
    """Textual draws a one-value sparkline as a full bar: a trend the log does not have."""
    from textual.widgets import Sparkline

    from gdnconsole.ui.widgets.sparkpanel import SparkRow

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield SparkRow("throughput")

    app = One()
    async with app.run_test() as pilot:
        row = app.query_one(SparkRow)
        row.show([41.2], Text("41.2 tok/s"))
        await pilot.pause()
        assert list(app.query_one(Sparkline).data or []) == []
        row.show([41.2, 44.0], Text("44.0 tok/s"))
        assert list(app.query_one(Sparkline).data or []) == [41.2, 44.0]
