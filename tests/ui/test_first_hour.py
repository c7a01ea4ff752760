"""What a new operator meets first, on the dashboard: what the command said before the screen opened."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.ui.app import DashboardApp
from tests.ui.dashboard_helpers import SIZE, fixed_clock, serving_session


async def test_what_was_said_before_the_screen_opened_is_shown_on_it(tmp_path: Path) -> None:
    """`make demo` with port 30000 taken: the line printed before the alternate screen is on the screen."""
    said = "port 30000 is taken on 127.0.0.1; the demo server uses 41234"
    app = DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock, notices=[said])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        [(message, severity)] = [(n.message, n.severity) for n in app._notifications]
        assert (message, severity) == (said, "warning")
