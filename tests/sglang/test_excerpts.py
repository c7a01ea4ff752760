"""Excerpts as people paste them: mid-run starts, old dialects, wrappers, root causes, warnings that matter.

Each fixture is the shape of a kind of real paste (a few lines written for the test, not a copy of one):
the stage must come from what the lines are, the fatal summary from the line that explains the failure.
"""

from __future__ import annotations

import pytest

from gdnconsole.sglang import logline
from gdnconsole.sglang.logline import Kind
from gdnconsole.sglang.stages import Stage
from gdnconsole.sglang.summary import summary
from gdnconsole.sglang.tracker import StageTracker

SITE = "/usr/lib/python3/site-packages/sglang/srt"


def read(text: str) -> dict[str, object]:
    tracker = StageTracker()
    for line in text.split("\n"):
        tracker.feed(line)
    return summary(tracker, file="x", lines=tracker.lines)


def fatal_of(result: dict[str, object]) -> dict[str, object]:
    fatal = result["fatal"]
    assert isinstance(fatal, dict)
    return fatal


def warnings_of(result: dict[str, object]) -> list[str]:
    warnings = result["warnings"]
    assert isinstance(warnings, list)
    return [w["summary"] for w in warnings]


# -- dialects and wrappers: each line still reads as SGLang's own ---------------------------------------


@pytest.mark.parametrize(
    ("line", "rank", "message"),
    [
        ("[16:43:29 TP0] Prefill batch. #new-seq: 1, #new-token: 7", "TP0", "Prefill batch."),  # 2024
        ("[16:43:29] Prompts loaded.", None, "Prompts loaded."),
        ("2025-08-15 14:25:48] DetokenizerManager hit an exception: x", None, "DetokenizerManager"),  # lost [
        ("  [2025-09-04 11:32:55] The server is fired up and ready to roll!", None, "The server"),  # indented
        (
            "2025-07-25T07:53:08.21748708+08:00 stdout F [2025-07-25 07:53:08 TP2] Scheduler hit an exception: x",
            "TP2",
            "Scheduler hit",
        ),  # containerd CRI
    ],
)
def test_other_dialects_and_wrappers_are_framed(line: str, rank: str | None, message: str) -> None:
    parsed = logline.parse(line)
    assert parsed.kind is Kind.FRAMED and parsed.rank == rank and parsed.message.startswith(message)
    assert parsed.time is not None


def test_unwrapping_keeps_traceback_frames_indented() -> None:
    cri = logline.parse(f'2025-07-25T07:53:08.2174+08:00 stdout F   File "{SITE}/x.py", line 1, in f')
    assert cri.kind is Kind.OTHER and cri.text.startswith('  File "')
    assert logline.parse(f'  File "{SITE}/x.py", line 1, in f').kind is Kind.OTHER
    assert logline.parse("2025-03-27 21:33:31,320 - INFO - flashinfer.jit: x").kind is Kind.LIBRARY


# -- excerpts that start mid-run: the stage from what the lines are -------------------------------------


def test_time_only_decode_lines_mean_serving_on_their_rank() -> None:
    result = read(
        "[04:40:55 TP0] Decode batch. #running-req: 2, #token: 4078, token usage: 0.00, "
        "gen throughput (token/s): 447.31, #queue-req: 0\n"
        "[04:40:57 TP0] Decode batch. #running-req: 1, #token: 4142, token usage: 0.00, "
        "gen throughput (token/s): 239.00, #queue-req: 0"
    )
    assert result["stage"] == "serving" and result["gen_throughput"] == 239.0
    assert list(result["ranks"]) == ["TP0"]  # type: ignore[call-overload]


def test_warmup_batches_before_fired_up_leave_the_stage_at_ready() -> None:
    prefill = "Prefill batch, #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00"
    head = (
        f"[2026-02-06 17:01:23] {prefill}\n"
        '[2026-02-06 17:01:23] INFO:     127.0.0.1:59686 - "POST /generate HTTP/1.1" 200 OK\n'
        "[2026-02-06 17:01:23] The server is fired up and ready to roll!"
    )
    assert read(head)["stage"] == "ready"
    assert read(head + f"\n[2026-02-06 17:02:00] {prefill}")["stage"] == "serving"


def test_frames_before_the_exception_give_the_stage() -> None:
    result = read(
        f'  File "{SITE}/mem_cache/memory_pool.py", line 736, in __init__\n'
        "    self._create_buffers()\n"
        f'  File "{SITE}/hardware_backend/npu/memory_pool_npu.py", line 57, in _create_buffers\n'
        "    self.kv_buffer = torch.zeros(\n"
        "RuntimeError: NPU out of memory. Tried to allocate 98.71 GiB (NPU 0; 60.96 GiB total capacity)\n"
        "[2026-03-03 14:53:15] Received sigquit from a child process. It usually means the child failed."
    )
    assert result["stage"] == "memory"
    fatal = fatal_of(result)
    assert fatal["stage"] == "memory" and fatal["rank"] is None
    assert str(fatal["summary"]).startswith("RuntimeError: NPU out of memory")


@pytest.mark.parametrize(
    ("path", "func", "stage"),
    [
        ("model_executor/model_runner.py", "init_torch_distributed", "distributed"),
        ("model_executor/model_runner.py", "load_model", "loading"),
        ("model_executor/model_runner.py", "init_memory_pool", "memory"),
        ("model_executor/model_runner.py", "init_cuda_graphs", "graphs"),
        ("model_executor/model_runner.py", "init_device_graphs", "graphs"),
        ("model_executor/cuda_graph_runner.py", "capture", "graphs"),
        ("managers/scheduler.py", "event_loop_overlap", "serving"),
        ("managers/schedule_batch.py", "get_model_worker_batch", "serving"),
        ("managers/tokenizer_manager.py", "handle_loop", "serving"),
        ("entrypoints/http_server.py", "_execute_server_warmup", "warmup"),
        ("model_executor/runner/decode_cuda_graph_runner.py", "__init__", "graphs"),
        ("mem_cache/memory_pool.py", "__init__", "memory"),
    ],
)
def test_a_traceback_of_frames_only_is_fatal_in_the_stage_its_frames_name(
    path: str, func: str, stage: str
) -> None:
    result = read(
        "deepseek-r1-1  | Traceback (most recent call last):\n"
        f'deepseek-r1-1  |   File "{SITE}/managers/scheduler.py", line 1748, in run_scheduler_process\n'
        "deepseek-r1-1  |     scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)\n"
        f'deepseek-r1-1  |   File "{SITE}/{path}", line 207, in {func}\n'
        "deepseek-r1-1  |     self.step()"
    )
    assert result["stage"] == stage and fatal_of(result)["stage"] == stage


def test_a_chained_capture_failure_keeps_the_first_cause_and_the_graphs_stage() -> None:
    result = read(
        '  File "/opt/conda/lib/python3.10/site-packages/torch/_ops.py", line 756, in __call__\n'
        "    return self._op(*args, **kwargs)\n"
        "RuntimeError: CUDA error: operation not permitted when stream is capturing\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/model_executor/cuda_graph_runner.py", line 336, in __init__\n'
        "    self.capture()"
    )
    fatal = fatal_of(result)
    assert result["stage"] == "graphs" and fatal["stage"] == "graphs"
    assert "operation not permitted when stream is capturing" in str(fatal["summary"])


def test_a_request_loop_crash_after_uvicorn_is_a_warmup_crash() -> None:
    result = read(
        "[2026-08-07 10:32:33] INFO:     Uvicorn running on http://0.0.0.0:14000 (Press CTRL+C to quit)\n"
        '[2026-08-07 10:32:34] INFO:     127.0.0.1:57394 - "GET /model_info HTTP/1.1" 200 OK\n'
        "[2026-08-07 10:32:34 TP1] multimem all-gather disabled (no multicast for world_size=2)\n"
        "[2026-08-07 10:32:36 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SITE}/managers/scheduler.py", line 1500, in run_event_loop\n'
        "    dispatch_event_loop(self)"
    )
    fatal = fatal_of(result)
    assert result["stage"] == "warmup" and fatal["stage"] == "warmup" and fatal["rank"] == "TP1"


def test_a_rank_that_named_no_stage_fails_in_the_stage_the_others_reached() -> None:
    result = read(
        "[2025-06-23 15:06:10 TP0] Init torch distributed begin.\n"
        "[2025-06-23 15:06:59 TP1] Found nccl from library libnccl.so.2\n"
        "[2025-06-23 15:37:01 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SITE}/managers/scheduler.py", line 2546, in run_scheduler_process'
    )
    fatal = fatal_of(result)
    assert fatal["stage"] == "distributed" and fatal["rank"] == "TP1"


def test_exception_in_run_tp_server_is_the_2024_scheduler_crash() -> None:
    result = read(
        "[23:17:01 TP4] Capture cuda graph begin. This can take up to several minutes.\n"
        "[23:17:08 TP4] Exception in run_tp_server:\n"
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/model_executor/cuda_graph_runner.py", line 147, in __init__\n'
        "    self.capture()"
    )
    fatal = fatal_of(result)
    assert fatal["rank"] == "TP4" and fatal["stage"] == "graphs"


# -- root cause, not wrapper ------------------------------------------------------------------------------


def test_the_watchdog_is_the_cause_of_the_sigquit() -> None:
    result = read(
        "[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:16 TP0] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:20] Received sigquit from a child proces. It usually means the child failed.\n"
        "Killed"
    )
    fatal = fatal_of(result)
    assert str(fatal["summary"]).startswith("Watchdog timeout") and fatal["stage"] == "serving"
    assert result["stage"] == "serving"


def test_a_sigquit_notice_printed_first_is_not_the_cause() -> None:
    result = read(
        "[2026-07-30 05:51:58] SIGQUIT received. signum=None, frame=None. It usually means one child failed.\n"
        "[2026-07-30 05:51:58 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SITE}/managers/scheduler.py", line 1601, in event_loop_overlap\n'
        "    batch_result = self.run_batch(batch)"
    )
    fatal = fatal_of(result)
    assert fatal["rank"] == "TP1" and fatal["stage"] == "serving" and "SIGQUIT" not in str(fatal["summary"])


def test_a_sigquit_alone_is_still_fatal() -> None:
    result = read(
        "[2025-03-09 00:57:20] Received sigquit from a child process. It usually means the child failed."
    )
    assert "sigquit" in str(fatal_of(result)["summary"])


def test_a_failed_warmup_of_the_diffusion_runtime() -> None:
    result = read(
        "[06-17 13:46:56] Server warmup failed; aborting startup: HTTP server did not become ready\n"
        "Traceback (most recent call last):\n"
        '  File "/x/http_server.py", line 73, in _wait_until_http_ready\n'
        '    raise RuntimeError(f"HTTP server did not become ready at {health_url}")\n'
        "RuntimeError: HTTP server did not become ready at http://[::1]:10762/health\n"
        "[2026-06-17 13:46:57] INFO:     Shutting down\n"
        "[2026-06-17 13:46:57] INFO:     Finished server process [5698]"
    )
    fatal = fatal_of(result)
    assert fatal["stage"] == "warmup" and str(fatal["summary"]).startswith("RuntimeError: HTTP server")


# -- warnings that matter, never fatal ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "[2025-01-06 02:58:44 TP0] Decode out of memory happened. #retracted_reqs: 1, "
            "#new_token_ratio: 0.0980 -> 0.9446",
            "Decode out of memory happened",
        ),
        (
            "[2026-02-06 17:01:21] /x/compiler.py:391: RuntimeWarning: MUSA backend: num_stages>1 requested\n"
            '  stages["ttgir"] = lambda src, metadata: self.make_ttgir(src, metadata)\n',
            "RuntimeWarning: MUSA backend",
        ),
        (
            "2026-07-14T13:17:22.283634369+08:00 [transformers] `torch_dtype` is deprecated! Use `dtype` instead!",
            "`torch_dtype` is deprecated",
        ),
        (
            "Multi-thread loading shards:  50% Completed | 2/4 [00:06<00:07,  3.54s/it]"
            "[2026-04-09 20:05:30 PP0 TP1] Parameter lm_head.weight not found in params_dict",
            "not found in params_dict",
        ),
        (
            "[2026-06-30 01:20:54] tilelang not installed; deepseek_v4_rope pass_configs unset.",
            "not installed",
        ),
    ],
)
def test_warnings_that_matter(text: str, needle: str) -> None:
    result = read(text)
    assert result["fatal"] is None
    assert any(needle in w for w in warnings_of(result))


def test_a_retraction_keeps_the_server_serving() -> None:
    result = read(
        "[2025-01-06 02:58:41 TP0] Decode batch. #running-req: 2, #token: 307801, token usage: 1.00, "
        "gen throughput (token/s): 10.93, #queue-req: 0\n"
        "[2025-01-06 02:58:44 TP5] Decode out of memory happened. #retracted_reqs: 1"
    )
    assert result["stage"] == "serving" and result["fatal"] is None


def test_stages_from_frames_are_reached_by_the_startup() -> None:
    tracker = StageTracker()
    tracker.feed(f'  File "{SITE}/model_executor/model_runner.py", line 881, in init_cuda_graphs')
    startup = tracker.current
    assert startup is not None and startup.stage is Stage.GRAPHS and startup.scheduler_ranks() == {}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("INFO:     Started server process [1234]", Kind.UVICORN),
        ("INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)", Kind.UVICORN),
        ('INFO:     127.0.0.1:45368 - "POST /generate HTTP/1.1" 200 OK', Kind.ACCESS),
        ("WARNING:  Invalid HTTP request received.", Kind.UVICORN),
        ("INFO: not uvicorn's padding", Kind.OTHER),
    ],
)
def test_uvicorn_lines_without_sglang_stamps(line: str, kind: Kind) -> None:
    assert logline.parse(line).kind is kind


def test_a_2024_startup_with_unstamped_uvicorn_lines_is_listening() -> None:
    result = read(
        "[gpu_id=0] max_total_num_tokens=41386, max_prefill_tokens=16384, context_len=4096\n"
        "INFO:     Started server process [1234]\n"
        "INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)"
    )
    assert result["stage"] == "listening" and result["fatal"] is None


def test_exception_in_model_tp_server_is_a_scheduler_crash() -> None:
    result = read(
        "[gpu_id=1] Exception in ModelTpServer:\n"
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/managers/controller/tp_worker.py", line 209, in exposed_step\n'
        "RuntimeError: CUDA error: an illegal memory access was encountered"
    )
    fatal = fatal_of(result)
    assert fatal["rank"] == "gpu_id=1" and "illegal memory access" in str(fatal["summary"])


BAR = "Capturing batches (bs={bs} avail_mem=6.91 GB): {pct}%|██▌  | {n}/2 [00:03<00:03,  3.33s/it]"


def test_log_lines_glued_to_earlier_bar_states_reach_the_tracker_and_the_view() -> None:
    from gdnconsole.logs import textsafe

    glued = "[2025-07-28 11:04:21 TP1] Registering 30 cuda graph addresses"
    line = "\r".join(
        [BAR.format(bs=2, pct=0, n=0), BAR.format(bs=1, pct=50, n=1) + glued, BAR.format(bs=1, pct=100, n=2)]
    )
    parts = logline.split_glued(line)
    assert parts[1:] == [glued] and logline.parse(parts[0]).kind is Kind.TQDM
    shown = textsafe.last_carriage_state(line)
    assert shown.startswith(BAR.format(bs=1, pct=100, n=2)) and shown.endswith(glued)
    tracker = StageTracker()
    tracker.feed(line)
    assert tracker.current is not None and "TP1" in tracker.current.ranks
    assert tracker.current.stage is Stage.GRAPHS


@pytest.mark.parametrize(
    "wrapper",
    [
        "(pid=4242) ",  # Ray without an actor name
        "(SGLangEngine pid=4242, ip=10.0.0.2) ",
        "[pod/sglang-0/server] ",  # kubectl logs --prefix
        "Dec 01 10:00:00 gpu7 python3[4242]: ",  # journald, SGLang run as a systemd unit
        "sglang-1  | ",  # docker compose
    ],
)
def test_wrappers_of_other_tools_are_taken_off(wrapper: str) -> None:
    parsed = logline.parse(wrapper + "[2025-05-01 10:00:00 TP1] Load weight begin. avail mem=78.00 GB")
    assert parsed.kind is Kind.FRAMED and parsed.rank == "TP1" and parsed.source is not None
    frame = logline.parse(wrapper + f'  File "{SITE}/x.py", line 1, in load_model')
    assert frame.kind is Kind.OTHER and frame.text.startswith('  File "')


def test_a_watchdog_while_starting_stays_in_the_stage_the_log_named() -> None:
    result = read(
        "[2025-03-09 00:50:00 TP0] Capture cuda graph begin. This can take up to several minutes.\n"
        "[2025-03-09 00:57:15 TP0] Watchdog timeout (self.watchdog_timeout=300)"
    )
    assert result["stage"] == "graphs" and fatal_of(result)["stage"] == "graphs"


def test_killed_is_fatal_alone_and_a_wrapper_beside_a_cause() -> None:
    load = "[2025-05-01 10:00:00 TP0] Load weight begin. avail mem=78.00 GB\n"
    alone = read(load + "Killed")
    assert fatal_of(alone)["summary"] == "Killed" and fatal_of(alone)["stage"] == "loading"
    beside = read(load + "[2025-05-01 10:00:09 TP0] Watchdog timeout (self.watchdog_timeout=300)\nKilled")
    assert str(fatal_of(beside)["summary"]).startswith("Watchdog timeout")


@pytest.mark.parametrize(
    ("line", "stage"),
    [
        ("[gpu_id=0] Init nccl begin.", "distributed"),
        ("[2026-03-03 14:50:00 TP0] Capture npu graph begin. This can take up to several minutes.", "graphs"),
        ("Loading safetensors checkpoint shards:  50% Completed | 5/10 [00:30<00:30,  6.0s/it]", "loading"),
        (
            "Capturing batches (bs=160 avail_mem=2.10 GB):  40%|████      | 14/35 [00:05<00:07,  2.75it/s]",
            "graphs",
        ),
    ],
)
def test_one_line_is_enough_for_a_stage(line: str, stage: str) -> None:
    result = read(line)
    assert result["stage"] == stage and result["sglang"] is True


def test_an_indented_paste_keeps_its_root_cause() -> None:
    result = read(
        "  [2025-09-04 11:33:29 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'    File "{SITE}/managers/scheduler.py", line 1601, in event_loop_overlap\n'
        "      raise ValueError(\n"
        "  ValueError: Failed to allocate token prealloc indices"
    )
    fatal = fatal_of(result)
    assert fatal["summary"] == "ValueError: Failed to allocate token prealloc indices"
    assert fatal["rank"] == "TP0" and fatal["stage"] == "serving"
    assert logline.parse("    AssertionError").kind is Kind.OTHER  # a code line of a traceback


def test_a_compose_service_without_a_number_keeps_its_exception_line() -> None:
    result = read(
        "sglang  | [2025-04-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'sglang  |   File "{SITE}/model_executor/model_runner.py", line 300, in init_memory_pool\n'
        "sglang  | RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    )
    fatal = fatal_of(result)
    assert str(fatal["summary"]).startswith("RuntimeError: Not enough memory") and fatal["stage"] == "memory"


@pytest.mark.parametrize(
    ("text", "sglang"),
    [
        ("[2025-01-01 10:00:00] Prompts loaded.", True),  # SGLang's frame, a message it does not know
        ("[16:43:29 TP0] anything", True),
        (f'  File "{SITE}/managers/scheduler.py", line 1, in run_scheduler_process', True),
        ("root:x:0:0:root:/root:/bin/bash", False),
        ('Traceback (most recent call last):\n  File "/usr/lib/x.py", line 1, in f\nValueError: x', False),
        ("INFO:     Started server process [1234]", False),  # uvicorn alone: any ASGI server
        ("", False),
    ],
)
def test_what_makes_a_file_an_sglang_log(text: str, sglang: bool) -> None:
    assert read(text)["sglang"] is sglang
