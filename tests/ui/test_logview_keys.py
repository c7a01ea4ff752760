"""Every key of the log view, driven through Textual's Pilot on a ct129-like log."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.ui.dialogs.help import HelpScreen
from tests.ui.conftest import SIZE, make_app, row_texts, settle
from tests.ui.fixtures import ct129_lines


async def test_opens_at_start_with_timeline_of_last_startup(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.log_screen
        assert screen.view.cursor_line == 0
        rows = row_texts(app)
        assert "Attention backend not specified" in rows[0]
        data = screen.timeline_data
        assert data is not None and (data.index, data.count) == (1, 2)
        assert data.fatal is not None and "Capture cuda graph failed" in data.fatal.summary
        timeline = str(screen.timeline.render())
        assert "startup 2/2" in timeline and "failed in graphs" in timeline
        assert "weights" in timeline and "25.64 GB" in timeline


async def test_cursor_keys_scroll(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.log_screen.view
        await pilot.press("down", "down")
        assert view.cursor == 2
        await pilot.press("up")
        assert view.cursor == 1
        await pilot.press("pagedown")
        assert view.cursor > 20 and view.scroll_offset.y > 0
        await pilot.press("end")
        await settle(pilot)
        assert view.cursor == view.rows.count - 1
        assert "Received sigquit" in "".join(row_texts(app))
        await pilot.press("pageup")
        assert view.cursor < view.rows.count - 20
        await pilot.press("home")
        assert view.cursor == 0 and view.scroll_offset.y == 0


async def test_rank_tags_and_tqdm_collapsed(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = row_texts(app)
        dist = next(r for r in rows if "Init torch distributed begin" in r)
        assert dist.startswith("  TP0 [2026-11-30 09:00:02] Init")  # the rank moved to a tag
        bar = next(r for r in rows if "checkpoint shards" in r)
        assert bar.count("Loading safetensors") == 1 and "11/11" in bar


async def test_fold_and_unfold_traceback(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.log_screen.view
        await pilot.press("x")  # to the fatal error, which is folded
        line = view.cursor_line
        assert line is not None and "Capture cuda graph failed" in ct129_lines()[line]
        folded_rows = view.rows.count
        assert "10 lines ▸" in view.render_line(view.cursor - view.scroll_offset.y).text
        await pilot.press("enter")
        assert view.rows.count == folded_rows + 9
        assert view.cursor_line == 70  # the block's first line
        assert view.render_line(view.cursor - view.scroll_offset.y).text.startswith("▾ TP1")
        await pilot.press("down", "enter")  # from inside the block, fold it again
        assert view.rows.count == folded_rows
        assert view.cursor_line == line


async def test_first_error_and_fatal(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        line = app.log_screen.view.cursor_line
        assert line is not None and ct129_lines()[line].startswith("Exception: Capture cuda graph failed")


async def test_copy_line(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "c")  # the folded torchcodec block: its summary line
        assert app.clipboard == ct129_lines()[2]
        await pilot.press("down", "c")  # the block's six lines take one row
        assert app.clipboard == ct129_lines()[8]


async def test_copy_keeps_rank_prefix(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.log_screen.view
        view.go_to_line(8)
        await settle(pilot)  # the jump reads the lines around line 8 in a worker
        assert view.current is not None and view.current.number == 8
        await pilot.press("c")
        assert app.clipboard == "[2026-11-30 09:00:02 TP0] Init torch distributed begin."


async def test_horizontal_scroll(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.log_screen.view
        await pilot.press("right", "right")
        assert view.scroll_offset.x == 16
        assert row_texts(app)[0].startswith("      0:00] Attention")  # gutter and tag stay
        await pilot.press("left", "left", "left")
        assert view.scroll_offset.x == 0


async def test_help_lists_every_binding(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.log_screen
        for key in ("question_mark", "f1"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            table = app.screen.query_one("#help-table")
            text = app.export_screenshot()
            for binding in [*screen.BINDINGS, *screen.view.BINDINGS]:
                assert getattr(binding, "id", None), binding
                assert binding.id in text  # type: ignore[union-attr]
            assert table is not None
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is screen


async def test_toggle_timeline_and_quit(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.log_screen
        await pilot.press("t")
        assert not screen.timeline.display
        await pilot.press("t")
        assert screen.timeline.display
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_copy_says_the_line_was_sent_not_copied(ct129_log: Path) -> None:
    """tmux and most SSH sessions drop the OSC 52 write: "copied" was a claim the console cannot make."""
    app = make_app(ct129_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert messages == ["the line sent to the terminal clipboard (if the terminal takes OSC 52)"]
        assert app.clipboard == ct129_lines()[0]
