"""The dashboard's layout at 80x24, 120x36, 160x40 and 200x50: the timeline grows with the terminal, and
stacked toasts stay few, newest first, the older folded into "+N more", over at most a third of the log."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets._toast import Toast, ToastRack

from gdnconsole.ui.app import DashboardApp
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import fixed_clock, serving_session, until

SIZES = [(80, 24), (120, 36), (160, 40), (200, 50)]


def app_for(tmp_path: Path) -> DashboardApp:
    return DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock)


async def test_the_timeline_grows_with_the_terminal(tmp_path: Path) -> None:
    widths = []
    for size in SIZES[1:]:
        app = app_for(tmp_path / str(size[0]))
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            widths.append(app.dashboard.panes[0].log_pane.timeline.outer_size.width)
    assert widths[0] >= 34 and widths[0] < widths[1] < widths[2], widths  # not ~32 at every width
    assert widths[2] <= 64


def toasts(app: DashboardApp) -> list[str]:
    rack = app.screen.get_child_by_type(ToastRack)
    return [str(toast.render()) for toast in rack.query(Toast)]


@pytest.mark.parametrize("size", SIZES)
async def test_stacked_toasts_stay_few_and_newest_first(tmp_path: Path, size: tuple[int, int]) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(pilot)
        for n in range(1, 7):
            app.notify(f"toast number {n}" + " said at length" * (n % 3), timeout=60)
            await pilot.pause()
        assert await until(pilot, lambda: toasts(app)[:1] == ["toast number 6"], 5), toasts(app)
        shown = toasts(app)
        count = len(shown) - 1
        said = [f"toast number {6 - i}" + " said at length" * ((6 - i) % 3) for i in range(count)]
        assert shown == [*said, f"+{6 - count} more"], shown
        assert 1 <= count <= (1 if size[1] < 30 else 2 if size[1] < 45 else 3)
        rack = app.screen.get_child_by_type(ToastRack)
        log = app.dashboard.panes[0].log_pane.view.region
        covered = sum(holder.outer_size.height for holder in rack.children)
        assert covered <= log.height / 3, (size, covered, log.height)


async def test_a_folded_toast_comes_up_when_a_shown_one_ends(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.notify("old", timeout=60)
        app.notify("new", timeout=60)
        assert await until(pilot, lambda: toasts(app) == ["new", "+1 more"], 5), toasts(app)
        [newest] = [n for n in app._notifications if n.message == "new"]
        app._unnotify(newest)
        assert await until(pilot, lambda: toasts(app) == ["old"], 5), toasts(app)


async def test_toasts_raised_together_are_shown_once_each(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await settle(pilot)
        for n in range(1, 6):
            app.notify(f"burst {n}", timeout=60)  # no pause between: the rack catches up once
        assert await until(pilot, lambda: toasts(app)[:1] == ["burst 5"], 5), toasts(app)
        await pilot.pause()
        assert toasts(app) == ["burst 5", "burst 4", "burst 3", "+2 more"]
