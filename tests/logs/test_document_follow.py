"""Following a log document: the scan, each poll's new lines fed to the tracker, restarts and what they
are called, and the mirror document a session writes itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from gdnconsole.logs import document as logdocument
from gdnconsole.logs import lineindex as logindex
from gdnconsole.logs.document import LogDocument, MirrorDocument
from gdnconsole.logs.lineindex import Growth

INIT = "[2026-11-30 09:00:02 {}] Init torch distributed begin."
LOAD = "[2026-11-30 09:00:03 TP0] Load weight begin. avail mem=46.93 GB"
DECODE = "[2026-11-30 09:00:{:02d} TP0] Decode batch, #running-req: 1, gen throughput (token/s): 40.50"
CRASH = [
    "[2026-11-30 09:05:45 TP1] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/x/scheduler.py", line 3934, in run_scheduler_process',
    "Exception: Capture cuda graph failed: CUDA out of memory.",
    "",
]


def text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def append(path: Path, lines: list[str]) -> None:
    with path.open("a") as fh:
        fh.write(text(lines))


def scanned(path: Path, lines: list[str]) -> LogDocument:
    path.write_text(text(lines))
    doc = LogDocument(path)
    doc.build_index()
    assert doc.scan()
    return doc


# -- the scan ------------------------------------------------------------------------------------------


def test_the_scan_feeds_the_tracker_once(tmp_path: Path) -> None:
    doc = scanned(tmp_path / "a.log", [INIT.format("TP0"), *CRASH])
    assert (doc.scanned, doc.fed, doc.first_error(), doc.ranks) == (True, 5, 3, {"TP1", "TP0"})
    assert not doc.scan()  # fed already: a second scan is thrown away
    assert doc.fed == 5


def test_build_index_reports_progress_and_can_be_cancelled(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_text(text([LOAD] * 3))
    doc = LogDocument(path)
    assert doc.build_index(cancelled=lambda: True) == Growth(False, 0, 0)
    told: list[tuple[int, int]] = []
    size = path.stat().st_size
    assert doc.build_index(lambda done, total: told.append((done, total))) == Growth(False, 0, 3)
    assert told == [(size, size)]


def test_a_scan_overtaken_by_a_restart_is_thrown_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.log"
    path.write_text(text([INIT.format("TP0"), *CRASH]))
    doc = LogDocument(path)
    doc.build_index()
    scan = logdocument.logscan.scan

    def scan_then_restart(*args: object, **kwargs: object) -> object:
        result = scan(*args, **kwargs)  # type: ignore[arg-type]
        path.write_text(text([LOAD]))  # the log restarts while the scan runs: a poll sees it first
        assert doc.poll().reset
        return result

    monkeypatch.setattr(logdocument.logscan, "scan", scan_then_restart)
    assert not doc.scan()
    assert (doc.fed, doc.first_error(), doc.generation) == (1, None, 2)


# -- polling ---------------------------------------------------------------------------------------------


def test_a_poll_feeds_the_new_lines_to_the_tracker(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    doc = scanned(path, [INIT.format("TP0")])
    append(path, [INIT.format("TP5"), *CRASH])
    assert doc.poll() == Growth(False, 1, 6)
    assert (doc.fed, doc.first_error(), doc.ranks) == (6, 4, {"TP0", "TP5", "TP1"})
    assert [(f.first, f.last) for f in doc.folds()] == [(2, 5)]
    assert doc.poll() == Growth(False, 6, 6) and doc.fed == 6
    assert (doc.generation, doc.restart_reasons) == (1, {})


def test_a_poll_before_the_scan_indexes_but_leaves_the_feeding_to_the_scan(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_text(text([INIT.format("TP0")]))
    doc = LogDocument(path)
    doc.build_index()
    append(path, CRASH)
    assert doc.poll() == Growth(False, 1, 5)
    assert (doc.scanned, doc.fed, doc.first_error()) == (False, 0, None)
    assert doc.scan() and (doc.fed, doc.first_error()) == (5, 3)


def test_a_poll_feeds_a_long_append_chunk_by_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logindex, "BLOCK", 128)
    monkeypatch.setattr(logindex, "CHUNK_BLOCKS", 1)
    path = tmp_path / "a.log"
    doc = scanned(path, [LOAD] * 7)
    append(path, [INIT.format(f"TP{k}") for k in range(30)] + CRASH)
    assert doc.poll() == Growth(False, 7, 41)
    assert doc.ranks == {"TP0", *(f"TP{k}" for k in range(30))}
    assert (doc.fed, doc.first_error()) == (41, 39)
    assert [(f.first, f.last) for f in doc.folds()] == [(37, 40)]


def test_a_truncated_log_is_read_again_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    doc = scanned(path, [INIT.format("TP0"), *CRASH])
    path.write_text(text([INIT.format("TP3")]))
    assert doc.poll() == Growth(True, 0, 1, "truncated")
    assert (doc.generation, doc.restart_reasons, doc.own_restarts) == (2, {2: "truncated"}, set())
    assert (doc.fed, doc.first_error(), doc.ranks) == (1, None, {"TP3"})
    append(path, CRASH)
    doc.poll()
    assert (doc.fed, doc.first_error()) == (5, 3)


def test_a_restart_before_the_scan_is_followed_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_text(text([LOAD] * 3))
    doc = LogDocument(path)
    doc.build_index()
    path.rename(tmp_path / "a.log.1")
    path.write_text(text([INIT.format("TP2"), *CRASH]))
    assert doc.poll() == Growth(True, 0, 5, "replaced")
    assert (doc.scanned, doc.fed, doc.first_error(), doc.restart_reasons) == (True, 5, 3, {2: "replaced"})


def test_a_log_truncated_and_gone_before_the_poll_starts_over_when_it_returns(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    doc = scanned(path, [INIT.format("TP0"), *CRASH])
    with path.open("r+b") as fh:
        fh.truncate(0)
    path.unlink()
    assert doc.poll().reset
    assert (doc.fed, doc.first_error(), doc.generation) == (0, None, 2)
    path.write_text(text([INIT.format("TP4"), LOAD]))
    assert doc.poll() == Growth(False, 0, 2)
    assert (doc.fed, doc.ranks) == (2, {"TP4", "TP0"})


# -- the mirror --------------------------------------------------------------------------------------------


def test_a_mirror_starts_empty_in_a_folder_it_makes(tmp_path: Path) -> None:
    mirror = MirrorDocument(tmp_path / "host" / "logs" / "m.log")
    assert mirror.path.read_bytes() == b""
    assert (mirror.scanned, mirror.generation, mirror.restart_reasons, mirror.own_restarts) == (
        True,
        2,
        {2: "replaced"},
        set(),
    )


def test_a_mirror_appends_parses_and_counts_lines(tmp_path: Path) -> None:
    mirror = MirrorDocument(tmp_path / "m.log")
    assert mirror.append(text([INIT.format("TP0"), LOAD]).encode()) == 2
    assert mirror.append(text(CRASH).encode()) == 4
    assert mirror.path.read_text() == text([INIT.format("TP0"), LOAD, *CRASH])
    assert (mirror.index.line_count, mirror.fed, mirror.first_error()) == (6, 6, 4)
    assert [i.raw for i in mirror.read([0, 5, 9])] == [INIT.format("TP0"), ""]


def test_clearing_a_mirror_records_why_and_whose_doing_it_was(tmp_path: Path) -> None:
    mirror = MirrorDocument(tmp_path / "m.log")
    mirror.append(text([INIT.format("TP0"), *CRASH]).encode())
    mirror.clear(own=True, reason="truncated")
    assert (mirror.generation, mirror.own_restarts, mirror.restart_reasons[3]) == (3, {3}, "truncated")
    assert (mirror.path.read_bytes(), mirror.index.line_count, mirror.fed, mirror.first_error()) == (
        b"",
        0,
        0,
        None,
    )
    mirror.clear()
    assert (mirror.generation, mirror.own_restarts, mirror.restart_reasons[4]) == (4, {3}, "replaced")
    mirror.clear(reason="missing")
    assert mirror.restart_reasons == {2: "replaced", 3: "truncated", 4: "replaced", 5: "missing"}
    assert mirror.own_restarts == {3}


def test_a_poll_feeds_lines_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    doc = scanned(path, [LOAD])
    with path.open("ab") as fh:
        fh.write(INIT.format("TP6").encode() + b" \xff\n")
    assert doc.poll() == Growth(False, 1, 2)
    assert (doc.fed, doc.ranks) == (2, {"TP0", "TP6"})
