"""The key bar: whole keys in the screen's order, the pinned pair at the right edge, a click presses."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.widgets.keybar import KeyBar, KeyItem, fit
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import fixed_clock, serving_session


def item(description: str, key: str = "x", *, pinned: bool = False) -> KeyItem:
    return KeyItem(key, key, description, f"do_{description}", True, pinned)


ITEMS = [
    item("Edit flags", "e"),
    item("Launch", "L"),
    item("Relaunch", "R"),
    item("Stop server", "S"),
    item("Quit", "q", pinned=True),
    item("Help", "?", pinned=True),
    KeyItem("ctrl+p", "^p", "palette", "command_palette", True, True),
]


def test_keys_that_do_not_fit_are_left_out_whole_from_the_end() -> None:
    shown, pinned = fit(ITEMS, 200)
    assert [i.description for i in shown] == ["Edit flags", "Launch", "Relaunch", "Stop server"]
    assert [i.description for i in pinned] == ["Quit", "Help", "palette"]
    # Compact: "q Quit  ? Help" is 14 cells; "e Edit  L Launch  R Relaunch" 28; a gap before the pinned
    shown, pinned = fit(ITEMS, 14 + 2 + 28)
    assert [i.description for i in shown] == ["Edit", "Launch", "Relaunch"]
    assert [i.description for i in pinned] == ["Quit", "Help"]
    shown, pinned = fit(ITEMS, 14 + 2 + 27)
    assert [i.description for i in shown] == ["Edit", "Launch"]


def test_compact_keeps_descriptions_that_would_read_the_same() -> None:
    items = [item("Save", "^s"), item("Save as new", "^n"), item("Copy command", "^o"), *ITEMS[4:]]
    shown, _pinned = fit(items, 50)
    assert [i.description for i in shown] == ["Save", "Save as new", "Copy"]


def test_the_full_form_stays_while_the_screens_own_keys_fit() -> None:
    """A widget's or the app's keys left out do not make the bar compact."""
    items = [*ITEMS[:4], KeyItem("enter", "⏎", "Fold", "fold", True, False, own=False), *ITEMS[4:]]
    shown, pinned = fit(items, 80)
    assert [i.description for i in shown] == ["Edit flags", "Launch", "Relaunch", "Stop server"]
    assert [i.description for i in pinned] == ["Quit", "Help", "palette"]


def test_a_very_narrow_bar_keeps_quit_then_help() -> None:
    shown, pinned = fit(ITEMS, 14)
    assert shown == [] and [i.description for i in pinned] == ["Quit", "Help"]
    shown, pinned = fit(ITEMS, 10)
    assert shown == [] and [i.description for i in pinned] == ["Quit"]
    assert fit(ITEMS, 3) == ([], [])


async def test_at_80_columns_quit_and_journal_show(tmp_path: Path) -> None:
    """They were the first keys left out at 80 columns; quit must always show."""
    app = DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        drawn = [i.description for i in app.dashboard.query_one(KeyBar).drawn]
        assert "Journal" in drawn and drawn[-2:] == ["Quit", "Help"], drawn


async def test_a_click_on_a_key_presses_it(tmp_path: Path) -> None:
    app = DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        bar = app.dashboard.query_one(KeyBar)
        drawn = [i.description for i in bar.drawn]
        assert drawn[:4] == ["Edit flags", "Launch", "Relaunch", "Stop server"], drawn
        assert drawn[-3:] == ["Quit", "Help", "palette"], drawn
        x = next(start for start, _end, key in bar.spans() if key.description == "Help")
        found = bar.key_at(x)
        assert found is not None and found.description == "Help"
        await pilot.click(KeyBar, offset=(x + 1, 0))
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
