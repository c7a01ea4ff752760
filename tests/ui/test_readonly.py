"""`gdnconsole --readonly HOST`: watching someone else's box. No launch, relaunch or stop in the footer,
help or the command palette (nor the form's launch, nor the journal's re-run); their keys do nothing; a
read-only mark in the status bar and the app's sub-title. (The three lists agreeing is test_keymap's.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from gdnconsole.host.journal import Journal
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.screens.dashboard import DashboardScreen
from gdnconsole.ui.screens.flagform import FlagFormScreen
from gdnconsole.ui.screens.journal import JournalScreen
from gdnconsole.ui.widgets.keybar import KeyBar
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, fixed_clock, help_table_text, serving_session, status_text

LAUNCHING = ("Launch", "Relaunch", "Stop server", "Launch this", "Re-run")


def app_on(tmp_path: Path, readonly: bool) -> DashboardApp:
    return DashboardApp(
        [serving_session(tmp_path)], start=False, clock=fixed_clock, readonly=readonly,
        journal_dir=tmp_path / "journal",
    )  # fmt: skip


def shown(app: DashboardApp) -> tuple[set[str], set[str]]:
    """The footer's descriptions and the palette's titles on the current screen."""
    footer = {key.description for key in app.screen.query_one(KeyBar).items()}
    palette = {command.title for command in app.get_system_commands(app.screen)}
    return footer, palette


@pytest.mark.parametrize("readonly", [True, False])
async def test_no_launch_relaunch_or_stop_anywhere(tmp_path: Path, readonly: bool) -> None:
    app = app_on(tmp_path, readonly)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer, palette = shown(app)
        listed = {"Launch", "Relaunch", "Stop server"}
        assert (listed & footer, listed & palette) == ((set(), set()) if readonly else (listed, listed))
        assert ("read-only" in app.sub_title) is readonly
        assert ("◉ read-only" in status_text(app)) is readonly
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        table = help_table_text(app)
        for binding_id in ("dash.launch", "dash.relaunch", "dash.stop", "form.launch", "journal.rerun"):
            assert (binding_id in table) is not readonly, binding_id
        await pilot.press("escape")
        await settle(pilot)
        for key, screen_type, description in (
            ("e", FlagFormScreen, "Launch this"),
            ("j", JournalScreen, "Re-run"),
        ):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, screen_type)
            footer, palette = shown(app)
            assert (description in footer, description in palette) == (not readonly, not readonly)
            app.pop_screen()
            await settle(pilot)


def effects(app: DashboardApp, tmp_path: Path) -> tuple[list[str], list[object]]:
    """What a launch, relaunch or stop would leave for the user to see: a toast on screen (a refusal, a
    progress line; shown only by an app run with ``notifications=True``) and an attempt in the host's
    journal (the journal screen lists them)."""
    toasts = [str(toast.render()) for toast in app.screen.query("Toast")]
    return toasts, list(Journal("ct129", tmp_path / "journal" / "ct129.jsonl").attempts())


async def test_the_launch_keys_do_nothing(tmp_path: Path) -> None:
    app = app_on(tmp_path, readonly=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        for key in ("L", "R", "S"):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, DashboardScreen), key  # no confirmation, no launch
            assert effects(app, tmp_path) == ([], []), key  # no toast, nothing in the journal
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, FlagFormScreen)
        await pilot.press("ctrl+l")  # the form's "launch this"
        await settle(pilot)
        assert isinstance(app.screen, FlagFormScreen) and effects(app, tmp_path) == ([], [])
        app.pop_screen()
        await settle(pilot)
        await pilot.press("j", "r")  # the journal's re-run
        await settle(pilot)
        assert isinstance(app.screen, JournalScreen) and effects(app, tmp_path) == ([], [])


async def test_the_same_launch_key_when_not_read_only_is_seen(tmp_path: Path) -> None:
    """The check above can see a launch key's effect: L on a serving host says a server runs."""
    app = app_on(tmp_path, readonly=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("L")
        await settle(pilot)
        toasts, _attempts = effects(app, tmp_path)
        assert any("a server runs" in toast for toast in toasts), toasts
