"""After a sweep from the dashboard, the tune screen says that no server runs and offers, on one key, to
relaunch what ran before it; the help screen has the tune screen's keys, from the same bindings."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.screens.dashboard import DashboardScreen
from gdnconsole.ui.screens.tune import TuneScreen
from tests.host.launchkit import alive, launch_host
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, help_table_text, on_screen, until
from tests.ui.form_helpers import form_app, form_session, hosts_file
from tests.ui.test_launch_keys import connect, launch_ready, launching, session_of
from tests.ui.test_tune_screen import FAST, fill


async def test_the_end_of_a_sweep_offers_what_ran_before(tmp_path: Path) -> None:
    host = launch_host(tmp_path, tokens_per_s=FAST["tokens_per_s"])
    async with launching(tmp_path, host) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        session = session_of(app)
        before = await launch_ready(pilot, app)
        argv = session.launched.argv if session.launched else ()
        await pilot.press("u")
        assert await until(pilot, lambda: on_screen(app, TuneScreen))
        screen = app.screen
        assert isinstance(screen, TuneScreen)
        await fill(pilot, screen, "num_steps=1 eagle_topk=1 num_draft_tokens=2")
        assert await until(pilot, lambda: on_screen(app, "confirm-tune-run"))
        await pilot.press("y")
        assert await until(pilot, lambda: screen.ended, 90)
        assert not alive(before) and not session.launched_alive
        assert "no server runs now" in screen.last_message
        assert f"ctrl+l relaunches {screen.profile.name} as it ran before" in screen.last_message
        assert screen.check_action("relaunch", ()) is True
        await pilot.press("ctrl+l")
        assert await until(pilot, lambda: on_screen(app, DashboardScreen), 10)
        assert await until(pilot, lambda: session.launched_alive and session.launched_pid != before, 60)
        assert session.launched is not None and session.launched.argv[1:] == argv[1:]  # as it ran before


async def test_a_sweep_with_nothing_running_before_offers_no_relaunch(tmp_path: Path) -> None:
    host = launch_host(tmp_path, tokens_per_s=FAST["tokens_per_s"])
    async with launching(tmp_path, host) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        await pilot.press("u")
        assert await until(pilot, lambda: on_screen(app, TuneScreen))
        screen = app.screen
        assert isinstance(screen, TuneScreen)
        await fill(pilot, screen, "num_steps=1 eagle_topk=1 num_draft_tokens=2")
        assert await until(pilot, lambda: screen.ended, 90)
        assert "no server runs now: the sweep stopped its last one" in screen.last_message
        assert not screen.check_action("relaunch", ())


async def test_the_help_screen_lists_the_tune_screens_keys(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app: DashboardApp = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert await until(pilot, lambda: on_screen(app, HelpScreen), 5)
        text = help_table_text(app)
        assert "tune (u)" in text
        for binding in TuneScreen.BINDINGS:
            assert binding.description in text, binding.description  # type: ignore[union-attr]
