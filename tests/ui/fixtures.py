"""Realistic SGLang logs with fixed timestamps for the log view's tests and snapshots."""

from __future__ import annotations

from pathlib import Path


def stamp(second: int, rank: str | None = None, minute: int = 0) -> str:
    prefix = f" {rank}" if rank else ""
    return f"[2026-11-30 09:{minute:02d}:{second:02d}{prefix}]"


def startup(minute: int, *, crash: bool) -> list[str]:
    """A ct129-like tp=2 startup: notices, args, the torchcodec warning, weights, pools, graphs."""
    s = lambda sec, rank=None: stamp(sec, rank, minute)  # noqa: E731
    lines = [
        f"{s(0)} Attention backend not specified. Use flashinfer backend by default.",
        f"{s(0)} server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B', tp_size=2, speculative_algorithm='NEXTN', "
        + ", ".join(f"option_{i}={i}" for i in range(40))
        + ")",
        f"{s(1)} Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: Could not load libtorchcodec. Likely causes:",
        "          1. FFmpeg is not properly installed in your environment.",
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/torchcodec/_core/ops.py", line 57, in load_torchcodec',
        "OSError: libavutil.so.58: cannot open shared object file: No such file or directory",
        "[end of libtorchcodec loading traceback].",
    ]
    for rank in ("TP0", "TP1"):
        lines.append(f"{s(2, rank)} Init torch distributed begin.")
    for rank in ("TP0", "TP1"):
        lines.append(f"{s(3, rank)} Init torch distributed ends. elapsed=1.12 s, mem usage=0.42 GB")
        lines.append(f"{s(3, rank)} Load weight begin. avail mem=46.93 GB")
    lines.append(
        "".join(
            f"\rLoading safetensors checkpoint shards: {100 * k // 11:3d}% Completed | {k}/11 [00:{k:02d}<00:{11 - k:02d}, 1.00it/s]"
            for k in range(12)
        )
    )
    for rank in ("TP0", "TP1"):
        lines.append(
            f"{s(40, rank)} Load weight end. elapsed=37.12 s, type=Qwen3_5ForConditionalGeneration, avail mem=20.87 GB, mem usage=25.64 GB."
        )
    for rank in ("TP0", "TP1"):
        lines.append(f"{s(41, rank)} KV Cache is allocated. #tokens: 84512, K size: 1.29 GB, V size: 1.29 GB")
        lines.append(f"{s(41, rank)} Memory pool end. avail mem=16.44 GB")
    lines.append(f"{s(41, 'TP0')} Linear attention kernel backend: decode=triton, prefill=triton")
    for rank in ("TP0", "TP1"):
        lines.append(
            f"{s(42, rank)} Capture cuda graph begin. This can take up to several minutes. avail mem=16.40 GB"
        )
    if crash:
        lines += [
            f"{s(45, 'TP1')} Scheduler hit an exception: Traceback (most recent call last):",
            '  File "/usr/lib/python3/site-packages/sglang/srt/managers/scheduler.py", line 3934, in run_scheduler_process',
            "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank)",
            '  File "/usr/lib/python3/site-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 717, in __init__',
            "    raise Exception(",
            "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.02 GiB.",
            "Possible solutions:",
            "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
            "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
            "",
            f"{s(46)} Received sigquit from a child process. It usually means the child failed.",
        ]
        return lines
    for rank in ("TP0", "TP1"):
        lines.append(
            f"{s(48, rank)} Capture cuda graph end. Time elapsed: 5.91 s. mem usage=0.44 GB. avail mem=15.96 GB."
        )
    lines += [
        f"{s(48, 'TP0')} max_total_num_tokens=84512, chunked_prefill_size=2048, max_prefill_tokens=16384, max_running_requests=48, context_len=262144, available_gpu_mem=15.96 GB",
        f"{s(49)} INFO:     Started server process [4242]",
        f"{s(49)} INFO:     Waiting for application startup.",
        f"{s(49)} INFO:     Application startup complete.",
        f"{s(49)} INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
        f'{s(50)} INFO:     127.0.0.1:41234 - "GET /model_info HTTP/1.1" 200 OK',
        f"{s(50, 'TP0')} Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, full token usage: 0.00, mamba usage: 0.01, #running-req: 0, #queue-req: 0",
        f"{s(51)} The server is fired up and ready to roll!",
    ]
    for k in range(6):
        lines.append(f'{s(52 + k)} INFO:     127.0.0.1:5{k}000 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
        lines.append(
            f"{s(52 + k, 'TP0')} Decode batch, #running-req: 1, #full token: {1200 + k}, full token usage: 0.01, accept len: 1.8{k}, accept rate: 0.9{k}, cuda graph: True, gen throughput (token/s): {40 + k}.50, #queue-req: 0"
        )
    return lines


def ct129_lines() -> list[str]:
    """One healthy startup serving requests, then a relaunch that dies capturing CUDA graphs."""
    return startup(0, crash=False) + startup(5, crash=True)


def write_log(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
