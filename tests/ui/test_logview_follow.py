"""Follow mode: new lines, pausing with a count of unseen lines, resuming, truncation and replacement."""

from __future__ import annotations

import os
from pathlib import Path

from gdnconsole.sglang.stages import Stage
from tests.ui.conftest import SIZE, make_app, row_texts, settle
from tests.ui.fixtures import startup, write_log


def append(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in lines))


def status(app: object) -> str:
    from gdnconsole.ui.screens.logscreen import LogViewApp, StatusBar

    assert isinstance(app, LogViewApp)
    return str(app.log_screen.query_one(StatusBar).render())


async def test_follow_sticks_to_bottom_pauses_and_resumes(tmp_path: Path) -> None:
    log = write_log(tmp_path / "serve.log", startup(0, crash=False))
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen, view = app.log_screen, app.log_screen.view
        assert view.tail and view.cursor_line == view.total - 1
        assert "following" in status(app)
        append(log, [f"new line {i}" for i in range(3)])
        screen.poll()
        await settle(pilot)
        assert view.cursor_line == view.total - 1
        assert row_texts(app)[view.cursor - view.scroll_offset.y].strip().endswith("new line 2")
        await pilot.press("up")  # scrolling up pauses following
        assert not view.tail
        paused_at = view.cursor_line
        append(log, [f"more {i}" for i in range(5)])
        screen.poll()
        await settle(pilot)
        assert view.cursor_line == paused_at
        assert "paused" in status(app) and "+5 new lines" in status(app)
        await pilot.press("end")  # resume
        await settle(pilot)
        assert view.tail and view.new_lines == 0 and view.cursor_line == view.total - 1
        assert "following" in status(app) and "new lines" not in status(app)


async def test_partial_last_line_is_completed(tmp_path: Path) -> None:
    log = write_log(tmp_path / "serve.log", ["first"])
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen, view = app.log_screen, app.log_screen.view
        with log.open("a") as fh:
            fh.write("half a li")
        screen.poll()
        await settle(pilot)
        assert view.total == 2
        with log.open("a") as fh:
            fh.write("ne\nthird\n")
        screen.poll()
        await settle(pilot)
        texts = [t.strip() for t in row_texts(app)[:3]]
        assert texts == ["first", "half a line", "third"]


async def test_truncated_log_is_followed_from_its_new_start(tmp_path: Path) -> None:
    log = write_log(tmp_path / "serve.log", startup(0, crash=False) + startup(5, crash=True))
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen, view = app.log_screen, app.log_screen.view
        assert screen.timeline_data is not None and screen.timeline_data.count == 2
        with log.open("r+") as fh:  # a relaunch with `> log` truncates the same file
            fh.truncate(0)
        append(log, startup(9, crash=False)[:10])
        screen.poll()
        await settle(pilot)
        assert view.total == 10 and view.cursor_line == 9
        assert "09:09:00" in "".join(row_texts(app))
        data = screen.timeline_data
        assert data is not None and (data.index, data.count) == (0, 1)
        assert data.stage == Stage.DISTRIBUTED and data.fatal is None


async def test_replaced_log_is_followed_from_its_new_start(tmp_path: Path) -> None:
    log = write_log(tmp_path / "serve.log", startup(0, crash=True))
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen, view = app.log_screen, app.log_screen.view
        assert screen.timeline_data is not None and screen.timeline_data.fatal is not None
        fresh = write_log(tmp_path / "serve.log.new", startup(7, crash=False))
        os.replace(fresh, log)  # a new inode, a longer file
        screen.poll()
        await settle(pilot)
        assert view.total == len(startup(7, crash=False))
        data = screen.timeline_data
        assert data is not None and data.fatal is None and data.stage == Stage.SERVING
        assert view.cursor_line == view.total - 1


async def test_follow_key_toggles(tmp_path: Path) -> None:
    log = write_log(tmp_path / "serve.log", startup(0, crash=False))
    app = make_app(log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen, view = app.log_screen, app.log_screen.view
        assert not screen.follow and view.cursor_line == 0
        await pilot.press("F")
        await settle(pilot)
        assert screen.follow and view.tail and view.cursor_line == view.total - 1
        append(log, ["appended"])
        screen.poll()
        await settle(pilot)
        assert view.cursor_line == view.total - 1
        await pilot.press("F")
        assert not screen.follow and "following" not in status(app)


async def test_a_short_log_that_grows_past_the_screen_at_once_follows_to_the_end(tmp_path: Path) -> None:
    """A log that fits on the screen, then a chunk bigger than the screen (a catch-up read): Textual's
    scrollbar, and so its "may scroll", lags a layout behind the growth, and the tail once stayed put."""
    log = write_log(tmp_path / "serve.log", startup(0, crash=False)[:3])
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen, view = app.log_screen, app.log_screen.view
        assert view.max_scroll_y == 0
        append(log, [f"[2026-11-30 09:01:{i % 60:02d}] catch-up line {i}" for i in range(3 * SIZE[1])])
        screen.poll()
        await settle(pilot)
        assert view.tail and view.cursor_line == view.total - 1
        assert view.scroll_offset.y == view.max_scroll_y > 0, (view.scroll_offset, view.max_scroll_y)
        row_texts(app)  # drawing the rows asks for the lines not read yet: a worker reads them
        await settle(pilot)
        assert row_texts(app)[view.cursor - view.scroll_offset.y].strip().endswith(f"line {3 * SIZE[1] - 1}")


async def test_a_log_with_no_startup_says_so_once_read_and_shows_the_first_when_it_comes(
    tmp_path: Path,
) -> None:
    log = tmp_path / "serve.log"
    log.write_text("")  # the dashboard's mirror of a host whose server never started
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.log_screen
        assert str(screen.timeline.render()) == "no startup in this log yet"  # not "reading the log…"
        append(log, startup(0, crash=False))
        screen.poll()
        await settle(pilot)
        assert "startup 1/1" in str(screen.timeline.render())


async def test_lines_read_again_for_their_meaning_stay_on_screen_meanwhile(tmp_path: Path) -> None:
    # Each poll of a growing log reads the visible lines again (their stage may be known now); the rows
    # showed "…" until the read came back, a flicker at every poll (a tmux capture caught it blank).
    log = write_log(tmp_path / "serve.log", startup(0, crash=False))
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.log_screen.view
        before = row_texts(app)
        view.forget_meanings()
        assert row_texts(app) == before and view.reading  # the old rows, while they are read again
        await settle(pilot)
        assert row_texts(app) == before and not view.reading


async def test_a_rotated_log_is_read_to_its_end_then_the_new_file_with_a_word_of_what_happened(
    tmp_path: Path,
) -> None:
    """logrotate's rename + create while the server writes on: the view shows the old file's last lines,
    then the new file once something writes to it, and says so; a delete does not end the view."""
    log = write_log(tmp_path / "serve.log", ["one", "two"])
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen, view = app.log_screen, app.log_screen.view
        with log.open("a") as server:
            log.rename(tmp_path / "serve.log.1")
            log.write_text("")
            server.write("three\n")
            server.flush()
            screen.poll()
            await settle(pilot)
            assert [t.strip() for t in row_texts(app)[:3]] == ["one", "two", "three"]
        append(log, ["fresh"])
        screen.poll()
        await settle(pilot)
        screen.poll()  # (the first look finishes the old file, the next one moves on)
        await settle(pilot)
        assert view.total == 1 and row_texts(app)[0].strip() == "fresh"
        assert any("rotated or replaced" in str(n.message) for n in app._notifications)

        log.unlink()  # deleted: nothing to read, nothing breaks
        screen.poll()
        await settle(pilot)
        assert view.total == 1 and row_texts(app)[0].strip() == "fresh"
        append(log, ["back"])
        screen.poll()
        await settle(pilot)
        assert row_texts(app)[0].strip() == "back"
