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
    item("Help", "?", pinned=True),
    item("palette", "^p", pinned=True),
]


def test_keys_that_do_not_fit_are_left_out_whole_from_the_end() -> None:
    shown, pinned = fit(ITEMS, 200)
    assert [i.description for i in shown] == ["Edit flags", "Launch", "Relaunch", "Stop server"]
    assert [i.description for i in pinned] == ["Help", "palette"]
    # "? Help  ^p palette" is 18 cells; "e Edit flags  L Launch" 22; and a gap before the pinned pair
    shown, pinned = fit(ITEMS, 18 + 2 + 22)
    assert [i.description for i in shown] == ["Edit flags", "Launch"] and len(pinned) == 2
    shown, pinned = fit(ITEMS, 18 + 2 + 21)
    assert [i.description for i in shown] == ["Edit flags"]


def test_a_very_narrow_bar_keeps_help_before_the_palette() -> None:
    shown, pinned = fit(ITEMS, 10)
    assert shown == [] and [i.description for i in pinned] == ["Help"]
    assert fit(ITEMS, 3) == ([], [])


async def test_a_click_on_a_key_presses_it(tmp_path: Path) -> None:
    app = DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        bar = app.dashboard.query_one(KeyBar)
        drawn = [i.description for i in bar.drawn]
        assert drawn[:4] == ["Edit flags", "Launch", "Relaunch", "Stop server"], drawn
        assert drawn[-2:] == ["Help", "palette"], drawn
        x = next(start for start, _end, key in bar.spans() if key.description == "Help")
        found = bar.key_at(x)
        assert found is not None and found.description == "Help"
        await pilot.click(KeyBar, offset=(x + 1, 0))
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
