"""The tracker at its edges: what the GPU memory split, the alerts and the timeline read from it, each
pinned where a slip would go unnoticed (issue 21's mutation survivors: draft memory, relaunch detection,
tp = 1 labels, warm-up against serving, the running stage's duration, block summaries)."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.events import Event
from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.sglang.tracker import Problem, StageTracker, Startup, stage_durations
from tests.sglang.test_tracker import CT129_STARTUP, READY_TAIL, feed

DAY = "2026-11-30"
ATTENTION = "Attention backend not specified. Use flashinfer backend by default."
ARGS = "server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B', tp_size=2)"
RUNNING_ON = "INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)"
STARTED = "INFO:     Started server process [4242]"
FIRED_UP = "The server is fired up and ready to roll!"
PREFILL = "Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0"
DECODE = "Decode batch, #running-req: 1, #token: 900, token usage: 0.01, cuda graph: True, gen throughput (token/s): 61.20, #queue-req: 0"
ACCESS = 'INFO:     127.0.0.1:41234 - "POST /generate HTTP/1.1" 200 OK'
DEPRECATED = "Endpoint '/get_model_info' is deprecated and will be removed in a future version."
WATCHDOG = "Watchdog timeout (self.watchdog_timeout=300)"
LOOP_FRAME = (
    '  File "/usr/lib/python3/site-packages/sglang/srt/managers/scheduler.py", line 1, in event_loop_normal'
)
GRAPH_FRAME = '  File "/usr/lib/python3/site-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 1, in __init__'


def at(second: float, message: str, rank: str | None = None) -> str:
    """A line in SGLang's frame at 09:00:SS(.mmm) of the day, with a rank prefix when given."""
    whole, ms = divmod(round(second * 1000), 1000)
    stamp = f"{DAY} 09:{whole // 60:02d}:{whole % 60:02d}" + (f".{ms:03d}" if ms else "")
    return f"[{stamp}{' ' + rank if rank else ''}] {message}"


def lines(*rows: str) -> str:
    return "\n".join(rows)


def events_of(text: str) -> list[Event]:
    tracker = StageTracker()
    return [event for row in text.split("\n") for event in tracker.feed(row)]


def only(text: str) -> Startup:
    tracker = feed(text)
    assert len(tracker.startups) == 1, [s.first_line for s in tracker.startups]
    startup = tracker.current
    assert startup is not None
    return startup


# A server at LISTENING: ranks up, uvicorn running, nothing served yet.
LISTENING = lines(
    at(0, ATTENTION),
    at(0, ARGS),
    at(1, "Load weight begin. avail mem=46.93 GB", "TP0"),
    at(1, "Load weight begin. avail mem=46.93 GB", "TP1"),
    at(2, "Capture cuda graph end. Time elapsed: 0.91 s. mem usage=0.44 GB. avail mem=15.96 GB.", "TP0"),
    at(2, "Capture cuda graph end. Time elapsed: 0.91 s. mem usage=0.44 GB. avail mem=15.96 GB.", "TP1"),
    at(3, "max_total_num_tokens=84512, max_running_requests=48, context_len=262144", "TP0"),
    at(4, STARTED),
    at(4, RUNNING_ON),
)


# -- GPU memory: what the target and the draft model hold ---------------------------------------------


def test_the_draft_models_weights_and_graphs_add_to_the_targets() -> None:
    startup = only(
        lines(
            at(0, ARGS),
            at(
                1,
                "Load weight end. elapsed=40.12 s, type=Qwen3_5, avail mem=20.87 GB, mem usage=25.64 GB.",
                "TP0",
            ),
            at(
                2,
                "Load weight end. elapsed=1.50 s, type=Qwen3_5MTP, avail mem=19.80 GB, mem usage=1.07 GB.",
                "TP0",
            ),
            at(3, "KV Cache is allocated. #tokens: 84512, K size: 1.29 GB, V size: 1.29 GB", "TP0"),
            at(3, "KV Cache is allocated. #tokens: 1024, K size: 0.01 GB, V size: 0.01 GB", "TP0"),
            at(
                5,
                "Capture cuda graph end. Time elapsed: 5.91 s. mem usage=0.44 GB. avail mem=15.96 GB.",
                "TP0",
            ),
            at(
                6,
                "Capture draft cuda graph end. Time elapsed: 1.00 s. mem usage=0.12 GB. avail mem=15.80 GB.",
                "TP0",
            ),
            at(
                7,
                "Capture cuda graph end. Time elapsed: 1.00 s. mem usage=0.25 GB. avail mem=15.55 GB.",
                "TP0",
            ),
        )
    )
    tp0 = startup.ranks["TP0"]
    assert tp0.weights_gb == 25.64 and tp0.draft_weights_gb == 1.07
    assert tp0.numbers["kv_tokens"] == 84512  # the draft's pool repeats the line: the target's count stays
    assert tp0.numbers["graph_mem_gb"] == pytest.approx(0.44 + 0.25)  # each graph_end adds its own
    assert tp0.numbers["k_gb"] == 0.01  # the other numbers are the latest line's


def test_a_rank_without_a_draft_has_no_draft_weights() -> None:
    startup = only(CT129_STARTUP + READY_TAIL)
    assert startup.ranks["TP0"].draft_weights_gb is None
    assert startup.ranks["TP0"].numbers["graph_mem_gb"] == 0.44


def test_the_port_pid_and_throughput_come_from_their_lines() -> None:
    startup = only(
        lines(LISTENING, at(5, FIRED_UP), at(6, DECODE, "TP0"), at(7, "Decode batch, #running-req: 1", "TP0"))
    )
    assert startup.port == 30000 and startup.pid == 4242
    assert startup.gen_throughput == 61.2  # a decode line without the figure keeps the last one


# -- startups: a relaunch in the same file ------------------------------------------------------------


def test_notices_before_the_args_belong_to_one_startup() -> None:
    startup = only(
        lines(
            at(0, ATTENTION),
            at(0, "Max running requests is reset to 48."),
            at(0, ARGS),
            at(0, "Spec v2 is enabled."),
        )
    )
    assert startup.first_line == 1 and startup.saw_args


def test_a_notice_after_a_server_moved_on_starts_the_next_startup() -> None:
    tracker = feed(lines(LISTENING, at(5, FIRED_UP), at(9, ATTENTION), at(9, ARGS)))
    assert [s.first_line for s in tracker.startups] == [1, 11]
    assert [s.index for s in tracker.startups] == [0, 1]
    assert tracker.startups[0].ready and tracker.startups[1].stage is Stage.STARTING


def test_an_args_line_after_a_server_moved_on_starts_the_next_startup() -> None:
    tracker = feed(lines(LISTENING, at(9, ARGS)))
    assert [s.first_line for s in tracker.startups] == [1, 10]


def test_a_second_args_dump_is_a_second_launch_even_before_any_stage() -> None:
    tracker = feed(lines(at(0, ARGS), at(5, ARGS)))
    assert [s.first_line for s in tracker.startups] == [1, 2]


def test_two_launches_refused_at_argument_processing_are_two_startups() -> None:
    refused = lines(at(0, ATTENTION), "Traceback (most recent call last):", "AssertionError")
    tracker = feed(lines(refused, refused))
    assert [s.first_line for s in tracker.startups] == [1, 4]
    assert all(s.fatal is not None and s.ended and s.stage is Stage.STARTING for s in tracker.startups)


def test_a_server_that_crashed_after_ready_is_not_ready() -> None:
    startup = only(
        lines(
            LISTENING,
            at(5, FIRED_UP),
            at(6, "Scheduler hit an exception: Traceback (most recent call last):", "TP0"),
        )
    )
    assert startup.stage is Stage.READY and startup.fatal is not None and not startup.ready


# -- labels: which process a line is from --------------------------------------------------------------


def test_unprefixed_scheduler_lines_at_tp1_are_rank_tp0() -> None:
    startup = only(
        lines(
            at(0, ARGS),
            at(1, "Load weight begin. avail mem=46.93 GB"),
            at(2, "Load weight end. elapsed=1.00 s, type=Qwen3, avail mem=30.00 GB, mem usage=16.00 GB."),
            at(3, STARTED),
        )
    )
    assert set(startup.ranks) == {"TP0"} and startup.ranks["TP0"].label == "TP0"
    assert startup.ranks["TP0"].weights_gb == 16.0 and startup.ranks["TP0"].started[Stage.LOADING] > 0
    assert set(startup.scheduler_ranks()) == {"TP0"}


def test_a_prefixed_line_of_no_stage_still_shows_its_rank() -> None:
    startup = only(lines(at(0, ARGS), at(1, "some message of its own", "TP3")))
    assert set(startup.ranks) == {"TP3"} and startup.ranks["TP3"].stage is Stage.STARTING


def test_the_main_process_never_becomes_a_rank() -> None:
    startup = only(lines(LISTENING, at(5, FIRED_UP), at(6, ACCESS), at(8, DECODE, "TP0")))
    assert set(startup.ranks) == {"TP0", "TP1"}
    # the access line at :06 is the main process's: TP0 serves from its own decode line at :08
    assert startup.ranks["TP0"].started[Stage.SERVING] - startup.started[Stage.LOADING] == 7.0


def test_uvicorn_running_raises_every_rank_to_listening() -> None:
    startup = only(LISTENING)
    assert {label: r.stage for label, r in startup.ranks.items()} == {
        "TP0": Stage.LISTENING,
        "TP1": Stage.LISTENING,
    }
    assert Stage.LISTENING in startup.seen and Stage.SCHEDULER_READY in startup.seen


def test_an_unprefixed_crash_at_tp1_makes_no_nameless_rank() -> None:
    startup = only(
        lines(
            at(0, ARGS),
            at(1, "Load weight begin. avail mem=46.93 GB"),
            at(2, "Scheduler hit an exception: Traceback (most recent call last):"),
            GRAPH_FRAME,
            "RuntimeError: CUDA error: out of memory",
        )
    )
    assert set(startup.ranks) == {"TP0"} and startup.stage is Stage.GRAPHS
    assert startup.fatal is not None and startup.fatal.stage is Stage.GRAPHS and startup.fatal.rank is None


def test_a_ranks_crash_frame_moves_that_rank() -> None:
    startup = only(
        lines(
            at(0, ARGS),
            at(1, "Load weight begin. avail mem=46.93 GB", "TP0"),
            at(1, "Load weight begin. avail mem=46.93 GB", "TP1"),
            at(2, "Scheduler hit an exception: Traceback (most recent call last):", "TP1"),
            GRAPH_FRAME,
            "RuntimeError: CUDA error: out of memory",
        )
    )
    assert startup.ranks["TP1"].stage is Stage.GRAPHS and startup.ranks["TP0"].stage is Stage.LOADING
    assert Stage.GRAPHS not in startup.ranks["TP1"].started  # a traceback's lines carry no time
    fatal = startup.fatal
    assert fatal is not None and (fatal.rank, fatal.stage, fatal.line) == ("TP1", Stage.GRAPHS, 6)


def test_a_ranks_warning_is_at_that_ranks_own_stage() -> None:
    startup = only(
        lines(
            at(0, ARGS),
            at(1, "Load weight begin. avail mem=46.93 GB", "TP1"),
            at(2, "KV Cache is allocated. #tokens: 84512, K size: 1.29 GB, V size: 1.29 GB", "TP0"),
            at(3, "Parameter lm_head.weight not found in params_dict", "TP1"),
        )
    )
    [warning] = startup.warnings
    assert startup.stage is Stage.MEMORY and (warning.rank, warning.stage) == ("TP1", Stage.LOADING)


# -- warm-up or serving ---------------------------------------------------------------------------------


def stages_of(text: str, *tail: str) -> list[Stage | None]:
    """The stage the tracker gave each of ``tail``'s lines, read after ``text``."""
    return [e.stage for e in events_of(lines(text, *tail))[-len(tail) :]]


def test_before_fired_up_batch_and_access_lines_are_the_warmups() -> None:
    assert stages_of(LISTENING, at(5, PREFILL, "TP0"), at(5, ACCESS), at(5, WATCHDOG, "TP0")) == [
        Stage.WARMUP,
        Stage.WARMUP,
        Stage.WARMUP,
    ]


def test_after_fired_up_they_are_serving() -> None:
    tail = (at(6, PREFILL, "TP0"), at(6, ACCESS), at(6, WATCHDOG, "TP0"), at(6, DECODE, "TP0"))
    assert stages_of(lines(LISTENING, at(5, FIRED_UP)), *tail) == [Stage.SERVING] * 4


def test_in_an_excerpt_without_uvicorn_a_batch_line_proves_serving_but_an_access_line_does_not() -> None:
    assert stages_of(at(0, PREFILL, "TP0")) == [Stage.SERVING]
    assert stages_of(at(0, WATCHDOG, "TP0")) == [Stage.SERVING]
    assert stages_of(at(0, ACCESS)) == [None]
    assert only(at(0, ACCESS)).stage is Stage.STARTING


def test_the_deprecated_model_info_call_is_warmup_only_between_listening_and_ready() -> None:
    assert stages_of(LISTENING, at(5, DEPRECATED)) == [Stage.WARMUP]
    assert stages_of(lines(LISTENING, at(5, FIRED_UP)), at(6, DEPRECATED)) == [None]
    assert stages_of(at(0, ARGS), at(1, DEPRECATED)) == [None]


def test_a_watchdog_while_loading_keeps_the_stage_but_at_listening_it_is_the_warmups() -> None:
    loading = lines(at(0, ARGS), at(1, "Load weight begin. avail mem=46.93 GB", "TP0"))
    assert stages_of(loading, at(2, WATCHDOG, "TP0")) == [None]
    assert stages_of(LISTENING, at(5, WATCHDOG, "TP0")) == [Stage.WARMUP]


def test_a_crash_in_the_request_loop_is_in_warmup_before_fired_up_and_serving_after() -> None:
    crash = (
        at(6, "Scheduler hit an exception: Traceback (most recent call last):", "TP0"),
        LOOP_FRAME,
        "KeyError: 3",
    )
    during_warmup = only(lines(LISTENING, *crash)).fatal
    after_ready = only(lines(LISTENING, at(5, FIRED_UP), *crash)).fatal
    assert during_warmup is not None and during_warmup.stage is Stage.WARMUP
    assert after_ready is not None and after_ready.stage is Stage.SERVING


def test_an_excerpt_that_begins_inside_the_request_loops_traceback_is_serving() -> None:
    startup = only(lines(LOOP_FRAME, "    self.process_batch_result(batch, result)"))
    assert startup.stage is Stage.SERVING


def test_batch_lines_before_fired_up_were_the_warmups_and_serving_starts_after() -> None:
    startup = only(lines(LISTENING, at(5, DECODE, "TP0"), at(6, FIRED_UP), at(8, DECODE, "TP0")))
    assert startup.stage is Stage.SERVING and Stage.SERVING in startup.seen
    assert startup.started[Stage.SERVING] - startup.started[Stage.READY] == 2.0
    assert startup.ranks["TP0"].stage is Stage.SERVING


def test_a_warmup_decode_before_fired_up_does_not_count_as_serving() -> None:
    startup = only(lines(LISTENING, at(5, DECODE, "TP0"), at(6, FIRED_UP)))
    assert startup.stage is Stage.READY and Stage.SERVING not in startup.seen
    assert Stage.SERVING not in startup.started and startup.ranks["TP0"].stage is Stage.READY


def test_a_second_fired_up_line_does_not_take_serving_back() -> None:
    startup = only(lines(LISTENING, at(5, FIRED_UP), at(6, DECODE, "TP0"), at(7, FIRED_UP)))
    assert startup.stage is Stage.SERVING and startup.saw_ready


# -- durations -------------------------------------------------------------------------------------------


def test_the_running_stage_lasts_until_the_last_line() -> None:
    startup = only(
        lines(
            at(0, ARGS),
            at(1, "Load weight begin. avail mem=46.93 GB", "TP0"),
            at(
                3.25,
                "Load weight end. elapsed=1.00 s, type=Q, avail mem=20.00 GB, mem usage=25.64 GB.",
                "TP0",
            ),
            at(4.5, "KV Cache is allocated. #tokens: 84512, K size: 1.29 GB, V size: 1.29 GB", "TP0"),
            "an unframed line has no time",
        )
    )
    assert startup.last_time is not None and startup.last_time - startup.started[Stage.STARTING] == 4.5
    assert startup.durations() == {"starting": 1.0, "loading": 2.25, "loaded": 1.25}
    assert startup.durations(include_current=True) == {
        "starting": 1.0,
        "loading": 2.25,
        "loaded": 1.25,
        "memory": 0.0,
    }
    startup.last_time = startup.started[Stage.MEMORY] + 0.75
    assert startup.durations(include_current=True)["memory"] == 0.75


def test_stage_durations_in_milliseconds_never_negative() -> None:
    started = {Stage.STARTING: 100.0, Stage.LOADING: 101.23456, Stage.MEMORY: 101.0}
    # in stage order: loading began after the memory stage's first line (an excerpt's order) counts as 0
    assert stage_durations(started, None) == {"starting": 1.235, "loading": 0.0}
    assert stage_durations(started, 100.5) == {"starting": 1.235, "loading": 0.0, "memory": 0.0}
    assert stage_durations({Stage.STARTING: 0.0, Stage.LOADING: 1.23456}, 3.0) == {
        "starting": 1.235,
        "loading": 1.765,
    }


def test_a_ready_or_serving_server_has_no_running_duration() -> None:
    assert stage_durations({Stage.STARTING: 0.0, Stage.READY: 5.0}, 9.0) == {"starting": 5.0}
    assert stage_durations({Stage.STARTING: 0.0, Stage.SERVING: 5.0}, 9.0) == {"starting": 5.0}
    assert stage_durations({}, 9.0) == {}


def test_each_rank_keeps_when_it_began_each_stage() -> None:
    startup = only(lines(LISTENING, at(5, "Load weight begin. avail mem=46.93 GB", "TP1")))
    # TP1's second loading line (late, out of order) moves neither its stage nor when it began loading
    assert startup.ranks["TP1"].started[Stage.GRAPHS] - startup.ranks["TP1"].started[Stage.LOADING] == 1.0
    assert startup.ranks["TP1"].stage is Stage.LISTENING


def test_the_main_processs_numbers_stay_off_the_ranks() -> None:
    startup = only(LISTENING)
    assert startup.port == 30000
    assert all("port" not in r.numbers and "pid" not in r.numbers for r in startup.ranks.values())


def test_an_excerpt_that_starts_mid_load_and_then_shows_args_holds_two_startups() -> None:
    tracker = feed(lines(at(0, "Load weight begin. avail mem=46.93 GB", "TP0"), at(9, ARGS)))
    assert [s.first_line for s in tracker.startups] == [1, 2]


def test_a_summary_keeps_the_messages_own_last_letters() -> None:
    message = "Ignore import error when loading sglang.srt.models.mlx_lm: No module named MLX"
    [warning] = only(lines(at(0, ARGS), at(1, message))).warnings
    assert warning.summary.startswith(message + " — not fatal")  # then the console's word on it


# -- problems: summaries, blocks, lines ------------------------------------------------------------------


def test_a_scheduler_exception_cut_off_before_its_traceback_says_so() -> None:
    startup = only(
        lines(at(0, ARGS), at(1, "Scheduler hit an exception: Traceback (most recent call last):", "TP0"))
    )
    fatal = startup.fatal
    assert fatal is not None and fatal.summary == "Scheduler hit an exception"
    assert fatal.line == fatal.last_line == 2 and startup.ended


def test_a_one_line_warning_spans_its_own_line() -> None:
    startup = only(lines(at(0, ATTENTION)))
    [warning] = startup.warnings
    assert (warning.line, warning.last_line, warning.summary) == (1, 1, ATTENTION)


def test_a_long_error_is_clipped_to_300_characters() -> None:
    exact = "RuntimeError: " + "x" * 286
    long = "RuntimeError: " + "y" * 400
    first = only(lines(at(0, ARGS), "Traceback (most recent call last):", exact)).fatal
    second = only(lines(at(0, ARGS), "Traceback (most recent call last):", long)).fatal
    assert first is not None and first.summary == exact and len(exact) == 300
    assert second is not None and second.summary == long[:299] + "…" and len(second.summary) == 300


def test_the_lines_of_a_traceback_carry_no_stage_and_its_error_line_is_fatal() -> None:
    text = lines(
        at(0, ARGS),
        at(1, "Scheduler hit an exception: Traceback (most recent call last):", "TP0"),
        GRAPH_FRAME,
        "KeyError: 3",
    )
    opener, frame, error = events_of(text)[1:]
    assert frame.stage is None and error.stage is None
    assert (opener.severity, error.severity) == (Severity.FATAL, Severity.FATAL)


def test_an_uncaught_exception_is_fatal_but_a_warning_class_is_a_warning() -> None:
    fatal = events_of(lines(at(0, ARGS), "Traceback (most recent call last):", "ValueError: bad"))
    warned = events_of(lines(at(0, ARGS), "FutureWarning: this will change"))
    assert (fatal[1].severity, fatal[2].severity) == (Severity.FATAL, Severity.FATAL)
    startup = only(lines(at(0, ARGS), "FutureWarning: this will change"))
    assert warned[1].severity is Severity.WARNING and startup.fatal is None and len(startup.warnings) == 1


def test_an_exception_line_names_the_stage_it_proves() -> None:
    startup = only(
        lines(
            at(0, ARGS),
            at(1, "Load weight begin. avail mem=46.93 GB", "TP1"),
            at(2, "Scheduler hit an exception: Traceback (most recent call last):", "TP1"),
            "Exception: Capture cuda graph failed: CUDA out of memory.",
        )
    )
    assert startup.stage is Stage.GRAPHS and startup.ranks["TP1"].stage is Stage.GRAPHS
    assert startup.fatal is not None and startup.fatal.stage is Stage.GRAPHS


def test_only_lines_sglang_writes_count_as_sglangs() -> None:
    tracker = feed(lines("hello", at(0, ARGS), "plain text", at(1, "some message", "TP0")))
    assert tracker.sglang_lines == 2 and tracker.lines == 4


def test_a_problem_as_the_status_json_shows_it() -> None:
    problem = Problem(line=7, rank="TP1", stage=Stage.GRAPHS, severity=Severity.FATAL, summary="boom")
    assert problem.as_dict() == {"line": 7, "rank": "TP1", "stage": "graphs", "summary": "boom"}


def test_an_error_the_server_survives_is_neither_a_warning_nor_the_fatal() -> None:
    startup = only(
        lines(LISTENING, at(5, FIRED_UP), at(6, "Health check failed. Server couldn't get a response", "TP0"))
    )
    [error] = startup.problems[-1:]
    assert error.severity is Severity.ERROR and error.summary.startswith("Health check failed")
    assert error not in startup.warnings and startup.fatal is None and startup.ready
