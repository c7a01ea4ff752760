"""The log document's lines as the view shows them: their text made safe, their stage, severity and rank,
the preview read before the index exists, and what the user is told when the log restarts."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.logs.document import DISPLAY_CAP, LineInfo, LogDocument, display_text, restart_news
from gdnconsole.sglang.stages import Severity, Stage

INIT = "[2026-11-30 09:00:02 TP0] Init torch distributed begin."
LOAD = "[2026-11-30 09:00:03 TP0] Load weight begin. avail mem=46.93 GB"
PREFILL = "[2026-11-30 09:00:{:02d} TP0] Prefill batch, #new-seq: 1, #new-token: 7, #running-req: 0"
DECODE = "[2026-11-30 09:00:{:02d} TP1] Decode batch, #running-req: 1, gen throughput (token/s): 40.50"
ACCESS = '[2026-11-30 09:00:{:02d}] INFO:     127.0.0.1:41234 - "GET /model_info HTTP/1.1" 200 OK'
UVICORN = "[2026-11-30 09:00:49] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)"
READY = "[2026-11-30 09:00:51] The server is fired up and ready to roll!"
WARN = "[2026-11-30 09:00:00] Attention backend not specified. Use flashinfer backend by default."


def document(path: Path, lines: list[str], *, scan: bool = True) -> LogDocument:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    doc = LogDocument(path)
    doc.build_index()
    if scan:
        assert doc.scan()
    return doc


def meaning(infos: list[LineInfo]) -> list[tuple[int, Stage | None, Severity, str | None]]:
    return [(i.number, i.stage, i.severity, i.rank) for i in infos]


# -- what one line shows -------------------------------------------------------------------------------


def test_display_text_shows_the_last_carriage_state_tabs_and_control_characters() -> None:
    assert display_text("a\tb") == "a   b"
    assert display_text(" 10%\r 50%\r100% done") == "100% done"
    assert display_text("\x1b[31mred\x07") == "^[[31mred^G"
    assert display_text("--api-key s3cret") != "--api-key s3cret"
    assert "s3cret" not in display_text("api_key='s3cret'")


def test_display_text_keeps_the_first_display_cap_characters() -> None:
    assert display_text("x" * (DISPLAY_CAP + 10)) == "x" * DISPLAY_CAP
    assert display_text("x" * (DISPLAY_CAP - 1) + "\r") == "x" * (DISPLAY_CAP - 1)
    assert display_text("x" * DISPLAY_CAP + "\ry") == "x" * DISPLAY_CAP  # the rewrite is past what is kept


def test_a_line_body_moves_its_rank_to_a_tag(tmp_path: Path) -> None:
    doc = document(
        tmp_path / "a.log", [INIT, "[2026-11-30 09:00:49 DP0 TP1 EP1] Load weight end. x", "plain TP0]"]
    )
    first, grouped, plain = doc.read([0, 1, 2])
    assert (first.rank, first.body, first.raw) == (
        "TP0",
        "[2026-11-30 09:00:02] Init torch distributed begin.",
        INIT,
    )
    assert (grouped.rank, grouped.body) == ("DP0 TP1 EP1", "[2026-11-30 09:00:49] Load weight end. x")
    assert (plain.rank, plain.body) == (None, "plain TP0]")


def test_only_the_frames_own_rank_leaves_the_body(tmp_path: Path) -> None:
    lines = [
        "[2026-11-30 09:00:02 TP0] moved to TP0] here",
        "sglang  | [2026-11-30 09:00:02 TP0] Init torch distributed begin.",  # compose: the frame is not first
        "[rank0]: Traceback (most recent call last):",  # torch's prefix: a rank, no frame to take it from
        "[2026-11-30 09:00:02] cuda_graph_bs=[1, None]",
    ]
    doc = document(tmp_path / "a.log", lines, scan=False)
    assert [(i.rank, i.body) for i in doc.read(range(4))] == [
        ("TP0", "[2026-11-30 09:00:02] moved to TP0] here"),
        ("TP0", lines[1]),
        ("TP0", lines[2]),
        (None, lines[3]),
    ]


def test_bytes_that_are_not_utf8_are_read_as_replacement_characters(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"bad \xff byte\n" + INIT.encode() + b" \xfe\n")
    doc = LogDocument(path)
    doc.build_index()
    assert doc.scan()
    assert [i.raw for i in doc.read([0, 1])] == ["bad \ufffd byte", INIT + " \ufffd"]


def test_a_last_line_not_yet_ended_takes_its_context(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_text(f"{INIT}\n{LOAD}\n")
    doc = LogDocument(path)
    doc.build_index()
    assert doc.scan()
    with path.open("a") as fh:
        fh.write("still being written")
    doc.poll()  # the tracker is fed whole lines only
    assert (doc.fed, doc.index.line_count) == (2, 3)
    assert meaning(doc.read([2])) == [(2, Stage.LOADING, Severity.INFO, None)]
    assert doc.with_tracker(lambda tracker: len(tracker.startups)) == 1


def test_a_long_line_is_kept_to_display_cap_characters(tmp_path: Path) -> None:
    wide = "\U0001f600" * (DISPLAY_CAP + 5)  # four bytes a character
    doc = document(tmp_path / "a.log", ["x" * (DISPLAY_CAP + 1), "y" * DISPLAY_CAP, wide], scan=False)
    ascii_long, exact, emoji = doc.read([0, 1, 2])
    assert ascii_long.raw == "x" * DISPLAY_CAP and ascii_long.body == "x" * DISPLAY_CAP
    assert exact.raw == "y" * DISPLAY_CAP
    assert emoji.raw == "\U0001f600" * DISPLAY_CAP


# -- stage, severity, rank -----------------------------------------------------------------------------


def test_before_the_scan_each_line_is_classified_on_its_own(tmp_path: Path) -> None:
    lines = [INIT, LOAD, PREFILL.format(50), DECODE.format(52), ACCESS.format(50), "hello there", WARN]
    doc = document(tmp_path / "a.log", lines, scan=False)
    assert meaning(doc.read(range(9))) == [
        (0, Stage.DISTRIBUTED, Severity.INFO, "TP0"),
        (1, Stage.LOADING, Severity.INFO, "TP0"),
        (2, Stage.SERVING, Severity.INFO, "TP0"),  # a prefill batch with nothing before it: serving
        (3, Stage.SERVING, Severity.INFO, "TP1"),
        (4, None, Severity.INFO, None),
        (5, None, Severity.INFO, None),
        (6, Stage.STARTING, Severity.WARNING, None),
    ]


def test_lines_the_scan_skipped_take_the_stage_of_their_context(tmp_path: Path) -> None:
    lines = [
        INIT,
        LOAD,
        UVICORN,
        *(ACCESS.format(k) for k in range(4)),  # 3..6: 4 and 5 skipped by the scan
        READY,
        *(ACCESS.format(k) for k in range(4)),  # 8..11
        *(DECODE.format(k) for k in range(4)),  # 12..15
    ]
    doc = document(tmp_path / "a.log", lines)
    assert [(i.number, i.stage) for i in doc.read(range(20))] == [
        (0, Stage.DISTRIBUTED),
        (1, Stage.LOADING),
        (2, Stage.LISTENING),
        *((n, Stage.WARMUP) for n in range(3, 7)),  # requests before ready: warm-up
        (7, Stage.READY),
        *((n, Stage.SERVING) for n in range(8, 16)),
    ]
    assert [i.rank for i in doc.read(range(3, 16))] == [None] * 9 + ["TP1"] * 4
    assert {i.severity for i in doc.read(range(16))} == {Severity.INFO}


def test_a_line_the_tracker_saw_keeps_what_it_decided(tmp_path: Path) -> None:
    lines = [
        "[2026-11-30 09:05:45 TP1] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/x/scheduler.py", line 3934, in run_scheduler_process',
        "Exception: Capture cuda graph failed: CUDA out of memory.",
        "",
        "after the block",
    ]
    doc = document(tmp_path / "a.log", [INIT, *lines])
    frame = doc.read([2])[0]
    assert (frame.stage, frame.severity) == (Stage.DISTRIBUTED, Severity.FATAL)  # a traceback frame
    assert doc.read([2]) == doc.read([1, 2])[1:]


# -- the preview -----------------------------------------------------------------------------------------


def test_head_reads_the_first_lines_before_the_index(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_text(f"{INIT}\n{LOAD}\n{WARN}\npartial")
    doc = LogDocument(path)
    assert [(i.number, i.raw) for i in doc.head(2)] == [(0, INIT), (1, LOAD)]
    assert [i.raw for i in doc.head(9)] == [INIT, LOAD, WARN, "partial"]
    assert meaning(doc.head(1)) == [(0, Stage.DISTRIBUTED, Severity.INFO, "TP0")]
    path.write_text(f"{INIT}\n{LOAD}\n")
    assert [i.raw for i in doc.head(9)] == [INIT, LOAD]


def test_head_of_a_large_log_stops_at_the_last_whole_line_of_its_first_mib(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"".join(b"L%02d" % k + b"x" * 99_996 + b"\n" for k in range(12)))  # 10 whole in 1 MiB
    head = LogDocument(path).head(50)
    assert [i.raw[:3] for i in head] == [f"L{k:02d}" for k in range(10)]


def test_head_of_a_log_whose_first_line_is_longer_than_a_mib_shows_its_start(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"g" * (2 << 20) + b"\nnext\n")
    (only,) = LogDocument(path).head(5)
    assert only.raw == "g" * DISPLAY_CAP


def test_head_leaves_out_a_second_line_cut_by_the_first_mib(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"first\n" + b"g" * (2 << 20) + b"\n")
    assert [i.raw for i in LogDocument(path).head(5)] == ["first"]


def test_head_of_a_log_starting_with_a_nul_hole_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"\0\0\0" + INIT.encode() + b"\n")
    assert LogDocument(path).head(5) == []


def test_tail_previews_the_last_lines_numbered_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_text(f"{WARN}\n{INIT}\n{LOAD}\n")
    assert [(i.number, i.raw, i.rank) for i in LogDocument(path).tail(2)] == [
        (0, INIT, "TP0"),
        (1, LOAD, "TP0"),
    ]


# -- restarts ------------------------------------------------------------------------------------------


def test_restart_news_says_how_the_log_restarted() -> None:
    assert restart_news("truncated") == (
        "the log was truncated (copytruncate, or rewritten in place): reading it from its new start"
    )
    replaced = "the log was rotated or replaced: the old file was read to its end, now the new one"
    assert restart_news("replaced") == replaced
    assert restart_news(None) == replaced
    assert restart_news("") == replaced
    assert restart_news("missing") == "the log file is gone: waiting for it to come back"
    assert restart_news("appeared") is None
