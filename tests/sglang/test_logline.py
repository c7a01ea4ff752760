"""Taking SGLang log lines apart: frames, rank prefixes, wrappers, and the lines around them (FACTS §1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gdnconsole.sglang import events, logline
from gdnconsole.sglang.logline import Kind
from gdnconsole.sglang.stages import Severity, Stage


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        ("[2026-07-14 10:40:24] Scheduler hit an exception: x", None),
        ("[2026-07-14 10:40:24 TP1] Load weight begin. avail mem=46.93 GB", "TP1"),
        ("[2026-07-14 10:40:24 DP1 TP1] Load weight begin. avail mem=46.93 GB", "DP1 TP1"),
        ("[2026-07-14 10:40:24 PP1 TP0] Load weight begin. avail mem=46.93 GB", "PP1 TP0"),
        ("[2026-07-14 10:40:24 TP3 EP3] Load weight begin. avail mem=46.93 GB", "TP3 EP3"),
        ("[2026-07-14 10:40:24 DP2 TP2 EP2] Load weight begin. avail mem=46.93 GB", "DP2 TP2 EP2"),
        ("[2026-07-14 10:40:24 DP0 TP0 EP0 PP0] Load weight begin. avail mem=46.93 GB", "DP0 TP0 EP0 PP0"),
        ("[2026-07-14 10:40:24 ATTN_CP1 TP1] Load weight begin. avail mem=46.93 GB", "ATTN_CP1 TP1"),
        ("[2026-07-14 10:40:24 MOE_DP1 TP1 EP1] Load weight begin. avail mem=46.93 GB", "MOE_DP1 TP1 EP1"),
        ("[2026-05-28 00:11:09.816 DP0 TP0 EP0] Load weight begin. avail mem=46.93 GB", "DP0 TP0 EP0"),
        ("[gpu_id=0] Load weight begin. avail mem=46.93 GB", "gpu_id=0"),
    ],
)
def test_rank_prefixes_in_every_order(line: str, rank: str | None) -> None:
    parsed = logline.parse(line)
    assert parsed.kind is Kind.FRAMED and parsed.rank == rank
    assert parsed.message.startswith(("Load weight begin", "Scheduler hit"))


def test_timestamps_with_and_without_milliseconds() -> None:
    plain = logline.parse("[2026-05-28 00:11:09 TP0] x")
    with_ms = logline.parse("[2026-05-28 00:11:09.816 TP0] x")
    assert plain.stamp == with_ms.stamp == "2026-05-28 00:11:09" and with_ms.ms == 816
    assert plain.time is not None and with_ms.time is not None
    assert with_ms.time - plain.time == pytest.approx(0.816)
    diffusion = logline.parse("[12-16 14:27:08] Rank 0 scheduler is dead.")
    assert diffusion.framed and diffusion.time is not None


@pytest.mark.parametrize(
    ("line", "kind", "level", "message"),
    [
        (
            "[2025-11-30 11:18:05] INFO:     Started server process [177326]",
            Kind.UVICORN,
            "INFO",
            "Started server process [177326]",
        ),
        (
            "[2025-11-30 11:18:05] WARNING:  Invalid HTTP request received.",
            Kind.UVICORN,
            "WARNING",
            "Invalid HTTP request received.",
        ),
        (
            "[2025-11-30 11:18:05] ERROR:    [Errno 98] error while attempting to bind on address",
            Kind.UVICORN,
            "ERROR",
            "[Errno 98] error while attempting to bind on address",
        ),
        (
            '[2025-11-30 11:18:06] INFO:     127.0.0.1:53422 - "GET /health HTTP/1.1" 200 OK',
            Kind.ACCESS,
            "INFO",
            '127.0.0.1:53422 - "GET /health HTTP/1.1" 200 OK',
        ),
    ],
)
def test_uvicorn_lines(line: str, kind: Kind, level: str, message: str) -> None:
    parsed = logline.parse(line)
    assert (parsed.kind, parsed.level, parsed.message, parsed.rank) == (kind, level, message, None)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("Loading safetensors checkpoint shards:  45% Completed | 5/11 [00:03<00:04,  1.52it/s]", Kind.TQDM),
        (
            "Capturing batches (bs=4 avail_mem=16.20 GB):  75%|███████▌  | 3/4 [00:01<00:00,  2.31it/s]",
            Kind.TQDM,
        ),
        ("Traceback (most recent call last):", Kind.TRACEBACK),
        ('  File "/sgl/sglang/srt/managers/scheduler.py", line 4329, in run_scheduler_process', Kind.OTHER),
        ("AssertionError", Kind.EXCEPTION),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB.", Kind.EXCEPTION),
        ("Exception: Capture cuda graph failed: CUDA out of memory.", Kind.EXCEPTION),
        (
            "/usr/lib/python3/dist-packages/torch/_dynamo/x.py:1575: UserWarning: Dynamo detected",
            Kind.PY_WARNING,
        ),
        ("2025-03-27 21:33:31,320 - INFO - flashinfer.jit: Loading JIT ops: batch_decode", Kind.LIBRARY),
        ("ct129:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>", Kind.LIBRARY),
        ("[transformers] `torch_dtype` is deprecated! Use `dtype` instead!", Kind.LIBRARY),
        ("", Kind.BLANK),
        ("          1. FFmpeg is not properly installed in your environment.", Kind.OTHER),
    ],
)
def test_unframed_lines(line: str, kind: Kind) -> None:
    assert logline.parse(line).kind is kind


@pytest.mark.parametrize(
    "line",
    [
        "sglang-1  | [2026-07-14 10:40:24 TP1] Load weight end. elapsed=1.00 s, type=X, avail mem=1.00 GB, "
        "mem usage=1.00 GB.",
        "sglang_server_1  | [2026-07-14 10:40:24 TP1] Load weight end. elapsed=1.00 s, type=X, avail mem=1.00 GB, "
        "mem usage=1.00 GB.",
        "[2026-07-14T10:40:24.123456Z] [2026-07-14 10:40:24 TP1] Load weight end. elapsed=1.00 s, type=X, "
        "avail mem=1.00 GB, mem usage=1.00 GB.",
        "2026-07-14T10:40:24.123456789Z [2026-07-14 10:40:24 TP1] Load weight end. elapsed=1.00 s, type=X, "
        "avail mem=1.00 GB, mem usage=1.00 GB.",
        "(SchedulerActor pid=4242, ip=10.0.0.2) [2026-07-14 10:40:24 TP1] Load weight end. elapsed=1.00 s, "
        "type=X, avail mem=1.00 GB, mem usage=1.00 GB.",
    ],
)
def test_wrapped_lines_are_unwrapped(line: str) -> None:
    parsed = logline.parse(line)
    assert parsed.kind is Kind.FRAMED and parsed.rank == "TP1"
    event = events.classify(parsed)
    assert event.kind == "load_end" and event.numbers["weights_gb"] == 1.0


def test_log_line_glued_to_a_tqdm_bar() -> None:
    line = (
        "Loading safetensors checkpoint shards: 100% Completed | 11/11 [00:07<00:00,  1.52it/s]"
        "[2026-07-14 10:40:24 TP0] Load weight end. elapsed=7.01 s, type=Qwen3_5ForConditionalGeneration, "
        "avail mem=21.29 GB, mem usage=25.64 GB."
    )
    bar, glued = logline.split_glued(line)
    assert logline.parse(bar).kind is Kind.TQDM
    assert events.classify(logline.parse(glued)).kind == "load_end"
    assert logline.split_glued("[2026-07-14 10:40:24 TP0] plain") == ["[2026-07-14 10:40:24 TP0] plain"]


@pytest.mark.parametrize(
    ("message", "kind", "stage", "numbers"),
    [
        (
            "Init torch distributed ends. elapsed=0.17 s, mem usage=0.03 GB",
            "dist_end",
            Stage.DISTRIBUTED,
            {"elapsed_s": 0.17, "mem_usage_gb": 0.03},
        ),
        ("Init parallel begin.", "dist_begin", Stage.DISTRIBUTED, {}),
        (
            "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=62.80 GB, mem usage=14.99 GB.",
            "load_end",
            Stage.LOADED,
            {"weights_gb": 14.99, "avail_gb": 62.8},
        ),
        (
            "Load weight end. elapsed=653.47 s, type=Q, quant=fp8, fmt=e4m3, avail mem=19.08 GB, mem usage=3.76 GB.",
            "load_end",
            Stage.LOADED,
            {"elapsed_s": 653.47, "weights_gb": 3.76},
        ),
        (
            "KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB",
            "kv_alloc",
            Stage.MEMORY,
            {"kv_tokens": 580364, "k_gb": 4.15, "v_gb": 4.15},
        ),
        (
            "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 84512, K size: 1.29 GB, V size: 1.29 GB",
            "kv_alloc",
            Stage.MEMORY,
            {"kv_tokens": 84512},
        ),
        (
            "KV Cache is allocated. #tokens: 500000, KV size: 30.00 GB",
            "kv_alloc",
            Stage.MEMORY,
            {"kv_gb": 30.0},
        ),
        (
            "Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB, ssm_state size: 7.29GB ",
            "mamba_alloc",
            Stage.MEMORY,
            {"mamba_cache_size": 82, "mamba_conv_gb": 0.13, "mamba_ssm_gb": 7.29},
        ),
        ("Memory pool end. avail mem=16.44 GB", "pool_end", Stage.MEMORY, {"avail_gb": 16.44}),
        (
            "Capture cuda graph begin. This can take up to several minutes. avail mem=16.40 GB",
            "graph_begin",
            Stage.GRAPHS,
            {"avail_gb": 16.4},
        ),
        (
            "Capture cuda graph end. Time elapsed: 11.35 s. mem usage=1.04 GB. avail mem=11.22 GB.",
            "graph_end",
            Stage.GRAPHS,
            {"graph_s": 11.35, "mem_usage_gb": 1.04, "avail_gb": 11.22},
        ),
        (
            "Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=2, avail mem=16.40 GB",
            "graph_target",
            Stage.GRAPHS,
            {"avail_gb": 16.4},
        ),
        (
            "max_total_num_tokens=580364, chunked_prefill_size=2048, max_prefill_tokens=16384, "
            "max_running_requests=1, context_len=8192, available_gpu_mem=3.63 GB",
            "scheduler_ready",
            Stage.SCHEDULER_READY,
            {"max_total_num_tokens": 580364, "context_len": 8192, "avail_gb": 3.63},
        ),
        ("The server is fired up and ready to roll!", "ready", Stage.READY, {}),
        (
            "Decode batch, #running-req: 2, #full token: 21312, full token usage: 0.01, mamba num: 8, mamba usage: "
            "0.05, accept len: 3.36, accept rate: 0.79, cuda graph: True, gen throughput (token/s): 551.63, "
            "#queue-req: 0",
            "decode_batch",
            Stage.SERVING,
            {
                "running_req": 2,
                "tokens": 21312,
                "accept_len": 3.36,
                "accept_rate": 0.79,
                "gen_throughput": 551.63,
            },
        ),
        (
            "Decode batch. #running-req: 1, #token: 108, token usage: 0.00, accept len: 2.17, accept rate: 0.54, "
            "cuda graph: True, gen throughput (token/s): 0.39, #queue-req: 0, ",
            "decode_batch",
            Stage.SERVING,
            {"accept_len": 2.17, "gen_throughput": 0.39},
        ),
        (
            "Decode batch [1234], #running-req: 3, #token: 900, token usage: 0.02, cuda graph: True, "
            "gen throughput (token/s): 88.00, #queue-req: 1",
            "decode_batch",
            Stage.SERVING,
            {"running_req": 3, "queue_req": 1, "gen_throughput": 88.0},
        ),
        (
            "Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, "
            "#queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 0.00",
            "prefill_batch",
            Stage.SERVING,
            {"new_token": 7, "input_throughput": 0.0},
        ),
    ],
)
def test_stage_messages_of_every_dialect(
    message: str, kind: str, stage: Stage, numbers: dict[str, float]
) -> None:
    event = events.classify(logline.parse(f"[2026-07-14 10:40:24 TP0] {message}"))
    assert (event.kind, event.stage) == (kind, stage)
    assert {k: event.numbers.get(k) for k in numbers} == numbers


@pytest.mark.parametrize(
    ("line", "severity"),
    [
        (
            "[2026-07-14 10:40:24 TP0] Scheduler hit an exception: Traceback (most recent call last):",
            Severity.FATAL,
        ),
        (
            "[2026-07-14 10:40:24] Received sigquit from a child process. It usually means the child failed.",
            Severity.FATAL,
        ),
        (
            "[2026-07-14 10:40:24] SIGQUIT received. signum=None, frame=None. It usually means one child failed.",
            Severity.FATAL,
        ),
        (
            "[2026-07-14 10:40:24] Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: x",
            Severity.WARNING,
        ),
        ("[2026-07-14 10:40:24 TP0] Decode out of memory. Try to lower your batch size.", Severity.ERROR),
        (
            "[2026-07-14 10:40:24] Health check failed. Server couldn't get a response from detokenizer for last 20 "
            "seconds.",
            Severity.ERROR,
        ),
        (
            "[2026-07-14 10:40:24] ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', "
            "30000): address already in use",
            Severity.FATAL,
        ),
        ("[2026-07-14 10:40:24 TP0] Load weight begin. avail mem=46.93 GB", Severity.INFO),
    ],
)
def test_severity_by_text(line: str, severity: Severity) -> None:
    assert events.classify(logline.parse(line)).severity is severity


@given(st.text(max_size=300))
def test_no_line_content_crashes_the_parser(text: str) -> None:
    for part in logline.split_glued(text):
        parsed = logline.parse(part)
        event = events.classify(parsed, 1)
        assert isinstance(event.kind, str)
        # The message is a substring of what was read: nothing is added, nothing is interpreted.
        assert parsed.message in part or parsed.kind is Kind.BLANK


@given(
    st.sampled_from(
        ["[bold]x[/bold]", "[link=http://x]y[/link]", "\x1b[31mred\x1b[0m", "[/]", "\x07\x1b]0;t\x07"]
    )
)
def test_markup_and_escapes_stay_literal(payload: str) -> None:
    parsed = logline.parse(f"[2026-07-14 10:40:24 TP0] {payload}")
    assert parsed.message == payload and parsed.rank == "TP0"


def test_api_keys_never_show() -> None:
    from gdnconsole.logs.document import display_text

    dump = (
        "[2026-11-30 09:00:01] server_args=ServerArgs(model_path='m', api_key='s3cret', admin_api_key=None)"
    )
    shown = display_text(dump)
    assert "s3cret" not in shown and "api_key='<redacted:" in shown and "admin_api_key=None" in shown
    argv = display_text("python3 -m sglang.launch_server --api-key s3cret --admin-api-key=k2 --port 1")
    assert "s3cret" not in argv and "k2 " not in argv and argv.count("<redacted:") == 2
    assert display_text("no secrets here") == "no secrets here"
