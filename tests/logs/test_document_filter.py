"""Filtering and searching a log document: which lines a filter shows (by text, stage, severity, rank),
the fast path for the batch lines the scan skipped, progress and cancelling, and search both ways."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gdnconsole.logs import lineindex as logindex
from gdnconsole.logs.document import FilterSpec, LogDocument, compile_regex, matcher
from gdnconsole.sglang.stages import Severity, Stage

INIT = "[2026-11-30 09:00:02 TP0] Init torch distributed begin."
LOAD = "[2026-11-30 09:00:03 TP1] Load weight begin. avail mem=46.93 GB"
DECODE = "[2026-11-30 09:00:{:02d} TP0] Decode batch, #running-req: 1, gen throughput (token/s): 40.50"
DECODE_GROUPED = (
    "[2026-11-30 09:00:{:02d} DP1 TP1] Decode batch, #running-req: 1, gen throughput (token/s): 4.5"
)
DECODE_MAIN = "[2026-11-30 09:00:{:02d}] Decode batch, #running-req: 1, gen throughput (token/s): 40.50"
PREFILL = "[2026-11-30 09:00:{:02d} TP1] Prefill batch, #new-seq: 1, #new-token: 7, #running-req: 0"
ACCESS = '[2026-11-30 09:00:{:02d}] INFO:     127.0.0.1:41234 - "GET /model_info HTTP/1.1" 200 OK'
UVICORN = "[2026-11-30 09:00:49] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)"
READY = "[2026-11-30 09:00:51] The server is fired up and ready to roll!"
WARN = "[2026-11-30 09:00:00] Attention backend not specified. Use flashinfer backend by default."


def document(path: Path, lines: list[str], *, scan: bool = True, end: str = "\n") -> LogDocument:
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    doc = LogDocument(path)
    doc.build_index()
    if scan:
        assert doc.scan()
    return doc


def shown(doc: LogDocument, spec: FilterSpec, start: int = 0, stop: int | None = None) -> list[int]:
    found = doc.filter(spec, start, stop)
    assert found is not None
    return list(found)


def story() -> list[str]:
    """A startup, then runs of batch and access lines the fast scan skips the middle of."""
    return [
        WARN,  # 0
        INIT,  # 1
        LOAD,  # 2
        UVICORN,  # 3
        *(ACCESS.format(k) for k in range(4)),  # 4..7: warm-up
        READY,  # 8
        *(DECODE.format(k) for k in range(4)),  # 9..12
        *(DECODE_GROUPED.format(k) for k in range(4)),  # 13..16
        *(DECODE_MAIN.format(k) for k in range(4)),  # 17..20
        *(ACCESS.format(k) for k in range(4)),  # 21..24
        "Decode batch without a frame",  # 25
        *(DECODE.format(k) for k in range(3)),  # 26..28
        *(PREFILL.format(k) for k in range(4)),  # 29..32
    ]


# -- the spec ------------------------------------------------------------------------------------------


def test_a_spec_allows_lines_whose_stage_severity_and_rank_are_all_allowed() -> None:
    spec = FilterSpec(
        stages=frozenset({Stage.SERVING, None}),
        severities=frozenset({Severity.WARNING}),
        ranks=frozenset({"TP0", "main"}),
    )
    assert spec.allows_parts(Stage.SERVING, Severity.WARNING, "TP0")
    assert spec.allows_parts(None, Severity.WARNING, None)  # no rank: the main process
    assert not spec.allows_parts(Stage.READY, Severity.WARNING, "TP0")
    assert not spec.allows_parts(Stage.SERVING, Severity.INFO, "TP0")
    assert not spec.allows_parts(Stage.SERVING, Severity.WARNING, "TP1")
    assert FilterSpec().allows_parts(Stage.READY, Severity.FATAL, "TP3")
    assert FilterSpec(ranks=frozenset({"TP1"})).allows_parts(None, Severity.INFO, "TP1")
    assert not FilterSpec(ranks=frozenset({"TP1"})).allows_parts(None, Severity.INFO, None)
    assert not FilterSpec(stages=frozenset()).allows_parts(None, Severity.INFO, None)


def test_a_spec_is_active_when_it_restricts_anything() -> None:
    assert not FilterSpec().active and not FilterSpec().needs_info
    assert FilterSpec(regex="x").active and not FilterSpec(regex="x").needs_info
    for spec in (
        FilterSpec(stages=frozenset()),
        FilterSpec(severities=frozenset({Severity.INFO})),
        FilterSpec(ranks=frozenset({"main"})),
    ):
        assert spec.active and spec.needs_info


# -- patterns ------------------------------------------------------------------------------------------


def test_compile_regex_searches_bytes_line_by_line() -> None:
    regex = compile_regex("^two")
    assert regex.search(b"one\ntwo\n") is not None and regex.search(b"one two") is None
    assert compile_regex("é+").search("café".encode()) is not None
    assert compile_regex("\udcff").search(b"a\xffb") is not None  # a byte that is not UTF-8


def test_matcher_finds_the_next_match_from_a_position() -> None:
    plain = matcher("ab")
    assert (plain(b"xxabxab", 0), plain(b"xxabxab", 3), plain(b"xxabxab", 6)) == (2, 5, -1)
    regex = matcher("a.c")
    assert (regex(b"abc-axc", 0), regex(b"abc-axc", 1), regex(b"abc-axc", 5)) == (0, 4, -1)
    assert matcher("é")("café".encode(), 0) == 3
    assert matcher("\udcff")(b"a\xffb", 0) == 1


def test_a_pattern_with_regex_syntax_is_a_regex_and_one_without_is_text() -> None:
    assert matcher("a.")(b"a.", 0) == 0 and matcher("a.")(b"ab", 0) == 0
    assert matcher("a+")(b"caa", 0) == 1
    assert matcher("b$")(b"ab\nc", 0) == 1  # line by line
    assert matcher("a b")(b"a  b a b", 0) == 5
    with pytest.raises(re.error):
        matcher("a[")


# -- filter ----------------------------------------------------------------------------------------------


def test_an_empty_spec_shows_every_complete_line(tmp_path: Path) -> None:
    doc = document(tmp_path / "a.log", story())
    assert shown(doc, FilterSpec()) == list(range(33))
    assert shown(doc, FilterSpec(), 5, 9) == [5, 6, 7, 8]


def test_a_text_filter_shows_each_matching_line_once(tmp_path: Path) -> None:
    doc = document(tmp_path / "a.log", story())
    assert shown(doc, FilterSpec(regex="Decode")) == [*range(9, 21), 25, 26, 27, 28]
    assert shown(doc, FilterSpec(regex="0")) == [*range(25), *range(26, 33)]  # many matches a line: once each
    assert shown(doc, FilterSpec(regex="GET"), 5, 22) == [5, 6, 7, 21]
    assert shown(doc, FilterSpec(regex="^Decode")) == [25]
    assert shown(doc, FilterSpec(regex="#new-token: 7, #running-req: 0$")) == [29, 30, 31, 32]
    assert shown(doc, FilterSpec(regex="nothing like it")) == []


def test_the_fast_path_for_skipped_lines_agrees_with_reading_each_line(tmp_path: Path) -> None:
    doc = document(tmp_path / "a.log", story())
    infos = doc.read(range(33))
    specs = [
        FilterSpec(ranks=frozenset({"TP0"})),
        FilterSpec(ranks=frozenset({"DP1 TP1"})),
        FilterSpec(ranks=frozenset({"main"})),
        FilterSpec(ranks=frozenset({"TP1"})),
        FilterSpec(stages=frozenset({Stage.WARMUP})),
        FilterSpec(stages=frozenset({Stage.SERVING}), regex="GET"),
        FilterSpec(stages=frozenset({None})),
        FilterSpec(severities=frozenset({Severity.INFO}), ranks=frozenset({"TP0", "main"})),
        FilterSpec(
            severities=frozenset({Severity.WARNING, Severity.INFO}), stages=frozenset({Stage.STARTING})
        ),
    ]
    for spec in specs:
        expected = [i.number for i in infos if spec.allows(i) and (not spec.regex or spec.regex in i.raw)]
        assert shown(doc, spec) == expected, spec
    assert shown(doc, FilterSpec(ranks=frozenset({"DP1 TP1"}))) == [13, 14, 15, 16]
    assert shown(doc, FilterSpec(ranks=frozenset({"TP1"}))) == [2, 29, 30, 31, 32]
    assert shown(doc, FilterSpec(stages=frozenset({Stage.WARMUP}))) == [4, 5, 6, 7]
    assert shown(doc, FilterSpec(ranks=frozenset({"main"}), regex="Decode")) == [17, 18, 19, 20, 25]


def test_warnings_only_are_read_from_what_the_tracker_saw(tmp_path: Path) -> None:
    lines = [WARN, INIT, *story()[1:], WARN, "[2026-11-30 09:01:00 TP1] x WARN", WARN]
    doc = document(tmp_path / "a.log", lines)
    warnings = FilterSpec(severities=frozenset({Severity.WARNING}))
    assert shown(doc, warnings) == [0, 34, 36]
    assert shown(doc, warnings, 1, 36) == [34]
    assert shown(doc, FilterSpec(severities=frozenset({Severity.WARNING}), regex="^\\[")) == [0, 34, 36]
    assert shown(doc, FilterSpec(severities=frozenset({Severity.WARNING}), regex="Nope")) == []
    assert shown(doc, FilterSpec(severities=frozenset({Severity.WARNING}), ranks=frozenset({"TP1"}))) == []
    assert shown(doc, FilterSpec(severities=frozenset({Severity.ERROR}))) == []


def test_before_the_scan_every_line_is_classified_to_filter(tmp_path: Path) -> None:
    doc = document(tmp_path / "a.log", story(), scan=False)
    infos = doc.read(range(33))
    for spec in (
        FilterSpec(severities=frozenset({Severity.WARNING})),
        FilterSpec(ranks=frozenset({"TP0"})),
        FilterSpec(stages=frozenset({None})),
    ):
        assert shown(doc, spec) == [i.number for i in infos if spec.allows(i)], spec
    assert shown(doc, FilterSpec(severities=frozenset({Severity.WARNING}))) == [0]
    assert shown(doc, FilterSpec(stages=frozenset({None}))) == [4, 5, 6, 7, 21, 22, 23, 24, 25]


def test_a_last_line_without_its_newline_is_filtered_when_asked_for(tmp_path: Path) -> None:
    doc = document(tmp_path / "a.log", [INIT, DECODE.format(1), DECODE.format(2)], end="")
    assert doc.index.line_count == 3 and doc.index.complete == 2
    assert shown(doc, FilterSpec(regex="Decode")) == [1]  # up to the complete lines by default
    assert shown(doc, FilterSpec(regex="Decode"), 0, 3) == [1, 2]
    assert shown(doc, FilterSpec(regex=":02 TP0. Decode"), 0, 3) == [2]
    assert shown(doc, FilterSpec(regex="Init"), 0, 3) == [0]
    assert shown(doc, FilterSpec(ranks=frozenset({"TP0"})), 0, 3) == [0, 1, 2]
    assert shown(doc, FilterSpec(ranks=frozenset({"TP1"})), 0, 3) == []
    assert shown(doc, FilterSpec(), 0, 3) == [0, 1, 2]


def test_filter_tells_its_progress_per_chunk_and_stops_when_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logindex, "BLOCK", 128)
    monkeypatch.setattr(logindex, "CHUNK_BLOCKS", 1)
    lines = [f"line {k:03d} " + "x" * 53 for k in range(40)]  # 64 bytes: two lines a block
    doc = document(tmp_path / "a.log", lines, scan=False)
    told: list[float] = []
    found = doc.filter(FilterSpec(regex="line 0[13]"), progress=told.append)
    assert found is not None and list(found) == [*range(10, 20), *range(30, 40)]
    assert told == [0.0, *(n / 40 for n in range(3, 40, 2))]
    told.clear()
    assert doc.filter(FilterSpec(), 3, 11, progress=told.append) is not None
    assert told == [0.0, 2 / 8, 4 / 8, 6 / 8]
    assert doc.filter(FilterSpec(), cancelled=lambda: True) is None
    asked: list[int] = []

    def after_two() -> bool:
        asked.append(1)
        return len(asked) > 2

    assert doc.filter(FilterSpec(), cancelled=after_two) is None
    assert len(asked) == 3


# -- search ----------------------------------------------------------------------------------------------


def test_search_finds_the_next_matching_line_either_way(tmp_path: Path) -> None:
    doc = document(tmp_path / "a.log", story())
    assert doc.search("Decode", 0) == 9
    assert doc.search("Decode", 9) == 10
    assert doc.search("Decode", 20) == 25
    assert doc.search("Decode", 28) is None
    assert doc.search("Decode", 9, backward=True) is None
    assert doc.search("Decode", 10, backward=True) == 9
    assert doc.search("Decode", 25, backward=True) == 20
    assert doc.search("Prefill", 33, backward=True) == 32
    assert doc.search("GET", -1) == 4
    assert doc.search("^Decode", 0) == 25
    assert doc.search("ready to roll", 8) is None and doc.search("ready to roll", 7) == 8


def test_search_across_chunks_and_cancelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logindex, "BLOCK", 128)
    monkeypatch.setattr(logindex, "CHUNK_BLOCKS", 1)
    lines = [f"line {k:03d} " + "x" * 53 for k in range(40)]
    lines[5] = lines[5].replace("x", "y", 1)
    lines[33] = lines[33].replace("x", "y", 1)
    doc = document(tmp_path / "a.log", lines, scan=False)
    assert doc.search("y", 0) == 5
    assert doc.search("y", 5) == 33
    assert doc.search("y", 33) is None
    assert doc.search("y", 39, backward=True) == 33
    assert doc.search("y", 33, backward=True) == 5
    assert doc.search("y", 5, backward=True) is None
    assert doc.search("y", 0, cancelled=lambda: True) is None
    assert doc.search("y", 39, backward=True, cancelled=lambda: True) is None
    assert doc.search("line 03[3-9]", 0) == 33


def test_decode_batches_before_ready_are_serving_and_requests_warm_up(tmp_path: Path) -> None:
    lines = [
        INIT,
        LOAD,
        UVICORN,
        *(ACCESS.format(k) for k in range(4)),  # 3..6
        *(DECODE.format(k) for k in range(4)),  # 7..10: the warm-up request's decoding
        READY,  # 11
    ]
    doc = document(tmp_path / "a.log", lines)
    assert shown(doc, FilterSpec(stages=frozenset({Stage.WARMUP}))) == [3, 4, 5, 6]
    assert shown(doc, FilterSpec(stages=frozenset({Stage.SERVING}))) == [7, 8, 9, 10]
    infos = doc.read(range(12))
    assert [i.number for i in infos if i.stage is Stage.SERVING] == [7, 8, 9, 10]


def test_a_search_for_line_starts_finds_no_line_past_the_last(tmp_path: Path) -> None:
    doc = document(tmp_path / "a.log", story())
    assert doc.search("^", 31) == 32
    assert doc.search("^", 32) is None
    assert shown(doc, FilterSpec(regex="^")) == list(range(33))
    assert shown(doc, FilterSpec(regex="$"), 30) == [30, 31, 32]


def test_a_last_line_without_its_newline_matches_from_its_start(tmp_path: Path) -> None:
    doc = document(tmp_path / "a.log", [INIT, "Decode batch, unfinished"], end="")
    assert shown(doc, FilterSpec(regex="Decode"), 0, 2) == [1]
    assert shown(doc, FilterSpec(regex="^Decode"), 0, 2) == [1]


def test_a_bracket_later_in_a_skipped_batch_line_is_not_part_of_its_rank(tmp_path: Path) -> None:
    bracketed = (
        "[2026-11-30 09:00:{:02d} TP0] Decode batch [#1], #running-req: 1, gen throughput (token/s): 40.50"
    )
    doc = document(tmp_path / "a.log", [READY, *(bracketed.format(k) for k in range(5)), LOAD])
    assert shown(doc, FilterSpec(ranks=frozenset({"TP0"}))) == [1, 2, 3, 4, 5]


def test_empty_lines_count_where_a_chunk_starts(tmp_path: Path) -> None:
    doc = document(tmp_path / "a.log", ["", "abc", "", "", "x"], scan=False)
    assert doc.search("abc", -1) == 1
    assert shown(doc, FilterSpec(regex="^$")) == [0, 2, 3]
    assert shown(doc, FilterSpec(regex="^x")) == [4]


def test_lines_of_later_chunks_keep_their_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logindex, "BLOCK", 128)
    monkeypatch.setattr(logindex, "CHUNK_BLOCKS", 1)
    lines = [f"line {k:03d} " + "x" * 53 for k in range(40)]  # checkpoints at lines 3, 5, 7 ...
    lines[4] = lines[4].replace("x", "y", 1)
    doc = document(tmp_path / "a.log", lines, scan=False)
    assert shown(doc, FilterSpec(), 5, 9) == [5, 6, 7, 8]
    assert shown(doc, FilterSpec(), 6, 7) == [6]
    assert doc.search("y", 3) == 4  # the line just after, though a checkpoint starts the one after it
