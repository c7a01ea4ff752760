"""Filter (regex and stage / severity / rank toggles), search with next / previous, escape."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import SelectionList

from gdnconsole.logs.document import FilterSpec
from gdnconsole.sglang.stages import Severity
from gdnconsole.ui.dialogs.filtersearch import FilterScreen, SearchScreen
from tests.ui.conftest import SIZE, make_app, row_texts, settle
from tests.ui.fixtures import ct129_lines


def shown_lines(app: object) -> list[str]:
    from gdnconsole.ui.screens.logscreen import LogViewApp

    assert isinstance(app, LogViewApp)
    view = app.log_screen.view
    return [ct129_lines()[view.rows.line(r)] for r in range(view.rows.count)]


async def test_filter_by_regex_and_clear(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        assert isinstance(app.screen, FilterScreen)
        await pilot.press(*"Decode batch", "enter")
        await settle(pilot)
        lines = shown_lines(app)
        assert len(lines) == 6 and all("Decode batch" in line for line in lines)
        assert all("Decode batch" in row for row in row_texts(app)[:6])
        await pilot.press("escape")  # clears the filter
        await settle(pilot)
        assert app.log_screen.view.rows.count == app.log_screen.view.total - 5 - 5 - 9  # folds only


async def test_filter_markup_like_regex_is_shown_literally(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.log_screen.apply_filter(FilterSpec(regex=r"\[bold\]|INFO"))
        await settle(pilot)
        from gdnconsole.ui.screens.logscreen import StatusBar

        assert r"/\[bold\]|INFO/" in str(app.log_screen.query_one(StatusBar).render())


async def test_filter_toggles_by_severity_and_rank(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        dialog = app.screen
        assert isinstance(dialog, FilterScreen)
        severities = dialog.query_one("#filter-severities", SelectionList)
        severities.deselect("info")
        severities.deselect("warning")
        ranks = dialog.query_one("#filter-ranks", SelectionList)
        ranks.deselect("TP0")
        await pilot.click("#filter-apply")
        await settle(pilot)
        spec = app.log_screen.filter_spec
        assert spec.severities == frozenset({Severity.ERROR, Severity.FATAL})
        assert spec.ranks == frozenset({"main", "TP1"})
        lines = shown_lines(app)
        # The crash, folded to the line that names it, and the main process's SIGQUIT notice.
        assert lines[0].startswith("Exception: Capture cuda graph failed")
        assert lines[1].startswith("[2026-11-30 09:05:46] Received sigquit")
        await pilot.press("enter")  # unfold: the opener (TP1) and its unprefixed continuation lines
        lines = shown_lines(app)
        assert lines[0].startswith("[2026-11-30 09:05:45 TP1] Scheduler hit an exception")
        assert len(lines) == 11 and not any("TP0" in line for line in lines)


async def test_filter_by_stage_keyboard(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        dialog = app.screen
        assert isinstance(dialog, FilterScreen)
        stages = dialog.query_one("#filter-stages", SelectionList)
        stages.deselect_all()
        stages.select("loaded")
        await pilot.press("ctrl+s")
        await settle(pilot)
        lines = shown_lines(app)
        assert len(lines) == 4 and all("Load weight end" in line for line in lines)


async def test_bad_regex_is_refused(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f", "(", "enter")
        assert isinstance(app.screen, FilterScreen)
        assert "bad regex" in str(app.screen.query_one("#filter-error").render())
        await pilot.press("escape")
        assert not isinstance(app.screen, FilterScreen)
        assert not app.log_screen.filter_spec.active


async def test_search_next_and_prev(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.log_screen.view
        await pilot.press("slash")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"Memory pool", "enter")
        await settle(pilot)
        assert view.cursor_line == 18
        await pilot.press("n")
        await settle(pilot)
        assert view.cursor_line == 20
        await pilot.press("n")
        await settle(pilot)
        assert view.cursor_line == 64
        await pilot.press("N")
        await settle(pilot)
        assert view.cursor_line == 20


def toasts(app: object) -> list[str]:
    from textual.app import App

    assert isinstance(app, App)
    return [n.message for n in app._notifications]


async def test_search_wraps_around_and_says_so(ct129_log: Path) -> None:
    """As less and k9s: past the last match, `n` goes on from the top (`N` from the bottom)."""
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.log_screen.view
        app.log_screen.search_pattern = "Memory pool"
        view.go_to_line(66)
        await pilot.press("n")
        await settle(pilot)
        assert view.cursor_line == 18
        assert toasts(app) == ["/Memory pool/ wrapped to the top"]
        await pilot.press("N")
        await settle(pilot)
        assert view.cursor_line == 66
        assert toasts(app)[-1] == "/Memory pool/ wrapped to the bottom"


async def test_a_search_while_following_starts_at_the_top_of_the_screen(ct129_log: Path) -> None:
    """Following, the cursor sits on the last line: the search goes from the first line on screen."""
    app = make_app(ct129_log, follow=True)
    async with app.run_test(size=(120, 24)) as pilot:
        await settle(pilot)
        view = app.log_screen.view
        assert view.tail and view.cursor_line == 80
        top = view.visible_lines()[0]
        await pilot.press("slash", *"Memory pool", "enter")
        await settle(pilot)
        assert view.cursor_line == 64 and top <= 64  # the first match on screen, not "not found"
        assert not any("not found" in toast for toast in toasts(app))


async def test_search_unfolds_and_respects_filter(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.log_screen.view
        app.log_screen.search_pattern = "libavutil"
        await pilot.press("n")
        await settle(pilot)
        assert view.cursor_line == 6  # inside the folded torchcodec block, which opened
        assert 2 in view.expanded
        app.log_screen.apply_filter(FilterSpec(regex="TP1"))
        await settle(pilot)
        app.log_screen.search_pattern = "Memory pool"
        await pilot.press("n")
        await settle(pilot)
        assert view.cursor_line == 20  # line 18 is TP0's, hidden by the filter
        app.log_screen.search_pattern = "no such text"
        await pilot.press("n")
        await settle(pilot)
        assert view.cursor_line == 20


async def test_escape_stops_a_running_filter(ct129_log: Path, monkeypatch: object) -> None:
    import threading

    import pytest

    from gdnconsole.logs.document import LogDocument

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    started = threading.Event()

    def slow_filter(self: LogDocument, spec: FilterSpec, *args: object, **kwargs: object) -> None:
        cancelled = kwargs["cancelled"]
        progress = kwargs["progress"]
        assert callable(cancelled) and callable(progress)
        progress(0.5)
        started.set()
        while not cancelled():  # a 1 GB filter: runs until cancelled
            threading.Event().wait(0.005)
        return None

    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(LogDocument, "filter", slow_filter)
        app.log_screen.apply_filter(FilterSpec(regex="anything"))
        while not started.is_set():
            await pilot.pause()
        await pilot.pause()
        assert "filtering" in app.log_screen.busy
        await pilot.press("escape")
        await settle(pilot)
        assert app.log_screen.busy == "stopped"
        assert app.log_screen.view.matches is None  # the view still shows every line
