"""Helpers for the log view's Pilot tests: a fixture log, an app that does not poll on its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from gdnconsole.ui.screens.logscreen import LogScreen, LogViewApp
from gdnconsole.ui.widgets.logview import LogView
from tests.ui.fixtures import ct129_lines, write_log

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def _steady_text_cursors(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blinking text cursor is drawn or not depending on when a screen is captured (a loaded run once
    caught it off in one screenshot of two): in the UI tests the cursors stay as they start, shown."""
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    monkeypatch.setattr(TextArea, "_toggle_cursor_blink_visible", lambda self: None)


@pytest.fixture
def ct129_log(tmp_path: Path) -> Path:
    return write_log(tmp_path / "sglang_serve.log", ct129_lines())


def make_app(path: Path, *, follow: bool = False) -> LogViewApp:
    # No poll timer: tests call LogScreen.poll() themselves, so nothing depends on wall-clock timing.
    return LogViewApp(path, follow=follow, poll_interval=None)


async def settle(pilot: Pilot[None]) -> None:
    """Let workers finish and the messages they post be handled (a read may start another read, and a
    paint asks for the lines it shows: their read is posted after the paint)."""
    app = pilot.app
    for _ in range(10):
        await app.workers.wait_for_complete()
        await pilot.pause()
        reading = any(view.reading for view in app.screen.query(LogView))
        if not reading and not any(w.is_running for w in app.workers):
            return


def screen_of(app: LogViewApp) -> LogScreen:
    return app.log_screen


def row_texts(app: LogViewApp) -> list[str]:
    """The text of the log view's visible rows, as rendered."""
    view = app.log_screen.view
    return [view.render_line(y).text for y in range(view.size.height)]


def after(*keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A `run_before` for snapshots and screenshots: settle, then press each key and settle again."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before
