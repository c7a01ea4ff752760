"""A traceback with no rank prefix and no exception line (an excerpt, a cut log): which process it was
in, read from its frames, and what its summary says; and what a fatal line alone says (issue 27's
mutation survivors in the tracker: the frame table, the bare summary, the opening line's hint)."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.stages import Severity
from gdnconsole.sglang.tracker import GRAPH_OOM_HINT, Problem, StageTracker

HEADER = "Traceback (most recent call last):"
SITE = "/usr/lib/python3/site-packages/sglang/srt"


def problems(*lines: str) -> list[Problem]:
    tracker = StageTracker()
    for line in lines:
        tracker.feed(line)
    assert tracker.current is not None
    return tracker.current.problems


def frame(path: str, func: str = "run") -> str:
    return f'  File "{path}", line 12, in {func}'


@pytest.mark.parametrize(
    ("module", "process"),
    [
        ("managers/scheduler.py", "scheduler"),
        ("managers/tp_worker.py", "scheduler"),
        ("managers/tp_worker_overlap_thread.py", "scheduler"),
        ("model_executor/model_runner.py", "scheduler"),
        ("managers/detokenizer_manager.py", "detokenizer"),
        ("managers/tokenizer_manager.py", "main"),
        ("entrypoints/http_server.py", "main"),
        ("server_args.py", "main"),
        ("layers/linear.py", None),  # a module that runs in more than one process
    ],
)
def test_a_bare_traceback_is_placed_in_the_process_its_frame_runs_in(
    module: str, process: str | None
) -> None:
    [problem] = problems(HEADER, frame(f"{SITE}/{module}"))
    assert problem.process == process
    assert problem.rank is None and problem.ranks == []  # nothing names a rank


def test_the_first_frame_that_names_a_process_decides() -> None:
    # frames run from the outermost call in: the first one the table knows names the process
    [problem] = problems(
        HEADER, frame(f"{SITE}/entrypoints/http_server.py"), frame(f"{SITE}/managers/scheduler.py")
    )
    assert problem.process == "main"


def test_a_bare_traceback_without_its_exception_line_says_where_it_stopped() -> None:
    [problem] = problems(HEADER, frame(f"{SITE}/managers/tp_worker.py", "forward_batch"))
    assert problem.severity is Severity.FATAL
    assert problem.summary == (
        "Traceback; its exception line is not in the log (last frame: forward_batch in tp_worker.py:12)"
    )


def test_a_prefixed_bare_traceback_names_its_rank() -> None:
    [problem] = problems(f"[2026-11-30 09:00:01 TP1] {HEADER}")
    assert (problem.summary, problem.rank, problem.ranks) == ("Traceback on TP1", "TP1", ["TP1"])
    assert problem.process == "scheduler"


def test_an_exception_line_without_a_header_keeps_its_own_words_over_its_frames() -> None:
    [problem] = problems("ValueError: bad thing", frame(f"{SITE}/server_args.py", "check"))
    assert (problem.summary, problem.explained) == ("ValueError: bad thing", True)
    assert problem.where == frame(f"{SITE}/server_args.py", "check").strip()


def test_a_fatal_graph_capture_line_alone_carries_the_oom_hint() -> None:
    oom = "[2026-11-30 09:00:01] Capture cuda graph failed: CUDA out of memory. Tried to allocate 2 GiB"
    [problem] = problems(oom)
    assert problem.severity is Severity.FATAL and problem.hint == GRAPH_OOM_HINT
    [other] = problems("[2026-11-30 09:00:01] Capture cuda graph failed: an illegal memory access")
    assert other.hint is None
