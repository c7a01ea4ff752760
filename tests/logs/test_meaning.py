"""What a log's lines mean, as the log view reads it back: each line's stage and severity, the folds, the
first error, the lines of a severity in a range, the walk over ascending (and backward) line numbers."""

from __future__ import annotations

import pytest

from gdnconsole.logs.meaning import LogMeaning, classified_text, context_stage
from gdnconsole.sglang.stages import Severity, Stage

DECODE = "Decode batch, #running-req: 1, #token: 900, token usage: 0.01, gen throughput (token/s): 61.20, #queue-req: 0"
LOG = [
    "[2026-11-30 09:00:00] server_args=ServerArgs(model_path='Q', tp_size=2)",  # 0
    "[2026-11-30 09:00:01 TP0] Load weight begin. avail mem=46.93 GB",  # 1
    "[2026-11-30 09:00:02 TP0] KV Cache is allocated. #tokens: 84512, K size: 1.29 GB, V size: 1.29 GB",  # 2
    "[2026-11-30 09:00:02 TP1] Load weight begin. avail mem=46.93 GB",  # 3: its own stage, behind the log's
    "[2026-11-30 09:00:03] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",  # 4
    "[2026-11-30 09:00:04] The server is fired up and ready to roll!",  # 5
    "[2026-11-30 09:00:05 TP0] some message of its own",  # 6: no stage of its own: the log's
    '[2026-11-30 09:00:06] INFO:     127.0.0.1:41234 - "POST /generate HTTP/1.1" 200 OK',  # 7: after ready
    "[2026-11-30 09:00:07 TP0] Health check failed. Server couldn't get a response",  # 8: an error
    "[2026-11-30 09:00:08 TP1] Scheduler hit an exception: Traceback (most recent call last):",  # 9
    "RuntimeError: boom",  # 10: the block's last line
]
ALL = frozenset(Severity)


@pytest.fixture
def meaning() -> LogMeaning:
    read = LogMeaning()
    assert read.feed_chunk(("\n".join(LOG) + "\n").encode()) == len(LOG)
    return read


def test_each_line_means_its_own_stage_else_its_logs(meaning: LogMeaning) -> None:
    got = [meaning.seen_at_or_before(n) for n in range(len(LOG))]
    assert got == [
        (0, Stage.STARTING, Severity.INFO),
        (1, Stage.LOADING, Severity.INFO),
        (2, Stage.MEMORY, Severity.INFO),
        (3, Stage.LOADING, Severity.INFO),
        (4, Stage.LISTENING, Severity.INFO),
        (5, Stage.READY, Severity.INFO),
        (6, Stage.READY, Severity.INFO),
        (7, Stage.SERVING, Severity.INFO),
        (8, Stage.SERVING, Severity.ERROR),
        (9, Stage.SERVING, Severity.FATAL),
        (10, Stage.SERVING, Severity.FATAL),
    ]
    assert meaning.ranks == {"TP0", "TP1"} and meaning.fed == len(LOG)


def test_a_two_line_traceback_folds_to_its_error_line(meaning: LogMeaning) -> None:
    [fold] = meaning.folds()
    assert (fold.first, fold.last, fold.summary, fold.severity, fold.size) == (9, 10, 10, Severity.FATAL, 2)


def test_the_first_error_counts_errors_not_only_fatals(meaning: LogMeaning) -> None:
    assert meaning.first_error() == 8
    assert meaning.first_error() == 8  # kept, and read again


def test_lines_of_a_severity_in_a_range_include_its_start_not_its_stop(meaning: LogMeaning) -> None:
    assert meaning.seen_with(3, 8, ALL) == [3, 4, 5, 6, 7]
    assert meaning.seen_with(0, len(LOG), frozenset({Severity.ERROR, Severity.FATAL})) == [8, 9, 10]


def test_the_walker_goes_forward_and_back(meaning: LogMeaning) -> None:
    walker = meaning.walker()
    assert [walker.at(n) for n in (3, 8, 1, 10, 0, 4)] == [
        (True, Stage.LOADING),
        (True, Stage.SERVING),
        (True, Stage.LOADING),
        (True, Stage.SERVING),
        (True, Stage.STARTING),
        (True, Stage.LISTENING),
    ]


def test_the_walker_over_lines_the_scan_skipped_gives_the_last_seen_lines_stage() -> None:
    run = [f"[2026-11-30 09:01:{s:02d} TP0] {DECODE}" for s in range(6)]
    read = LogMeaning()
    read.feed_chunk(("\n".join([*LOG[:6], *run]) + "\n").encode())
    walker = read.walker()
    seen = [walker.at(n) for n in range(6, 12)]
    assert seen[0] == (True, Stage.SERVING)  # a run's first line is kept
    assert any(not kept and stage is Stage.SERVING for kept, stage in seen[1:-1]), seen


def test_a_walker_on_an_empty_log_has_seen_nothing() -> None:
    assert LogMeaning().walker().at(0) == (False, None)


def test_every_change_gives_a_later_version() -> None:
    read = LogMeaning()
    versions = [read.version]
    read.feed_chunk((LOG[0] + "\n").encode())
    versions.append(read.version)
    read.fed_through(5)
    versions.append(read.version)
    read.fed_through(6)
    versions.append(read.version)
    read.reset()
    versions.append(read.version)
    assert versions == sorted(set(versions)), versions


@pytest.mark.parametrize(
    ("kind", "context", "stage"),
    [
        ("decode_batch", None, Stage.SERVING),
        ("prefill_batch", None, Stage.SERVING),
        ("access", None, None),
        ("access", Stage.READY, Stage.SERVING),
        ("access", Stage.LISTENING, Stage.WARMUP),
        ("prefill_batch", Stage.GRAPHS, Stage.GRAPHS),
    ],
)
def test_batch_and_access_lines_take_their_meaning_from_context(
    kind: str, context: Stage | None, stage: Stage | None
) -> None:
    assert context_stage(kind, context) is stage


def test_a_line_that_is_not_utf8_is_read_with_replacements() -> None:
    assert classified_text(b"ok \xff\xfe end") == "ok \ufffd\ufffd end"
