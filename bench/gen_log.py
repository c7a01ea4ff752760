"""Write a large, realistic SGLang 0.5.11 log: a long serving run of a tp=2 speculative hybrid model.

The log holds a few startups (relaunches appended to the same file), each with the full startup story —
the ~11 KB ``server_args=`` line, 800-character tqdm lines, the torchcodec warning block — followed by
millions of Decode/Prefill batch lines and uvicorn access lines; one startup ends in a scheduler crash.

    python bench/gen_log.py OUT.log [--mb 1024]
"""

from __future__ import annotations

import argparse
import random
from datetime import datetime, timedelta
from pathlib import Path

START = datetime(2026, 11, 30, 9, 0, 0)


def stamp(t: datetime, rank: str | None = None) -> str:
    prefix = f" {rank}" if rank else ""
    return f"[{t:%Y-%m-%d %H:%M:%S}{prefix}]"


def server_args_line(t: datetime) -> str:
    fields = [
        "model_path='Qwen/Qwen3.6-27B'",
        "tokenizer_path='Qwen/Qwen3.6-27B'",
        "tokenizer_mode='auto'",
        "skip_tokenizer_init=False",
        "load_format='auto'",
        "trust_remote_code=False",
        "context_length=None",
        "host='127.0.0.1'",
        "port=30000",
        "tp_size=2",
        "mem_fraction_static=None",
        "speculative_algorithm='EAGLE'",
        "speculative_num_steps=1",
        "speculative_eagle_topk=1",
        "speculative_num_draft_tokens=2",
        "mamba_scheduler_strategy='extra_buffer'",
    ]
    # Pad with the many other fields a real dump has, to its real size of about 11 KB.
    i = 0
    while sum(len(f) + 2 for f in fields) < 11_000:
        fields.append(f"option_{i}_{'x' * (i % 17)}={'None' if i % 3 else 'False'}")
        i += 1
    return f"{stamp(t)} server_args=ServerArgs({', '.join(fields)})"


def startup(t: datetime, ffmpeg_warning: bool) -> tuple[list[str], datetime]:
    lines = [
        f"{stamp(t)} Attention backend not specified. Use flashinfer backend by default.",
        f"{stamp(t)} Max running requests is reset to 48 for speculative decoding. You can override this by "
        "explicitly setting --max-running-requests.",
        server_args_line(t),
    ]
    if ffmpeg_warning:
        lines += [
            f"{stamp(t)} Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: Could not load "
            "libtorchcodec. Likely causes:",
            "          1. FFmpeg is not properly installed in your environment.",
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3/site-packages/torchcodec/_core/ops.py", line 57, in load_torchcodec',
            "OSError: libavutil.so.58: cannot open shared object file: No such file or directory",
            "[end of libtorchcodec loading traceback].",
        ]
    t += timedelta(seconds=2)
    for rank in ("TP0", "TP1"):
        lines.append(f"{stamp(t, rank)} Init torch distributed begin.")
    for rank in ("TP0", "TP1"):
        lines.append(f"{stamp(t, rank)} Init torch distributed ends. elapsed=1.12 s, mem usage=0.42 GB")
        lines.append(f"{stamp(t, rank)} Load weight begin. avail mem=46.93 GB")
    bar = "".join(
        f"\rLoading safetensors checkpoint shards: {100 * k // 11:3d}% Completed | {k}/11 "
        f"[00:{k:02d}<00:{11 - k:02d}, 1.00it/s]"
        for k in range(12)
    )
    lines.append(bar)
    t += timedelta(seconds=40)
    for rank in ("TP0", "TP1"):
        lines.append(
            f"{stamp(t, rank)} Load weight end. elapsed=40.12 s, type=Qwen3_5ForConditionalGeneration, "
            "avail mem=20.87 GB, mem usage=25.64 GB."
        )
    lines.append(f"{stamp(t, 'TP0')} Using KV cache dtype: torch.bfloat16")
    for rank in ("TP0", "TP1"):
        lines.append(
            f"{stamp(t, rank)} Mamba Cache is allocated. max_mamba_cache_size: 96, conv_state size: "
            "0.09GB, ssm_state size: 2.27GB "
        )
        lines.append(
            f"{stamp(t, rank)} KV Cache is allocated. #tokens: 84512, K size: 1.29 GB, V size: 1.29 GB"
        )
        lines.append(f"{stamp(t, rank)} Memory pool end. avail mem=16.44 GB")
    t += timedelta(seconds=2)
    for rank in ("TP0", "TP1"):
        lines.append(
            f"{stamp(t, rank)} Capture cuda graph begin. This can take up to several minutes. "
            "avail mem=16.40 GB"
        )
    capture = "".join(
        f"\rCapturing batches (bs={bs} avail_mem=16.{40 - k:02d} GB): {100 * k // 10:3d}%|{'█' * k}{' ' * (10 - k)}| "
        f"{k}/10 [00:0{k}<00:0{10 - k}, 1.70it/s]"
        for k, bs in enumerate([48, 40, 32, 24, 16, 12, 8, 4, 2, 1, 1])
    )
    lines.append(capture)
    t += timedelta(seconds=6)
    for rank in ("TP0", "TP1"):
        lines.append(
            f"{stamp(t, rank)} Capture cuda graph end. Time elapsed: 5.91 s. mem usage=0.44 GB. "
            "avail mem=15.96 GB."
        )
    lines.append(
        f"{stamp(t, 'TP0')} max_total_num_tokens=84512, chunked_prefill_size=2048, "
        "max_prefill_tokens=16384, max_running_requests=48, context_len=262144, available_gpu_mem=15.96 GB"
    )
    t += timedelta(seconds=1)
    lines += [
        f"{stamp(t)} INFO:     Started server process [4242]",
        f"{stamp(t)} INFO:     Waiting for application startup.",
        f"{stamp(t)} INFO:     Application startup complete.",
        f"{stamp(t)} INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
        f'{stamp(t)} INFO:     127.0.0.1:41234 - "GET /model_info HTTP/1.1" 200 OK',
        f"{stamp(t, 'TP0')} Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, full token usage: 0.00, "
        "mamba usage: 0.01, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, "
        "input throughput (token/s): 0.00",
        f'{stamp(t)} INFO:     127.0.0.1:41240 - "POST /generate HTTP/1.1" 200 OK',
        f"{stamp(t)} The server is fired up and ready to roll!",
    ]
    return lines, t


def serving(t: datetime, rng: random.Random, budget: int) -> tuple[list[str], datetime, int]:
    """Batch and access lines until ``budget`` bytes are written."""
    lines: list[str] = []
    written = 0
    while written < budget:
        t += timedelta(seconds=1)
        running = rng.randint(1, 48)
        chunk = [
            f'{stamp(t)} INFO:     127.0.0.1:{rng.randint(30000, 60000)} - "POST /v1/chat/completions HTTP/1.1" '
            "200 OK",
            f"{stamp(t, 'TP0')} Prefill batch, #new-seq: 1, #new-token: {rng.randint(10, 4000)}, #cached-token: "
            f"{rng.randint(0, 2000)}, full token usage: 0.{rng.randint(10, 99)}, mamba usage: 0.{rng.randint(10, 99)}, "
            f"#running-req: {running}, #queue-req: 0, #pending-token: 0, cuda graph: False, "
            f"input throughput (token/s): {rng.uniform(1000, 9000):.2f}",
        ]
        for _ in range(8):
            chunk.append(
                f"{stamp(t, 'TP0')} Decode batch, #running-req: {running}, #full token: {rng.randint(1000, 80000)}, "
                f"full token usage: 0.{rng.randint(10, 99)}, mamba num: {running}, mamba usage: "
                f"0.{rng.randint(10, 99)}, accept len: {rng.uniform(1.5, 2.0):.2f}, accept rate: "
                f"{rng.uniform(0.5, 1.0):.2f}, cuda graph: True, gen throughput (token/s): "
                f"{rng.uniform(200, 900):.2f}, #queue-req: 0"
            )
        written += sum(len(x) + 1 for x in chunk)
        lines += chunk
    return lines, t, written


def crash(t: datetime) -> list[str]:
    return [
        f"{stamp(t, 'TP0')} Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/sglang/srt/managers/scheduler.py", line 3934, in run_scheduler_process',
        "    scheduler.event_loop_overlap()",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "",
        f"{stamp(t)} SIGQUIT received. signum=None, frame=None. It usually means one child failed.",
    ]


def generate(path: Path, megabytes: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    budget = megabytes << 20
    relaunches = 3
    per_run = budget // relaunches
    t = START
    with path.open("w", encoding="utf-8") as out:
        for run in range(relaunches):
            lines, t = startup(t, ffmpeg_warning=True)
            out.write("\n".join(lines) + "\n")
            written = 0
            while written < per_run:
                block, t, n = serving(t, rng, min(8 << 20, per_run - written))
                out.write("\n".join(block) + "\n")
                written += n
            if run == 1:
                out.write("\n".join(crash(t)) + "\n")
            t += timedelta(minutes=5)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--mb", type=int, default=1024, help="approximate size in MiB (default 1024)")
    args = parser.parse_args()
    generate(args.out, args.mb)


if __name__ == "__main__":
    main()
