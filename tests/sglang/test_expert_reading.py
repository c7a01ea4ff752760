"""Reading a log as an expert does: claim no stage the lines do not prove, know the old dialects of a
crash, see a hang of every rank as one hang, count a repeated warning once, say which process failed,
and name what SGLang chose (kernels, backends, memory) and the known fix for a known failure.

The excerpts are written for the tests in SGLang's own formats (FACTS §2-§3, and the real pastes of
../shared/sglang/logs): 2024's rank-prefixed bare traceback, the watchdog on every rank, retractions,
torchcodec's import warning with its FFmpeg causes, the GDN kernel lines of 0.5.11 and 0.5.23.
"""

from __future__ import annotations

from typing import Any

import pytest

from gdnconsole.sglang.summary import summary
from gdnconsole.sglang.tracker import GRAPH_OOM_HINT, StageTracker

SITE = "/sgl-workspace/sglang/python/sglang/srt"


def read(text: str) -> dict[str, Any]:
    tracker = StageTracker()
    for line in text.split("\n"):
        tracker.feed(line)
    return summary(tracker, file="x", lines=tracker.lines)


def fatal_of(result: dict[str, Any]) -> dict[str, Any]:
    fatal = result["fatal"]
    assert isinstance(fatal, dict)
    return fatal


EVENT_LOOP_CRASH = f"""\
[2026-07-14 10:40:24] Scheduler hit an exception: Traceback (most recent call last):
  File "{SITE}/managers/scheduler.py", line 4329, in run_scheduler_process
    scheduler.run_event_loop()
  File "{SITE}/managers/scheduler.py", line 1514, in run_event_loop
    dispatch_event_loop(self)
  File "{SITE}/managers/scheduler.py", line 1606, in event_loop_overlap
    batch_result = self.run_batch(batch)
  File "{SITE}/managers/scheduler.py", line 3250, in run_batch
    batch_result = self.model_worker.forward_batch_generation(
RuntimeError: CUDA error: an illegal memory access was encountered"""

SCHEDULER_READY = """\
[2026-07-14 10:38:01] server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B', attention_backend='fa3', tp_size=1)
[2026-07-14 10:38:05] Load weight begin. avail mem=78.50 GB
[2026-07-14 10:39:40] Load weight end. elapsed=95.10 s, type=Qwen3_5ForConditionalGeneration, avail mem=26.10 GB, mem usage=52.40 GB.
[2026-07-14 10:39:41] max_total_num_tokens=412000, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=48, context_len=262144, available_gpu_mem=5.10 GB
"""


# -- no stage the lines do not prove ----------------------------------------------------------------------


def test_a_scheduler_traceback_alone_does_not_prove_the_server_was_ready() -> None:
    result = read(EVENT_LOOP_CRASH)
    assert result["ready"] is False  # the request loop runs in warm-up too
    assert result["stage"] == "serving" and fatal_of(result)["stage"] == "serving"  # a mid-run excerpt


def test_a_request_loop_crash_after_a_startup_that_never_listened_is_at_scheduler_ready() -> None:
    result = read(SCHEDULER_READY + EVENT_LOOP_CRASH)
    assert result["ready"] is False
    assert result["stage"] == "scheduler_ready" and fatal_of(result)["stage"] == "scheduler_ready"


def test_decode_lines_and_the_fired_up_line_prove_ready() -> None:
    decode = (
        "[2026-07-14 10:40:20] Decode batch, #running-req: 2, #full token: 21312, full token usage: 0.01, "
        "mamba num: 8, mamba usage: 0.05, cuda graph: True, gen throughput (token/s): 551.63, #queue-req: 0\n"
    )
    assert read(decode + EVENT_LOOP_CRASH)["ready"] is True
    fired = "[2026-07-14 10:40:00] The server is fired up and ready to roll!\n"
    assert read(fired + EVENT_LOOP_CRASH)["ready"] is True


def test_a_retraction_proves_its_rank_was_serving() -> None:
    result = read(
        "[2025-01-06 02:58:41 TP0] Decode batch. #running-req: 2, #token: 307801, token usage: 1.00, "
        "gen throughput (token/s): 10.93, #queue-req: 0\n"
        "[2025-01-06 02:58:44 TP5] Decode out of memory happened. #retracted_reqs: 1, "
        "#new_token_ratio: 0.0980 -> 0.9446"
    )
    assert result["ranks"]["TP5"]["stage"] == "serving"


# -- 2024: the scheduler logged its traceback under its own frame, then killed its parent -----------------

OLD_CAPTURE = f"""\
[2024-11-20 10:12:01 TP1] Memory pool end. avail mem=8.10 GB
[2024-11-20 10:12:02 TP1] Capture cuda graph begin. This can take up to several minutes.
[2024-11-20 10:12:05 TP1] Traceback (most recent call last):
  File "{SITE}/managers/scheduler.py", line 1493, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)
  File "{SITE}/model_executor/cuda_graph_runner.py", line 205, in __init__
    self.capture()"""


def test_a_rank_prefixed_bare_traceback_is_that_ranks_crash_even_when_cut() -> None:
    fatal = fatal_of(read(OLD_CAPTURE))
    assert fatal["rank"] == "TP1" and fatal["stage"] == "graphs" and fatal["line"] == 3
    assert fatal["summary"] == (
        "Traceback on TP1; its exception line is not in the log (last frame: __init__ in cuda_graph_runner.py:205)"
    )


def test_a_rank_prefixed_bare_traceback_is_summarized_by_its_exception_line() -> None:
    fatal = fatal_of(read(OLD_CAPTURE + "\nRuntimeError: CUDA error: out of memory"))
    assert fatal["summary"] == "RuntimeError: CUDA error: out of memory" and fatal["rank"] == "TP1"


def test_a_rank_prefixed_bare_traceback_in_memory_is_in_memory() -> None:
    fatal = fatal_of(
        read(
            "[2024-10-02 08:00:01 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=9.80 GB\n"
            "[2024-10-02 08:00:02 TP0] Traceback (most recent call last):\n"
            f'  File "{SITE}/model_executor/model_runner.py", line 401, in init_memory_pool\n'
            '    raise RuntimeError("Not enough memory. Please try to increase --mem-fraction-static.")\n'
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
        )
    )
    assert (fatal["rank"], fatal["stage"], fatal["process"]) == ("TP0", "memory", "scheduler")


# -- a hang of every rank is one hang ----------------------------------------------------------------------


def _watchdogs(ranks: list[int], second: int = 15) -> str:
    return "\n".join(
        f"[2025-03-09 00:57:{second:02d} TP{r}] Watchdog timeout (self.watchdog_timeout=300)" for r in ranks
    )


def test_a_watchdog_timeout_on_every_rank_at_once_is_a_collective_hang() -> None:
    result = read(
        _watchdogs([4, 6, 1, 2, 5, 7, 3, 0])
        + "\n[2025-03-09 00:57:20] Received sigquit from a child proces. It usually means the child failed."
        "\nKilled"
    )
    fatal = fatal_of(result)
    assert fatal["rank"] is None and fatal["ranks"] == [
        "TP4",
        "TP6",
        "TP1",
        "TP2",
        "TP5",
        "TP7",
        "TP3",
        "TP0",
    ]
    assert fatal["summary"].startswith("Watchdog timeout (self.watchdog_timeout=300) on all 8 ranks at once")
    assert "collective hang" in fatal["summary"] and fatal["line"] == 1


def test_a_watchdog_on_some_ranks_names_the_first() -> None:
    busy = "\n".join(
        f"[2025-03-09 00:50:00 TP{r}] Capture cuda graph begin. This can take up to several minutes."
        for r in range(4)
    )
    fatal = fatal_of(read(busy + "\n" + _watchdogs([2, 3])))
    assert fatal["rank"] == "TP2" and fatal["ranks"] is None
    assert fatal["summary"] == "Watchdog timeout (self.watchdog_timeout=300)"


def test_watchdog_timeouts_far_apart_are_not_one_hang() -> None:
    text = _watchdogs([1], second=0) + "\n" + _watchdogs([0], second=45)
    fatal = fatal_of(read(text))
    assert fatal["rank"] == "TP1" and fatal["ranks"] is None


# -- a repeated warning is one line with a count ------------------------------------------------------------


def test_a_retraction_on_every_rank_is_one_warning_with_its_count() -> None:
    lines = [
        f"[2025-01-06 02:58:{s} TP{r}] Decode out of memory happened. #retracted_reqs: 1, "
        f"#new_token_ratio: 0.0980 -> 0.{9446 - r}"
        for s, r in (("44", 0), ("44", 5), ("44", 7), ("45", 2), ("45", 0))
    ]
    [warning] = read("\n".join(lines))["warnings"]
    assert warning["count"] == 5 and warning["ranks"] == ["TP0", "TP5", "TP7", "TP2"] and warning["line"] == 1


def test_the_same_runtime_warning_three_times_is_one_warning() -> None:
    one = (
        "[2026-02-06 17:01:21] /usr/local/lib/python3.10/dist-packages/triton/backends/mtgpu/compiler.py:391: "
        "RuntimeWarning: MUSA backend: num_stages>1 requested without using TME; falling back to num_stages=1.\n"
        '  stages["ttgir"] = lambda src, metadata: self.make_ttgir(src, metadata, options)\n'
    )
    other = "[2026-02-06 17:01:22] tilelang not installed; deepseek_v4_rope pass_configs unset.\n"
    warnings = read(one + one + other + one)["warnings"]
    assert [(w["count"], w["line"]) for w in warnings] == [(3, 1), (1, 5)]
    assert warnings[0]["ranks"] == []


# -- who failed: a line without a rank prefix is not always the main process's --------------------------------


@pytest.mark.parametrize(
    ("text", "process"),
    [
        (EVENT_LOOP_CRASH, "scheduler"),  # tp = 1: the scheduler writes without a prefix
        (
            "[2025-08-15 14:25:48] DetokenizerManager hit an exception: Traceback (most recent call last):\n"
            f'  File "{SITE}/managers/detokenizer_manager.py", line 275, in run_detokenizer_process',
            "detokenizer",
        ),
        (
            "[2025-03-09 00:57:20] Received sigquit from a child process. It usually means the child failed.",
            "main",
        ),
        (
            "Traceback (most recent call last):\n"
            f'  File "{SITE}/managers/scheduler.py", line 2009, in run_scheduler_process\n'
            "RuntimeError: x",
            "scheduler",
        ),
        ('Traceback (most recent call last):\n  File "/x/y.py", line 1, in f\nRuntimeError: x', None),
        (
            "[2025-01-01 10:00:06] Scheduler hit an exception: Traceback (most recent call last):\n"
            "RuntimeError: boom",
            "scheduler",
        ),
        (  # 2024's logged traceback without a prefix: whose, its frames say
            "[2024-11-20 10:12:05] Traceback (most recent call last):\n"
            f'  File "{SITE}/managers/tokenizer_manager.py", line 700, in handle_loop\nRuntimeError: x',
            "main",
        ),
    ],
)
def test_the_process_of_a_fatal_line_without_a_rank(text: str, process: str | None) -> None:
    fatal = fatal_of(read(text))
    assert fatal["rank"] is None and fatal["process"] == process


def test_a_rankless_scheduler_line_is_counted_on_the_only_rank() -> None:
    result = read(
        "[2025-01-06 02:58:44] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1 -> 0.9"
    )
    assert list(result["ranks"]) == ["TP0"] and result["warnings"][0]["rank"] is None


# -- torchcodec: the cause, and that it is not fatal --------------------------------------------------------

TORCHCODEC = """\
[2026-05-22 15:58:30] Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: Could not load libtorchcodec. Likely causes:
          1. FFmpeg is not properly installed in your environment. We support
             versions 4, 5, 6, 7, and 8, and we attempt to load libtorchcodec
             for each of those versions. Errors for versions not installed on
             your system are expected; only the error for your installed FFmpeg
             version is relevant. On Windows, ensure you've installed the
             "full-shared" version which ships DLLs.
          2. The PyTorch version (2.11.0+cu130) is not compatible with
             this version of TorchCodec. Refer to the version compatibility
             table:
             https://github.com/pytorch/torchcodec?tab=readme-ov-file#installing-torchcodec.
          3. Another runtime dependency; see exceptions below.
        The following exceptions were raised as we tried to load libtorchcodec:

[start of libtorchcodec loading traceback]
FFmpeg version 6: Traceback (most recent call last):
  File "/home/sglang/.venv/lib/python3.10/site-packages/torch/_ops.py", line 1488, in load_library
    ctypes.CDLL(path)
  File "/usr/lib/python3.10/ctypes/__init__.py", line 374, in __init__
    self._handle = _dlopen(self._name, mode)
OSError: libavutil.so.58: cannot open shared object file: No such file or directory

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/home/sglang/.venv/lib/python3.10/site-packages/torchcodec/_internally_replaced_utils.py", line 93, in load_torchcodec_shared_libraries
    torch.ops.load_library(core_library_path)
  File "/home/sglang/.venv/lib/python3.10/site-packages/torch/_ops.py", line 1505, in load_library
    raise OSError(f"Could not load this library: {path}") from e
OSError: Could not load this library: /home/sglang/.venv/lib/python3.10/site-packages/torchcodec/libtorchcodec_core6.so
[end of libtorchcodec loading traceback].
[2026-05-22 15:58:31] Init torch distributed begin."""


def test_the_torchcodec_warning_keeps_its_cause_and_says_it_is_not_fatal() -> None:
    result = read(TORCHCODEC)
    assert result["fatal"] is None and result["stage"] == "distributed"
    [warning] = result["warnings"]
    assert warning["summary"] == (
        "Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: Could not load "
        "libtorchcodec (libavutil.so.58: cannot open shared object file) — not fatal: SGLang skips "
        "sglang.srt.multimodal.processors.mimo_v2 and starts on"
    )


def test_every_ffmpeg_library_it_could_not_open_is_named_once() -> None:
    twice = TORCHCODEC.replace(
        "FFmpeg version 6: Traceback",
        "FFmpeg version 7: OSError: libavutil.so.59: cannot open shared object file: No such file or directory\n"
        "FFmpeg version 6: OSError: libavutil.so.58: cannot open shared object file\n"
        "FFmpeg version 6: Traceback",
    )
    [warning] = read(twice)["warnings"]
    assert "(libavutil.so.59, libavutil.so.58: cannot open shared object file)" in warning["summary"]


def test_a_model_class_import_error_is_fatal_only_for_that_model() -> None:
    [warning] = read(
        "[2025-07-12 09:00:00] Ignore import error when loading sglang.srt.models.gemma3n_mm: "
        "No module named 'timm'"
    )["warnings"]
    assert warning["summary"].endswith(
        "not fatal unless sglang.srt.models.gemma3n_mm holds the architecture being served"
    )


def test_the_0_5_23_torchcodec_notice_is_a_warning_that_is_not_fatal() -> None:
    result = read(
        "[2026-11-30 09:00:02] torchcodec is unavailable; video audio-track detection and audio decoding via "
        "AudioDecoder are disabled: Could not load libtorchcodec. Likely causes:\n"
        "OSError: libavutil.so.58: cannot open shared object file: No such file or directory"
    )
    [warning] = result["warnings"]
    assert result["fatal"] is None and "(libavutil.so.58: cannot open" in warning["summary"]
    assert "not fatal: SGLang starts on without torchcodec" in warning["summary"]


# -- what SGLang chose --------------------------------------------------------------------------------------


def test_the_kernels_and_backends_of_a_0_5_11_gdn_startup() -> None:
    result = read(
        "[2026-11-30 09:00:00] Attention backend not specified. Use flashinfer backend by default.\n"
        "[2026-11-30 09:00:10 TP0] Linear attention kernel backend: decode=triton, prefill=triton\n"
        "[2026-11-30 09:00:10 TP1] Using hybrid linear attention backend for hybrid GDN models.\n"
        "[2026-11-30 09:00:10 TP0] Using hybrid linear attention backend for hybrid GDN models.\n"
        "[2026-11-30 09:00:10 TP0] GDN kernel dispatcher: decode=TritonGDNKernel, extend=TritonGDNKernel, "
        "verify=TritonGDNKernel packed_decode=True"
    )
    assert result["kernels"] == {
        "attention": "flashinfer",
        "linear_attention": "decode=triton, prefill=triton",
        "hybrid_linear_attention": "hybrid",
        "gdn_kernels": "decode=TritonGDNKernel, extend=TritonGDNKernel, verify=TritonGDNKernel packed_decode=True",
    }


def test_the_kernels_of_0_5_23_and_its_args_dump() -> None:
    result = read(
        "[2026-11-30 09:00:00] server_args={'model_path': 'Q', 'attention_backend': 'fa3', 'tp_size': 2}\n"
        "[2026-11-30 09:00:10 TP0] Linear attention kernel backend: decode=flashinfer, prefill=triton, verify=triton\n"
        "[2026-11-30 09:00:10 TP0] Multimodal attention backend not set. Use triton_attn.\n"
        "[2026-11-30 09:00:10 TP0] Using triton_attn as multimodal attention backend.\n"
        "[2026-11-30 09:00:10 TP0] CuTe DSL GDN decode enabled: False"
    )
    assert result["kernels"] == {
        "attention": "fa3",
        "multimodal_attention": "triton_attn",
        "linear_attention": "decode=flashinfer, prefill=triton, verify=triton",
        "cute_dsl_gdn_decode": "False",
    }


def test_an_args_dump_without_a_backend_leaves_it_to_the_notice() -> None:
    result = read(
        "[2026-11-30 09:00:00] server_args=ServerArgs(model_path='Q', attention_backend=None, tp_size=1)\n"
        "[2026-11-30 09:00:00] Attention backend not specified. Use triton backend by default."
    )
    assert result["kernels"] == {"attention": "triton"}


def test_kernel_words_outside_sglangs_frame_choose_nothing() -> None:
    assert read("GDN kernel dispatcher: decode=X, extend=Y")["kernels"] == {}


# -- the memory split per rank ------------------------------------------------------------------------------


def test_the_memory_split_per_rank_from_a_hybrid_startup() -> None:
    result = read(
        "[2026-02-27 17:10:27 TP0] Load weight end. elapsed=653.47 s, type=Qwen3_5MoeForConditionalGeneration, "
        "dtype=torch.bfloat16, avail mem=19.08 GB, mem usage=3.76 GB.\n"
        "[2026-02-27 17:10:28 TP0] Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB, "
        "ssm_state size: 7.29GB \n"
        "[2026-02-27 17:10:28 TP0] KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB\n"
        "[2026-02-27 17:10:28 TP0] Memory pool end. avail mem=4.02 GB\n"
        "[2026-02-27 17:10:40 TP0] Capture cuda graph end. Time elapsed: 12.00 s. mem usage=0.61 GB. avail mem=3.41 GB.\n"
        "[2026-02-27 17:10:27 TP1] Load weight end. elapsed=653.47 s, type=X, avail mem=19.08 GB, mem usage=3.76 GB."
    )
    assert result["memory"] == {
        "TP0": {"weights": 3.76, "kv": 8.3, "mamba": 7.42, "graphs": 0.61, "free": 3.41},
        "TP1": {"weights": 3.76, "free": 19.08},
    }


def test_a_rank_the_log_sized_nothing_of_has_no_split() -> None:
    assert read("[2026-02-27 17:10:27 TP0] Init torch distributed begin.")["memory"] == {}


# -- the known fix for a known failure ----------------------------------------------------------------------


def test_a_cuda_graph_oom_carries_the_known_fixes_as_a_hint() -> None:
    fatal = fatal_of(
        read(
            "[2025-04-09 10:00:00 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=2.10 GB\n"
            "[2025-04-09 10:00:03 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SITE}/model_executor/cuda_graph_runner.py", line 269, in __init__\n'
            "    raise Exception(\n"
            "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 7 has a "
            "total capacity of 95.00"
        )
    )
    assert fatal["hint"] == GRAPH_OOM_HINT and fatal["stage"] == "graphs"
    for fix in ("--cuda-graph-max-bs", "--mem-fraction-static", "--disable-cuda-graph"):
        assert fix in fatal["hint"]
    assert fatal["summary"].startswith("Exception: Capture cuda graph failed: CUDA out of memory")


def test_other_capture_failures_get_no_oom_hint() -> None:
    fatal = fatal_of(
        read(
            "Exception: Capture cuda graph failed: CUDA error: an illegal memory access was encountered\n"
            "[2025-04-09 10:00:05] Received sigquit from a child process. It usually means the child failed."
        )
    )
    assert fatal["hint"] is None


def test_the_2025_attention_notice_names_the_default_backend() -> None:
    result = read("[2025-06-23 15:06:10 TP0] Attention backend not set. Use fa3 backend by default.")
    assert result["kernels"] == {"attention": "fa3"}


def test_the_split_counts_the_draft_models_weights_and_an_mla_kv_pool() -> None:
    result = read(
        "[2026-11-30 09:00:40 TP0] Load weight end. elapsed=37.12 s, type=DeepseekV3ForCausalLM, avail mem=20.87 GB, mem usage=25.64 GB.\n"
        "[2026-11-30 09:00:45 TP0] Load weight end. elapsed=3.10 s, type=DeepseekV3ForCausalLMNextN, avail mem=19.64 GB, mem usage=1.23 GB.\n"
        "[2026-11-30 09:00:46 TP0] KV Cache is allocated. #tokens: 84512, KV size: 5.49 GB"
    )
    assert result["memory"] == {"TP0": {"weights": 26.87, "kv": 5.49, "free": 19.64}}


def test_the_split_is_said_to_two_decimals_as_sglang_says_gb() -> None:
    result = read(
        "[2026-11-30 09:00:46 TP0] KV Cache is allocated. #tokens: 84512, K size: 1.004 GB, V size: 1.004 GB\n"
        "[2026-11-30 09:00:47 TP0] Memory pool end. avail mem=3.456 GB"
    )
    assert result["memory"] == {"TP0": {"kv": 2.01, "free": 3.46}}
