"""What the tracker says about watchdog hangs, import warnings, manager crashes and cut tracebacks
(issue 27's mutation survivors: the collective window's edge, a rank timing out twice, the words of an
import warning's note, the process a manager's crash names, a frame the tracker cannot read)."""

from __future__ import annotations

from gdnconsole.sglang.stages import Stage
from gdnconsole.sglang.tracker import COLLECTIVE_WINDOW_S, Problem, StageTracker, Startup

WATCHDOG = "Watchdog timeout (self.watchdog_timeout=300)"
HEADER = "Traceback (most recent call last):"
LOOP_FRAME = (
    '  File "/usr/lib/python3/site-packages/sglang/srt/managers/scheduler.py", line 1, in event_loop_normal'
)
LOAD_END = (
    "Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=10.00 GB, mem usage=5.00 GB."
)


def at(second: float, message: str, rank: str | None = None) -> str:
    return f"[2026-11-30 09:{int(second) // 60:02d}:{int(second) % 60:02d}{' ' + rank if rank else ''}] {message}"


def read(*lines: str) -> Startup:
    tracker = StageTracker()
    for line in lines:
        tracker.feed(line)
    assert tracker.current is not None
    return tracker.current


def problems(*lines: str) -> list[Problem]:
    return read(*lines).problems


# -- watchdog hangs ---------------------------------------------------------------------------------------


THREE_RANKS = (at(0, "x", "TP0"), at(0, "x", "TP1"), at(0, "x", "TP2"))


def test_timeouts_on_some_ranks_within_the_window_are_one_hang_of_the_first_rank() -> None:
    [hang] = problems(*THREE_RANKS, at(1, WATCHDOG, "TP0"), at(1 + COLLECTIVE_WINDOW_S, WATCHDOG, "TP1"))
    assert (hang.rank, hang.ranks, hang.summary) == ("TP0", ["TP0", "TP1"], WATCHDOG)


def test_a_timeout_past_the_window_is_a_hang_of_its_own() -> None:
    first, second = problems(
        *THREE_RANKS, at(1, WATCHDOG, "TP0"), at(2 + COLLECTIVE_WINDOW_S, WATCHDOG, "TP1")
    )
    assert (first.ranks, second.ranks) == (["TP0"], ["TP1"])


def test_the_same_rank_timing_out_again_is_reported_again() -> None:
    first, second = problems(*THREE_RANKS, at(1, WATCHDOG, "TP0"), at(2, WATCHDOG, "TP0"))
    assert (first.ranks, second.ranks) == (["TP0"], ["TP0"])


def test_every_rank_timing_out_is_a_collective_hang_blamed_on_none() -> None:
    [hang] = problems(at(1, WATCHDOG, "TP0"), at(2, WATCHDOG, "TP1"))
    assert hang.rank is None and hang.collective
    assert hang.summary == (
        f"{WATCHDOG} on all 2 ranks at once: a collective hang (every rank waited in the same collective "
        "operation), not one rank's fault"
    )


# -- import warnings --------------------------------------------------------------------------------------


def test_an_import_warnings_note_names_the_module_before_its_first_colon() -> None:
    [warning] = problems(
        at(1, "Ignore import error when loading sglang.srt.models.foo: No module named 'x': y Likely causes")
    )
    assert warning.summary == (
        "Ignore import error when loading sglang.srt.models.foo: No module named 'x': y"
        " — not fatal unless sglang.srt.models.foo holds the architecture being served"
    )


def test_torchcodec_missing_says_what_is_off() -> None:
    [warning] = problems(at(1, "torchcodec is unavailable"))
    assert warning.summary == (
        "torchcodec is unavailable — not fatal: SGLang starts on without torchcodec (audio decoding is off)"
    )


# -- crashes --------------------------------------------------------------------------------------------------


def test_a_managers_crash_names_its_process() -> None:
    [crash] = problems("[2025-08-15 14:25:48] DetokenizerManager hit an exception: boom")
    assert crash.process == "detokenizer"


def test_an_exception_line_in_a_block_stays_the_summary_over_later_frames() -> None:
    [crash] = problems(
        HEADER, '  File "/x/a.py", line 1, in f', "RuntimeError: boom", '  File "/x/b.py", line 2, in g'
    )
    assert (crash.summary, crash.explained) == ("RuntimeError: boom", True)


def test_a_frame_the_tracker_cannot_read_still_says_the_exception_line_is_missing() -> None:
    [crash] = problems(HEADER, '  File "<frozen importlib._bootstrap>", line ?')
    assert crash.summary == "Traceback; its exception line is not in the log"


def test_a_request_loop_frame_after_startup_lines_without_args_is_the_schedulers_readiness() -> None:
    # an excerpt that begins after the args line: the loading line proves startup, so the loop's frame
    # proves only that the scheduler got ready (the loop runs in warm-up too), not that it served
    startup = read(at(1, LOAD_END), HEADER, LOOP_FRAME)
    assert not startup.saw_args
    assert startup.stage is Stage.SCHEDULER_READY and startup.problems[0].stage is Stage.SCHEDULER_READY
