"""`log view --follow` on a log that grows faster than it is read: a huge backlog is skipped (and said),
one poll runs at a time, and quitting stops the poll at work instead of waiting for it.

Event-driven: a poll is held inside its read by a hook (threading events), never by sleeping."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gdnconsole.logs import document
from gdnconsole.logs import scan as logscan
from gdnconsole.logs.lineindex import LineIndex
from gdnconsole.ui.screens.logscreen import LogViewApp
from tests.ui.conftest import SIZE, make_app, settle
from tests.ui.fixtures import startup, write_log

DECODE = (
    "[2026-11-30 09:10:00 TP0] Decode batch, #running-req: 12, #full token: 51234, full token usage: 0.41, "
    "accept len: 1.81, accept rate: 0.80, cuda graph: True, gen throughput (token/s): 612.12, #queue-req: 0\n"
)


def append_decode(path: Path, size: int) -> int:
    """About ``size`` bytes of decode lines; returns how many lines."""
    count = size // len(DECODE)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(DECODE * count)
    return count


class HeldRead:
    """Holds the next poll inside its first read of the file until ``release``; tells when it is there
    and when the whole poll has ended."""

    def __init__(self, app: LogViewApp, monkeypatch: pytest.MonkeyPatch) -> None:
        self.inside = threading.Event()
        self.release = threading.Event()
        self.done = threading.Event()
        doc = app.log_screen.pane.doc
        real_index, real_poll = LineIndex._index_buffer, doc.poll

        def index_buffer(index: LineIndex, buf: bytes, base: int) -> None:
            if not self.inside.is_set():
                self.inside.set()
                self.release.wait(30)
            real_index(index, buf, base)

        def poll(*args: Any) -> Any:
            try:
                return real_poll(*args)
            finally:
                self.done.set()

        monkeypatch.setattr(LineIndex, "_index_buffer", index_buffer)
        monkeypatch.setattr(doc, "poll", poll)

    async def wait_inside(self) -> None:
        assert await asyncio.to_thread(self.inside.wait, 30)

    async def wait_done(self) -> None:
        assert await asyncio.to_thread(self.done.wait, 30)


async def test_a_huge_backlog_is_skipped_to_its_end_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(document, "SKIP_BYTES", 256 << 10)
    monkeypatch.setattr(document, "SKIP_KEEP", 32 << 10)
    log = write_log(tmp_path / "serve.log", startup(0, crash=False))
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        pane, view = app.log_screen.pane, app.log_screen.view
        before = view.total
        added = append_decode(log, 2 << 20)
        crash = startup(5, crash=True)  # the end of the backlog: read for its meaning
        with log.open("a", encoding="utf-8") as fh:
            fh.write("\n".join(crash) + "\n")
        pane.poll()
        await settle(pilot)
        [skipped] = pane.skips
        assert skipped.first == before and before + added - 1000 < skipped.stop <= before + added
        assert 1.8 < skipped.size / 2**20 <= 2.0
        [toast] = [n.message for n in app._notifications if n.message.startswith("skipped")]
        assert toast.startswith(f"skipped {skipped.size / 2**20:,.1f} MB ({skipped.lines:,} lines)")
        assert view.tail and view.cursor_line == view.total - 1 == before + added + len(crash) - 1
        first_error = pane.doc.first_error()
        assert first_error is not None and first_error > before + added  # the crash after the skip is known


async def test_a_small_backlog_is_read_whole_and_nothing_is_said(tmp_path: Path) -> None:
    log = write_log(tmp_path / "serve.log", startup(0, crash=False))
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        pane = app.log_screen.pane
        added = append_decode(log, 1 << 20)
        pane.poll()
        await settle(pilot)
        assert pane.skips == [] and not [n for n in app._notifications if "skipped" in n.message]
        assert pane.doc.fed == pane.doc.index.complete and pane.view.total > added


async def test_q_during_a_long_poll_quits_and_the_poll_stops_between_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path / "serve.log", startup(0, crash=False))
    app = make_app(log, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        held, pane = HeldRead(app, monkeypatch), app.log_screen.pane
        append_decode(log, 8 << 20)  # eight reads' worth
        worker = app.log_screen.poll()
        assert worker is not None
        await held.wait_inside()
        assert app.log_screen.poll() is worker  # a poll at work is not cancelled and started again
        assert [w for w in app.workers if w.group == "poll" and not w.is_finished] == [worker]
        await pilot.press("q")
    assert app.return_code == 0 and not app.is_running
    held.release.set()
    await held.wait_done()
    assert pane.doc.index.end < log.stat().st_size  # stopped after the read it was in, not at the end


async def test_q_while_the_log_is_first_scanned_stops_the_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logscan, "WINDOW", 128 << 10)
    monkeypatch.setattr(logscan, "CHUNK", 128 << 10)
    log = write_log(tmp_path / "serve.log", startup(0, crash=False))
    append_decode(log, 1 << 20)  # eight windows
    inside, release, stopped = threading.Event(), threading.Event(), threading.Event()
    real_check, real_scan = logscan._check, logscan.scan

    def check(cancelled: Callable[[], bool] | None) -> None:
        if not inside.is_set():
            inside.set()
            release.wait(30)
        real_check(cancelled)

    def scan(*args: Any, **kwargs: Any) -> logscan.ScanResult:
        try:
            return real_scan(*args, **kwargs)
        except logscan.ScanCancelled:
            stopped.set()
            raise

    monkeypatch.setattr(logscan, "_check", check)
    monkeypatch.setattr(logscan, "scan", scan)
    app = make_app(log)
    async with app.run_test(size=SIZE) as pilot:
        assert await asyncio.to_thread(inside.wait, 30)  # the scan is at its first window
        pane = app.log_screen.pane
        await pilot.press("q")
    assert app.return_code == 0 and not app.is_running
    release.set()
    assert await asyncio.to_thread(stopped.wait, 30)
    assert not pane.doc.scanned
