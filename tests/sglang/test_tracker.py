"""The stage tracker: startups, stages per rank and overall, durations, warnings and the fatal error."""

from __future__ import annotations

from pathlib import Path

import pytest

from gdnconsole.sglang.stages import Stage
from gdnconsole.sglang.summary import summary, track
from gdnconsole.sglang.tracker import StageTracker
from tests.conftest import REAL_LOGS

CT129_STARTUP = """\
[2026-11-30 09:00:00] Attention backend not specified. Use flashinfer backend by default.
[2026-11-30 09:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B', tp_size=2)
[2026-11-30 09:00:01] Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: Could not load libtorchcodec. Likely causes:
          1. FFmpeg is not properly installed in your environment.
The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/usr/lib/python3/site-packages/torchcodec/_core/ops.py", line 57, in load_torchcodec
OSError: libavutil.so.58: cannot open shared object file: No such file or directory
[end of libtorchcodec loading traceback].
[2026-11-30 09:00:02 TP0] Init torch distributed begin.
[2026-11-30 09:00:02 TP1] Init torch distributed begin.
[2026-11-30 09:00:03 TP1] Init torch distributed ends. elapsed=1.12 s, mem usage=0.42 GB
[2026-11-30 09:00:03 TP0] Init torch distributed ends. elapsed=1.12 s, mem usage=0.42 GB
[2026-11-30 09:00:03 TP0] Load weight begin. avail mem=46.93 GB
[2026-11-30 09:00:03 TP1] Load weight begin. avail mem=46.93 GB
Loading safetensors checkpoint shards: 100% Completed | 11/11 [00:40<00:00,  0.27it/s]
[2026-11-30 09:00:43 TP0] Load weight end. elapsed=40.12 s, type=Qwen3_5ForConditionalGeneration, avail mem=20.87 GB, mem usage=25.64 GB.
[2026-11-30 09:00:44 TP1] Load weight end. elapsed=40.80 s, type=Qwen3_5ForConditionalGeneration, avail mem=20.87 GB, mem usage=25.64 GB.
[2026-11-30 09:00:44 TP0] KV Cache is allocated. #tokens: 84512, K size: 1.29 GB, V size: 1.29 GB
[2026-11-30 09:00:44 TP0] Memory pool end. avail mem=16.44 GB
[2026-11-30 09:00:44 TP1] KV Cache is allocated. #tokens: 84512, K size: 1.29 GB, V size: 1.29 GB
[2026-11-30 09:00:44 TP1] Memory pool end. avail mem=16.44 GB
[2026-11-30 09:00:46 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=16.40 GB
[2026-11-30 09:00:46 TP1] Capture cuda graph begin. This can take up to several minutes. avail mem=16.40 GB
"""

READY_TAIL = """\
[2026-11-30 09:00:52 TP0] Capture cuda graph end. Time elapsed: 5.91 s. mem usage=0.44 GB. avail mem=15.96 GB.
[2026-11-30 09:00:52 TP1] Capture cuda graph end. Time elapsed: 5.95 s. mem usage=0.44 GB. avail mem=15.96 GB.
[2026-11-30 09:00:53 TP0] max_total_num_tokens=84512, chunked_prefill_size=2048, max_prefill_tokens=16384, max_running_requests=48, context_len=262144, available_gpu_mem=15.96 GB
[2026-11-30 09:00:54] INFO:     Started server process [4242]
[2026-11-30 09:00:54] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)
[2026-11-30 09:00:55] INFO:     127.0.0.1:41234 - "GET /model_info HTTP/1.1" 200 OK
[2026-11-30 09:00:55 TP0] Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 0.00
[2026-11-30 09:00:56] INFO:     127.0.0.1:41240 - "POST /generate HTTP/1.1" 200 OK
[2026-11-30 09:00:56] The server is fired up and ready to roll!
[2026-11-30 09:01:10 TP0] Decode batch, #running-req: 1, #full token: 900, full token usage: 0.01, mamba num: 1, mamba usage: 0.01, accept len: 1.86, accept rate: 0.86, cuda graph: True, gen throughput (token/s): 61.20, #queue-req: 0
"""

CRASH_TAIL = """\
[2026-11-30 09:00:49 TP1] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/lib/python3/site-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 402, in capture
    raise Exception(
Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 1 has a total capacity of 47.99 GiB of which 50.00 MiB is free.
Possible solutions:
1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)

[2026-11-30 09:00:49] Received sigquit from a child process. It usually means the child failed.
"""


def feed(text: str) -> StageTracker:
    tracker = StageTracker()
    for line in text.split("\n"):
        tracker.feed(line)
    return tracker


def test_a_healthy_startup_reaches_serving_with_durations_and_numbers() -> None:
    tracker = feed(CT129_STARTUP + READY_TAIL)
    result = summary(tracker, file="x", lines=tracker.lines)
    assert result["startups"] == 1 and result["stage"] == "serving" and result["ready"] is True
    assert result["fatal"] is None
    assert [w["line"] for w in result["warnings"]] == [1, 3]  # attention backend notice, torchcodec
    assert "libtorchcodec" in result["warnings"][1]["summary"]
    assert result["ranks"]["TP0"] == {
        "stage": "serving",
        "weights_gb": 25.64,
        "avail_gb": 15.96,
        "kv_tokens": 84512,
    }
    assert result["ranks"]["TP1"]["stage"] == "serving" and result["ranks"]["TP1"]["weights_gb"] == 25.64
    assert result["spec"] == {"accept_len": 1.86, "accept_rate": 0.86}
    assert result["gen_throughput"] == 61.2
    d = result["durations"]
    assert d["loading"] == 40.0 and d["graphs"] == 7.0 and d["warmup"] == 1.0 and d["listening"] == 1.0


def test_the_torchcodec_block_is_one_warning_not_a_fatal_traceback() -> None:
    startup = feed(CT129_STARTUP).current
    assert startup is not None and startup.fatal is None
    block = startup.warnings[1]
    assert block.line == 3 and block.last_line == 10
    assert startup.stage is Stage.GRAPHS


def test_fatal_summary_is_the_exception_line_with_rank_and_stage() -> None:
    startup = feed(CT129_STARTUP + CRASH_TAIL).current
    assert startup is not None and startup.fatal is not None
    fatal = startup.fatal
    exception_line = CT129_STARTUP.count("\n") + 4
    assert fatal.line == exception_line and fatal.rank == "TP1" and fatal.stage is Stage.GRAPHS
    assert fatal.summary.startswith("Exception: Capture cuda graph failed: CUDA out of memory.")
    assert not startup.ready


def test_bare_assertion_from_argument_processing() -> None:
    text = """\
[2026-11-30 09:00:00] Attention backend not specified. Use flashinfer backend by default.
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/usr/lib/python3/site-packages/sglang/launch_server.py", line 24, in <module>
    server_args = prepare_server_args(sys.argv[1:])
  File "/usr/lib/python3/site-packages/sglang/srt/server_args.py", line 3518, in _handle_speculative_decoding
    assert (
AssertionError
"""
    startup = feed(text).current
    assert startup is not None and startup.fatal is not None
    assert startup.fatal.summary == "AssertionError" and startup.fatal.line == 8
    assert startup.fatal.stage is Stage.STARTING
    assert startup.fatal.where is not None and "_handle_speculative_decoding" in startup.fatal.where


def test_appended_relaunches_are_separate_startups() -> None:
    tracker = feed(CT129_STARTUP + CRASH_TAIL + CT129_STARTUP + READY_TAIL)
    assert len(tracker.startups) == 2
    first, second = tracker.startups
    assert first.fatal is not None and second.fatal is None and second.ready
    assert second.first_line == CT129_STARTUP.count("\n") + CRASH_TAIL.count("\n") + 1


def test_an_excerpt_starting_mid_stream_gets_the_stage_its_lines_prove() -> None:
    startup = feed(READY_TAIL.splitlines()[-1]).current
    assert startup is not None and startup.stage is Stage.SERVING


# What real_logs/README.md says of each real excerpt: last stage, and crash stage if any.
REAL = {
    "02-startup-ready-uvicorn-no-tp-prefix-2025-11.log": ("warmup", None),
    "04-tp2-capture-cuda-graph-end-both-ranks-2025-11.log": ("graphs", None),
    "08-ktransformers-qwen35-moe-tp2-mamba-gdn-startup-2026-02.log": ("scheduler_ready", None),
    "09-qwen35-l40-torchcodec-warning-nonfatal.log": ("loading", None),
    "12-eagle3-decode-batch-accept-len-period-format-2025-10.log": ("serving", None),
    "13-qwen36-0.5.15-mamba-mtp-decode-then-crash.log": ("serving", "serving"),
    "21-deepep-2node-capture-cuda-graph-oom.log": ("graphs", "graphs"),
    "29-dsv4-flash-mi300x-scheduler-died-during-init-0.5.11dev.log": ("starting", "starting"),
}


@pytest.mark.parametrize(("name", "expected"), sorted(REAL.items()))
def test_real_excerpts_are_classified_as_their_readme_says(
    name: str, expected: tuple[str, str | None]
) -> None:
    path: Path = REAL_LOGS / name
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    tracker = track(enumerate(lines, 1))
    startup = tracker.current
    assert startup is not None
    stage, crash = expected
    assert startup.stage.label == stage
    if crash is None:
        assert startup.fatal is None
    else:
        assert startup.fatal is not None and startup.fatal.stage.label == crash


def test_real_torchcodec_warning_is_not_fatal_and_startup_continues() -> None:
    text = (REAL_LOGS / "09-qwen35-l40-torchcodec-warning-nonfatal.log").read_text()
    startup = feed(text).current
    assert startup is not None and startup.fatal is None
    assert any("libtorchcodec" in w.summary for w in startup.warnings)
    assert startup.stage is Stage.LOADING
