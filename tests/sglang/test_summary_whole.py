"""`log summarize --json` whole: every key of the summary, for a server fired up and for one that crashed."""

from __future__ import annotations

from gdnconsole.sglang.events import classify
from gdnconsole.sglang.logline import parse
from gdnconsole.sglang.stages import Severity
from gdnconsole.sglang.summary import summary
from gdnconsole.sglang.tracker import StageTracker

UP = """\
[2026-11-30 09:00:00] Attention backend not specified. Use flashinfer backend by default.
[2026-11-30 09:00:00] server_args=ServerArgs(model_path='Q', tp_size=2)
[2026-11-30 09:00:01 TP1] Load weight begin. avail mem=46.93 GB
[2026-11-30 09:00:02 TP1] Decode out of memory happened. #retracted_reqs: 1
[2026-11-30 09:00:03] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)
[2026-11-30 09:00:04] The server is fired up and ready to roll!"""
CRASH = """
[2026-11-30 09:00:05 TP1] Scheduler hit an exception: Traceback (most recent call last):
RuntimeError: boom"""


def summarize(text: str) -> dict[str, object]:
    tracker = StageTracker()
    for line in text.split("\n"):
        tracker.feed(line)
    return summary(tracker, file="serve.log", lines=tracker.lines)


def test_a_server_fired_up_summarized_whole() -> None:
    assert summarize(UP) == {
        "file": "serve.log",
        "lines": 6,
        "sglang": True,
        "startups": 1,
        "stage": "ready",
        "ready": True,
        "fatal": None,
        "warnings": [
            {
                "line": 1,
                "rank": None,
                "summary": "Attention backend not specified. Use flashinfer backend by default.",
                "count": 1,
                "ranks": [],
            },
            {
                "line": 4,
                "rank": "TP1",
                "summary": "Decode out of memory happened. #retracted_reqs: 1",
                "count": 1,
                "ranks": ["TP1"],
            },
        ],
        "ranks": {"TP1": {"stage": "ready", "weights_gb": None, "avail_gb": 46.93, "kv_tokens": None}},
        "spec": None,
        "gen_throughput": None,
        # the retraction proves the scheduler's request loop ran: it was ready
        "durations": {"starting": 1.0, "loading": 1.0, "scheduler_ready": 1.0, "listening": 1.0},
        "kernels": {"attention": "flashinfer"},
        "memory": {"TP1": {"free": 46.93}},
    }


def test_a_crash_is_summarized_by_its_line_rank_stage_and_error() -> None:
    assert summarize(UP + CRASH)["fatal"] == {
        "line": 8,
        "rank": "TP1",
        "process": "scheduler",
        "ranks": None,
        "stage": "ready",
        "summary": "RuntimeError: boom",
        "hint": None,
    }


def test_a_prefix_rule_matches_only_at_the_start_of_the_message() -> None:
    event = classify(parse("[2026-11-30 09:00:02 TP0] The operator noted: Load weight begin. avail mem=1 GB"))
    assert event.kind == "message"


def test_a_fatal_line_that_ends_in_a_traceback_header_opens_the_block() -> None:
    event = classify(
        parse("[2026-11-30 09:00:02 TP0] Capture cuda graph failed: Traceback (most recent call last):")
    )
    assert (event.kind, event.severity, event.opens_block) == ("graph_failed", Severity.FATAL, True)
