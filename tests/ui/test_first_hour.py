"""What a new operator meets first, on the dashboard: what the command said before the screen opened."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button
from textual.widgets._toast import Toast

from gdnconsole.config import hosts as config_hosts
from gdnconsole.ui import pickedtheme, theme
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.confirm import ConfirmScreen
from gdnconsole.ui.dialogs.filtersearch import FilterScreen, SearchScreen
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.keybar import KeyBar
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, crashed_session, fixed_clock, serving_session


async def test_what_was_said_before_the_screen_opened_is_shown_on_it(tmp_path: Path) -> None:
    """`make demo` with port 30000 taken: the line printed before the alternate screen is on the screen."""
    said = "port 30000 is taken on 127.0.0.1; the demo server uses 41234"
    app = DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock, notices=[said])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        [(message, severity)] = [(n.message, n.severity) for n in app._notifications]
        assert (message, severity) == (said, "warning")


async def test_the_filter_dialog_fits_80x24_and_its_keys_show(tmp_path: Path) -> None:
    """Its buttons were below the screen's edge, and the bar under it listed the dashboard's keys."""
    app = DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, FilterScreen)
        for button in screen.query(Button):
            region = button.region
            assert region.width and region.bottom <= 23 and region.right <= 80, (button.id, region)
        drawn = [item.description for item in screen.query_one(KeyBar).drawn]
        assert "Cancel" in drawn and "Apply" in drawn and "Launch" not in drawn, drawn


async def test_every_dialog_has_its_own_key_bar(tmp_path: Path) -> None:
    app = DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key, dialog in (("question_mark", HelpScreen), ("slash", SearchScreen), ("R", ConfirmScreen)):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, dialog), (key, app.screen)
            bars = app.screen.query(KeyBar)
            assert len(bars) == 1 and bars.first().drawn, key
            await pilot.press("escape")
            await settle(pilot)


async def test_toasts_stay_off_the_last_log_rows_and_with_their_host(tmp_path: Path) -> None:
    """A crash lands on the last log rows, the GPU rows end in their figures: toasts show over the top of
    the log, go with their tab, and are short."""
    sessions = [serving_session(tmp_path), crashed_session(tmp_path)]
    app = DashboardApp(sessions, start=False, clock=fixed_clock)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        app.dashboard.notify("ct129: a long message " * 4, severity="error", timeout=60)
        await settle(pilot)
        [toast] = app.screen.query(Toast)
        view = app.dashboard.host_pane(0).log_pane.view.region
        gpus = app.dashboard.host_pane(0).gpu_panel.region
        assert toast.region.y >= view.y and toast.region.y >= gpus.bottom, (toast.region, view, gpus)
        assert toast.region.bottom <= view.bottom - 4, (toast.region, view)  # the top rows, not the last
        [notification] = app._notifications
        assert notification.timeout <= 12
        await pilot.press("2")
        await settle(pilot)
        assert not list(app._notifications) and not app.screen.query(Toast)


async def test_a_theme_picked_while_running_is_remembered(tmp_path: Path) -> None:
    picked: list[str] = []
    app = DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock)
    app.remember = picked.append
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.theme = "gdn-light"  # what the palette's "Change theme" does
        await settle(pilot)
    assert picked == ["gdn-light"]


def test_the_next_start_opens_in_the_picked_theme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pick wins over [console] theme until the file's setting changes; --theme wins for one run."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    plain = config_hosts.load(tmp_path / "none.toml")
    assert theme.select(None, plain) == "gdn-dark"
    pickedtheme.remember("gdn-light", over=None)
    assert theme.select(None, plain) == "gdn-light"
    assert theme.select("gdn-high-contrast", plain) == "gdn-high-contrast"
    configured = tmp_path / "hosts.toml"
    configured.write_text('[console]\ntheme = "gdn-high-contrast"\n')
    cfg = config_hosts.load(configured)
    assert theme.select(None, cfg) == "gdn-high-contrast"  # the file changed after the pick
    pickedtheme.remember("gdn-dark", over="gdn-high-contrast")
    assert theme.select(None, cfg) == "gdn-dark"
