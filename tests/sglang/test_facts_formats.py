"""Tests of the independent FACTS-format checker (tests/sglang/facts_formats.py).

It must accept the real SGLang excerpts and hand-written lines of every dialect, and reject realistic drifts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REAL_LOGS
from tests.sglang.facts_formats import (
    FormatError,
    LineKind,
    check_line,
    check_log,
    format_findings,
    parse_line,
    parse_version,
)

# Version each excerpt implies (logs/README.md): stated, or the release of that month.
EXCERPT_VERSIONS = {
    "02": "0.5.5",  # Nov 2025 main
    "04": "0.5.5",  # Nov 2025 main
    "08": "0.5.9",  # ktransformers fork, Feb 2026: `elapsed=… dtype=…` Load weight end (0.5.9/0.5.10 form)
    "09": "0.5.11",  # torch 2.11 ⇒ ~0.5.11
    "12": "0.5.3",  # Oct 2025, period batch lines (≤0.5.3)
    "13": "0.5.15",  # stated
    "21": "0.4.5",  # Apr 2025
    "29": "0.5.11.dev20260512+g339e36e",  # stated
}


def _excerpts() -> list[Path]:
    return sorted(REAL_LOGS.glob("*.log"))


@pytest.mark.parametrize("path", _excerpts(), ids=lambda p: p.name[:2])
@pytest.mark.parametrize("mode", ["stated", "lenient"])
def test_real_excerpts_are_accepted(path: Path, mode: str) -> None:
    version = EXCERPT_VERSIONS[path.name[:2]] if mode == "stated" else None
    findings = check_log(path.read_text(encoding="utf-8"), version, complete=False)
    assert not findings, format_findings(findings)


def test_every_excerpt_has_a_version() -> None:
    assert {p.name[:2] for p in _excerpts()} <= EXCERPT_VERSIONS.keys()


# --------------------------------------------------------------------------------------------------
# Accepted lines, per dialect
# --------------------------------------------------------------------------------------------------

TS = "[2026-05-28 00:11:09"
BAR = "Capturing batches (bs=4 avail_mem=16.20 GB): 100%|██████████| 36/36 [00:10<00:00,  3.37it/s]"

ACCEPTED: list[tuple[str | None, str, LineKind]] = [
    # frame and prefixes (§1.1, §1.2)
    ("0.5.11", f"{TS}] Load weight begin. avail mem=44.10 GB", LineKind.MAIN),
    ("0.5.11", f"{TS}.816 DP0 TP0 EP0] Load weight begin. avail mem=44.10 GB", LineKind.RANKED),
    ("0.5.11", f"{TS} DP1 PP1 ATTN_CP1 MOE_DP1 TP1 EP1] some free text", LineKind.RANKED),
    ("0.5.6", f"{TS} PP1 TP0] Init torch distributed begin.", LineKind.RANKED),
    ("0.5.2", f"{TS} DP0 TP0 EP0 PP0] Init torch distributed begin.", LineKind.RANKED),
    ("0.4.4", f"{TS} TP0] Init torch distributed begin.", LineKind.RANKED),
    ("0.4.4", f"{TS} DP1 TP0] Init torch distributed begin.", LineKind.RANKED),
    ("0.5.11", f"{TS}] Attention backend not specified. Use fa3 backend by default.", LineKind.PRE_LOGGER),
    ("0.5.11", f"{TS}] server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B', tp_size=2)", LineKind.MAIN),
    ("0.5.23", f"{TS}] server_args={{'model_path': 'Qwen/Qwen3.6-27B', 'tp_size': 2}}", LineKind.MAIN),
    # uvicorn (§1.1)
    ("0.5.11", f"{TS}] INFO:     Started server process [4242]", LineKind.UVICORN),
    (
        "0.5.11",
        f"{TS}] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
        LineKind.UVICORN,
    ),
    ("0.5.11", f"{TS}] WARNING:  Invalid HTTP request received.", LineKind.UVICORN),
    ("0.5.11", f"{TS}] ERROR:    Exception in ASGI application", LineKind.UVICORN),
    (
        "0.5.11",
        f'{TS}] INFO:     127.0.0.1:50432 - "GET /model_info HTTP/1.1" 200 OK',
        LineKind.UVICORN_ACCESS,
    ),
    (
        "0.5.11",
        f'{TS}] INFO:     127.0.0.1:50444 - "POST /generate HTTP/1.1" 200 OK',
        LineKind.UVICORN_ACCESS,
    ),
    # 0.5.11 stage messages (§2.1)
    ("0.5.11", f"{TS} TP0] Init torch distributed ends. elapsed=0.51 s, mem usage=0.29 GB", LineKind.RANKED),
    ("0.5.11", f"{TS} TP1] sglang is using nccl==2.27.5", LineKind.RANKED),
    (
        "0.5.11",
        f"{TS} TP0] Load weight end. elapsed=41.27 s, type=Qwen3_5ForConditionalGeneration, "
        "avail mem=18.46 GB, mem usage=25.64 GB.",
        LineKind.RANKED,
    ),
    (
        "0.5.11",
        f"{TS} TP1] Load weight end. elapsed=12.03 s, type=Qwen3ForCausalLM, quant=fp8, fmt=e4m3, "
        "avail mem=18.46 GB, mem usage=25.64 GB.",
        LineKind.RANKED,
    ),
    ("0.5.11", f"{TS} TP0] Using KV cache dtype: torch.bfloat16", LineKind.RANKED),
    (
        "0.5.11",
        f"{TS} TP1] Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB, "
        "ssm_state size: 7.29GB ",
        LineKind.RANKED,
    ),
    (
        "0.5.11",
        f"{TS} TP0] Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB, "
        "ssm_state size: 7.29GB intermediate_ssm_state_cache size: 1.10GB "
        "intermediate_conv_window_cache size: 0.02GB ",
        LineKind.RANKED,
    ),
    (
        "0.5.11",
        f"{TS} TP1] KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB",
        LineKind.RANKED,
    ),
    ("0.5.11", f"{TS} TP0] KV Cache is allocated. #tokens: 580364, KV size: 8.30 GB", LineKind.RANKED),
    ("0.5.11", f"{TS} TP0] Memory pool end. avail mem=16.44 GB", LineKind.RANKED),
    ("0.5.11", f"{TS} TP0] Linear attention kernel backend: decode=triton, prefill=triton", LineKind.RANKED),
    (
        "0.5.11",
        f"{TS} TP0] GDN kernel dispatcher: decode=TritonGDNKernel, extend=TritonGDNKernel, "
        "verify=TritonGDNKernel packed_decode=False",
        LineKind.RANKED,
    ),
    (
        "0.5.11",
        f"{TS} TP1] Capture cuda graph begin. This can take up to several minutes. avail mem=16.40 GB",
        LineKind.RANKED,
    ),
    ("0.5.11", f"{TS} TP0] Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, 40, 48]", LineKind.RANKED),
    (
        "0.5.11",
        f"{TS} TP0] Capture cuda graph end. Time elapsed: 11.39 s. mem usage=1.00 GB. avail mem=11.17 GB.",
        LineKind.RANKED,
    ),
    (
        "0.5.11",
        f"{TS} TP0] Capture draft extend cuda graph end. Time elapsed: 3.02 s. mem usage=0.31 GB. avail mem=14.90 GB.",
        LineKind.RANKED,
    ),
    (
        "0.5.11",
        f"{TS} TP0] max_total_num_tokens=580364, chunked_prefill_size=2048, max_prefill_tokens=16384, "
        "max_running_requests=48, context_len=262144, available_gpu_mem=14.10 GB",
        LineKind.RANKED,
    ),
    ("0.5.11", f"{TS}] The server is fired up and ready to roll!", LineKind.MAIN),
    # batch lines (§2.4)
    (
        "0.5.11",
        f"{TS} TP0] Prefill batch, #new-seq: 1, #new-token: 6, #cached-token: 0, full token usage: 0.00, "
        "mamba usage: 0.01, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, "
        "input throughput (token/s): 0.00",
        LineKind.RANKED,
    ),
    (
        "0.5.11",
        f"{TS} TP0] Decode batch, #running-req: 1, #token: 108, token usage: 0.00, cuda graph: True, "
        "gen throughput (token/s): 45.03, #queue-req: 0",
        LineKind.RANKED,
    ),
    (
        "0.5.11",
        f"{TS} TP0] Decode batch [120], #running-req: 2, #full token: 21312, full token usage: 0.01, "
        "mamba num: 8, mamba usage: 0.05, accept len: 1.89, accept rate: 0.89, cuda graph: True, "
        "gen throughput (token/s): 88.10, #queue-req: 0",
        LineKind.RANKED,
    ),
    (
        "0.5.11",
        f"{TS} DP0 TP0] Decode batch, #running-req: 2, #token: 12, token usage: 0.00, #prealloc-req: 0, "
        "#transfer-req: 1, cuda graph: True, gen throughput (token/s): 88.10, #queue-req: 0",
        LineKind.RANKED,
    ),
    (
        "0.5.4",
        f"{TS} TP0] Decode batch [7], #running-req: 1, #token: 108, token usage: 0.00, ",
        LineKind.RANKED,
    ),
    (
        "0.5.3",
        f"{TS} TP0] Prefill batch. #new-seq: 1, #new-token: 28, #cached-token: 0, token usage: 0.00, "
        "#running-req: 0, #queue-req: 0, ",
        LineKind.RANKED,
    ),
    # 0.5.9/0.5.10 (unverified gap): the Feb-2026 elapsed+dtype form
    (
        "0.5.10",
        f"{TS} TP0] Load weight end. elapsed=653.47 s, type=Qwen3_5MoeForConditionalGeneration, "
        "dtype=torch.bfloat16, avail mem=19.08 GB, mem usage=3.76 GB.",
        LineKind.RANKED,
    ),
    (
        "0.5.8",
        f"{TS} TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.12 GB, "
        "mem usage=15.02 GB.",
        LineKind.RANKED,
    ),
    # 0.5.23 dialect (§2.2, §2.3)
    ("0.5.23", f"{TS} TP0] Init parallel begin.", LineKind.RANKED),
    ("0.5.23", f"{TS} TP0] Init parallel ends. elapsed=0.42 s", LineKind.RANKED),
    ("0.5.23", f"{TS} TP0] Memory baseline taken. mem usage=0.31 GB", LineKind.RANKED),
    (
        "0.5.23",
        f"{TS} TP0] NCCL warmup completed in 0.123s (tp_size=2, pp_size=1, ep_size=1)",
        LineKind.RANKED,
    ),
    (
        "0.5.23",
        f"{TS} TP1] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB",
        LineKind.RANKED,
    ),
    (
        "0.5.23",
        f"{TS} TP0] Linear attention kernel backend: decode=triton, prefill=triton, verify=triton",
        LineKind.RANKED,
    ),
    (
        "0.5.23",
        f"{TS} TP0] Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=2, avail mem=16.40 GB",
        LineKind.RANKED,
    ),
    (
        "0.5.23",
        f"{TS} TP0] Capture target verify CUDA graph end. bs=[1, 2, 4], elapsed=9.81 s, mem usage=0.92 GB, "
        "avail mem=15.48 GB.",
        LineKind.RANKED,
    ),
    (
        "0.5.23",
        f"{TS}] Engine startup timings (s): load_weight=41.27, kv_cache_allocation=0.88, scheduler_e2e=70.02, "
        "cuda_graph={phase=decode, total=12.01}, tokenizer_e2e=1.20",
        LineKind.MAIN,
    ),
    # failures (§3)
    ("0.5.11", f"{TS} TP1] Scheduler hit an exception: Traceback (most recent call last):", LineKind.RANKED),
    (
        "0.5.11",
        f"{TS}] Received sigquit from a child process. It usually means the child failed.",
        LineKind.MAIN,
    ),
    (
        "0.5.11",
        "RuntimeError: Rank 1 scheduler died during initialization (exit code: -9). If exit code is -9 "
        "(SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.",
        LineKind.TRACEBACK,
    ),
    (
        "0.5.11",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        LineKind.TRACEBACK,
    ),
    ("0.5.11", "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)", LineKind.TRACEBACK),
    (
        "0.5.11",
        f"{TS}] Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: "
        "Could not load libtorchcodec. Likely causes:",
        LineKind.MAIN,
    ),
    # unframed lines (§1.1)
    ("0.5.11", BAR, LineKind.TQDM),
    ("0.5.11", "\r".join([BAR.replace("100%", " 50%").replace("36/36", "18/36"), BAR]), LineKind.TQDM),
    ("0.5.11", f"{BAR}{TS} TP0] Capture cuda graph bs [1, 2, 4]", LineKind.TQDM),
    (
        "0.5.11",
        "Loading safetensors checkpoint shards:   0% Completed | 0/11 [00:00<?, ?it/s]",
        LineKind.TQDM,
    ),
    (
        "0.5.11",
        "Loading safetensors checkpoint shards:  45%|████▌     | 5/11 [00:09<00:11,  1.92s/it]",
        LineKind.TQDM,
    ),
    ("0.5.11", "Traceback (most recent call last):", LineKind.TRACEBACK),
    (
        "0.5.11",
        '  File "/x/sglang/srt/server_args.py", line 3520, in _handle_speculative_decoding',
        LineKind.TRACEBACK,
    ),
    ("0.5.11", "    assert self.speculative_eagle_topk is None", LineKind.TRACEBACK),
    ("0.5.11", "AssertionError", LineKind.TRACEBACK),
    (
        "0.5.11",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB.",
        LineKind.TRACEBACK,
    ),
    (
        "0.5.11",
        "OSError: libavutil.so.58: cannot open shared object file: No such file or directory",
        LineKind.TRACEBACK,
    ),
    ("0.5.11", "[end of libtorchcodec loading traceback].", LineKind.TORCHCODEC),
    (
        "0.5.11",
        "/usr/lib/python3.12/site-packages/sglang/launch_server.py:51: UserWarning: 'python -m "
        "sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.",
        LineKind.PYTHON_WARNING,
    ),
    ("0.5.11", "ct129:4242:4242 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>", LineKind.NCCL),
    ("0.5.11", "2025-03-27 21:33:31,320 - INFO - flashinfer.jit: Loading JIT ops: norm", LineKind.FLASHINFER),
    ("0.5.11", "[transformers] `torch_dtype` is deprecated! Use `dtype` instead!", LineKind.TRANSFORMERS),
    ("0.5.11", "", LineKind.BLANK),
    # lenient mode accepts any dialect
    (None, f"{TS} TP0] Init parallel begin.", LineKind.RANKED),
    (None, f"{TS} TP0] Init torch distributed begin.", LineKind.RANKED),
]


@pytest.mark.parametrize(("version", "line", "kind"), ACCEPTED, ids=range(len(ACCEPTED)))
def test_accepted_lines(version: str | None, line: str, kind: LineKind) -> None:
    assert check_line(line, version) == kind


# --------------------------------------------------------------------------------------------------
# Rejected drifts: (version, line, a fragment of the reason)
# --------------------------------------------------------------------------------------------------

LOAD_END_0511 = (
    "Load weight end. elapsed=41.27 s, type=Qwen3ForCausalLM, avail mem=18.46 GB, mem usage=25.64 GB."
)
DECODE_0511 = (
    "Decode batch, #running-req: 1, #token: 108, token usage: 0.00, cuda graph: True, "
    "gen throughput (token/s): 45.03, #queue-req: 0"
)
MAMBA = "Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB, ssm_state size: 7.29GB "

REJECTED: list[tuple[str | None, str, str]] = [
    # frame
    ("0.5.11", "[2026-05-28T00:11:09] Load weight begin. avail mem=44.10 GB", "not `["),
    ("0.5.11", "[2026-05-28 00:11:09,816] Load weight begin. avail mem=44.10 GB", "not `["),
    ("0.5.11", "[2026-02-30 00:11:09] Load weight begin. avail mem=44.10 GB", "invalid date"),
    ("0.5.11", "[2026-05-28 00:11:09]Load weight begin. avail mem=44.10 GB", "not `["),
    ("0.5.11", "[12-16 14:27:08] Rank 0 scheduler is dead.", "not `["),
    ("0.5.11", f"{TS} TP0 DP0] Load weight begin. avail mem=44.10 GB", "order must be"),
    ("0.5.11", f"{TS} TP0 PP1] Load weight begin. avail mem=44.10 GB", "order must be"),
    ("0.5.2", f"{TS} PP0 TP0] Load weight begin. avail mem=44.10 GB", "order must be"),
    ("0.5.11", f"{TS} TP0 TP1] Load weight begin. avail mem=44.10 GB", "order must be"),
    ("0.5.11", f"{TS} GPU0] Load weight begin. avail mem=44.10 GB", "components must be"),
    ("0.4.4", f"{TS} DP0] Load weight begin. avail mem=44.10 GB", "TP is always printed"),
    # uvicorn padding and placement
    ("0.5.11", f"{TS}] INFO: Started server process [4242]", "padding"),
    ("0.5.11", f"{TS}] INFO:    Started server process [4242]", "padding"),
    ("0.5.11", f"{TS}] WARNING: Invalid HTTP request received.", "padding"),
    ("0.5.11", f"{TS}] ERROR:  Exception in ASGI application", "padding"),
    ("0.5.11", f"{TS}] INFO - Started server process [4242]", "uvicorn level prefix"),
    ("0.5.11", f"{TS} TP0] INFO:     Started server process [4242]", "no rank prefix"),
    ("0.5.11", f"{TS}.123] INFO:     Started server process [4242]", "milliseconds"),
    ("0.5.11", f'{TS}] INFO:     127.0.0.1:50432 - "GET /model_info HTTP/1.1" 200', "access line"),
    ("0.5.11", f"{TS}] INFO:     Uvicorn running on http://127.0.0.1:30000", "uvicorn message"),
    # stage messages
    (
        "0.5.11",
        f"{TS} TP0] {LOAD_END_0511.replace('avail', 'dtype=torch.bfloat16, avail')}",
        "0.5.9–0.5.10 wording",
    ),
    ("0.5.11", f"{TS} TP0] {LOAD_END_0511.replace('41.27', '41.271')}", "does not match"),
    ("0.5.11", f"{TS} TP0] {LOAD_END_0511.rstrip('.')}", "does not match"),
    ("0.5.11", f"{TS} TP0] {LOAD_END_0511.replace('elapsed=41.27 s, ', '')}", "does not match"),
    ("0.5.8", f"{TS} TP0] {LOAD_END_0511}", "0.5.9–… wording"),
    ("0.5.11", f"{TS} TP0] Load weight begin. avail mem=44.1 GB", "does not match"),
    ("0.5.11", f"{TS} TP0] Load weights begin. avail mem=44.10 GB", "does not match"),
    ("0.5.11", f"{TS} TP0] {MAMBA.rstrip()}", "does not match"),
    ("0.5.11", f"{TS} TP0] {MAMBA.replace('0.13GB', '0.13 GB')}", "does not match"),
    (
        "0.5.11",
        f"{TS} TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB",
        "0.5.13–… wording",
    ),
    (
        "0.5.23",
        f"{TS} TP0] KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB",
        "…–0.5.13 wording",
    ),
    (
        "0.5.11",
        f"{TS} TP0] KV Cache is allocated. #tokens: 580364, K size: 4.150 GB, V size: 4.15 GB",
        "does not",
    ),
    ("0.5.11", f"{TS} TP0] Memory pool end. avail mem=16.4 GB", "does not match"),
    ("0.5.11", f"{TS} TP0] Memory pool end: avail mem=16.44 GB", "does not match"),
    ("0.5.23", f"{TS} TP0] Init torch distributed begin.", "…–0.5.21 wording"),
    ("0.5.11", f"{TS} TP0] Init parallel begin.", "0.5.21–… wording"),
    ("0.5.11", f"{TS} TP0] Init torch distributed ends. elapsed=0.5 s, mem usage=0.29 GB", "does not match"),
    (
        "0.5.23",
        f"{TS} TP0] NCCL warmup completed in 0.12s (tp_size=2, pp_size=1, ep_size=1)",
        "does not match",
    ),
    (
        "0.5.11",
        f"{TS} TP0] GDN kernel dispatcher: decode=TritonGDNKernel, extend=TritonGDNKernel, verify=TritonGDNKernel",
        "does not match",
    ),
    (
        "0.5.11",
        f"{TS} TP0] GDN kernel dispatcher: decode=TritonGDNKernel, extend=TritonGDNKernel, "
        "verify=TritonGDNKernel, packed_decode=False",
        "does not match",
    ),
    (
        "0.5.11",
        f"{TS} TP0] Linear attention kernel backend: decode=triton, prefill=triton, verify=triton",
        "0.5.12–… wording",
    ),
    (
        "0.5.11",
        f"{TS} TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=16.4 GB",
        "does not match",
    ),
    (
        "0.5.11",
        f"{TS} TP0] Capture CUDA graph end. Time elapsed: 11.39 s. mem usage=1.00 GB. avail mem=11.17 GB.",
        "does not match",
    ),
    (
        "0.5.23",
        f"{TS} TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=16.40 GB",
        "wording",
    ),
    ("0.5.23", f"{TS} TP0] Capture cuda graph bs [1, 2, 4]", "wording"),
    (
        "0.5.11",
        f"{TS} TP0] max_total_num_tokens=580364, max_prefill_tokens=16384, chunked_prefill_size=2048, "
        "max_running_requests=48, context_len=262144, available_gpu_mem=14.10 GB",
        "does not match",
    ),
    ("0.5.11", f"{TS}] The server is fired up and ready to roll", "does not match"),
    ("0.5.11", f"{TS} TP0] The server is fired up and ready to roll!", "main-process message"),
    ("0.5.11", f"{TS}] Received sigquit from a child proces. It usually means the child failed.", "wording"),
    ("0.5.11", f"{TS}] Engine startup timings (s): load_weight=41.27", "no such message in version 0.5.11"),
    ("0.5.11", f"{TS}] Rank 0 scheduler is dead. Please check if there are relevant logs.", "never printed"),
    # rank0-only messages (§1.3)
    ("0.5.11", f"{TS} TP1] Using KV cache dtype: torch.bfloat16", "TP rank 0 only"),
    ("0.5.11", f"{TS} TP1] Capture cuda graph bs [1, 2, 4]", "TP rank 0 only"),
    (
        "0.5.11",
        f"{TS} DP1 TP1] Linear attention kernel backend: decode=triton, prefill=triton",
        "TP rank 0 only",
    ),
    (
        "0.5.11",
        f"{TS} TP1] GDN kernel dispatcher: decode=A, extend=B, verify=C packed_decode=True",
        "TP rank 0 only",
    ),
    # batch lines (§2.4)
    (
        "0.5.11",
        f"{TS} TP0] {DECODE_0511.replace('#token: 108, token usage: 0.00', 'token usage: 0.00, #token: 108')}",
        "",
    ),
    (
        "0.5.11",
        f"{TS} TP0] {DECODE_0511.replace('gen throughput (token/s): 45.03, #queue-req: 0', '#queue-req: 0, gen throughput (token/s): 45.03')}",
        "does not match",
    ),
    ("0.5.11", f"{TS} TP0] {DECODE_0511.replace('45.03', '45.031')}", "does not match"),
    ("0.5.11", f"{TS} TP0] {DECODE_0511.replace('45.03', '45')}", "does not match"),
    ("0.5.11", f"{TS} TP0] {DECODE_0511}, ", "0.5.5–0.5.10 wording"),
    ("0.5.11", f"{TS} TP0] {DECODE_0511.replace('batch,', 'batch.')}", "…–0.5.3 wording"),
    ("0.5.3", f"{TS} TP0] {DECODE_0511}", "0.5.5–0.5.10 wording"),
    (
        "0.5.11",
        f"{TS} TP0] {DECODE_0511.replace('cuda graph: True, ', 'accept len: 2.00, accept rate: 0.50, ')}",
        "",
    ),
    (
        "0.5.11",
        f"{TS} TP0] {DECODE_0511.replace('cuda graph: True, ', 'accept rate: 0.50, accept len: 2.00, cuda graph: True, ')}",
        "does not match",
    ),
    ("0.5.11", f"{TS} TP0] {DECODE_0511.replace('#running-req: 1', '#running-req: 1.0')}", "does not match"),
    (
        "0.5.11",
        f"{TS} TP0] Prefill batch, #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, "
        "#running-req: 0, #queue-req: 0, cuda graph: False, input throughput (token/s): 0.00",
        "wording",
    ),
    # failures
    (
        "0.5.11",
        "RuntimeError: Rank 1 scheduler died during initialization (exit code: -9).",
        "does not match",
    ),
    ("0.5.11", "4. disable CUDA graph by --cuda-graph-backend-decode=disabled.", "hint block"),
    (
        "0.5.11",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: 0.9",
        "",
    ),
    # unframed
    (
        "0.5.11",
        "Capturing batches (bs=4 avail_mem=16.2 GB): 100%|███| 36/36 [00:10<00:00,  3.37it/s]",
        "avail_mem",
    ),
    ("0.5.11", f"{BAR} and then some", "after the last tqdm bar"),
    ("0.5.11", "Loading weights: 100%|███| 36/36 [00:10<00:00,  3.37it/s]", "unframed"),
    ("0.5.11", "Load weight end. elapsed=1.00 s", "unframed"),
    ("0.5.11", "Something went wrong", "unframed"),
    ("0.5.11", "INFO:     Started server process [4242]", "unframed"),
]


@pytest.mark.parametrize(("version", "line", "why"), REJECTED, ids=range(len(REJECTED)))
def test_rejected_drifts(version: str | None, line: str, why: str) -> None:
    with pytest.raises(FormatError) as raised:
        check_line(line, version)
    assert why in str(raised.value)
    assert repr(line[:50]).strip("'\"")[:30] in str(raised.value)  # the error names the line


def test_parse_line_details() -> None:
    parsed = parse_line(
        f"{BAR}{TS} TP1] Capture cuda graph end. Time elapsed: 1.00 s. mem usage=1.00 GB. avail mem=1.00 GB."
    )
    assert parsed.kind is LineKind.TQDM
    assert parsed.glued is not None
    assert (parsed.glued.prefix, parsed.glued.event, parsed.glued.ranks) == ("TP1", "graph_end", {"TP": 1})


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.5.11", (0, 5, 11)), ("0.5.11.dev20260512+g339e36e", (0, 5, 11)), ("0.4", (0, 4, 0)), (None, None)],
)
def test_parse_version(text: str | None, expected: tuple[int, int, int] | None) -> None:
    assert parse_version(text) == expected


# --------------------------------------------------------------------------------------------------
# Whole logs
# --------------------------------------------------------------------------------------------------


def _startup_0511() -> list[str]:
    """A ct129-like startup on 0.5.11: tp=2, Qwen3.6 hybrid GDN, NEXTN (ARCHITECTURE.md reference deployment)."""
    lines = [
        "[2026-05-28 00:10:00] Spec v2 is enabled by default for eagle/eagle3/standalone speculative decoding.",
        "[2026-05-28 00:10:00] server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B', tp_size=2)",
    ]
    for rank in (0, 1):
        lines += [
            f"[2026-05-28 00:10:05 TP{rank}] Init torch distributed begin.",
            f"[2026-05-28 00:10:05 TP{rank}] sglang is using nccl==2.27.5",
            f"[2026-05-28 00:10:06 TP{rank}] Init torch distributed ends. elapsed=0.51 s, mem usage=0.29 GB",
            f"[2026-05-28 00:10:06 TP{rank}] Load weight begin. avail mem=46.80 GB",
        ]
    lines.append("Loading safetensors checkpoint shards: 100%|██████████| 11/11 [00:40<00:00,  3.70s/it]")
    for rank in (1, 0):
        lines += [
            f"[2026-05-28 00:10:47 TP{rank}] Load weight end. elapsed=41.27 s, type=Qwen3_5ForConditionalGeneration, "
            "avail mem=21.16 GB, mem usage=25.64 GB.",
        ]
    lines.append("[2026-05-28 00:10:47 TP0] Using KV cache dtype: torch.bfloat16")
    for rank in (0, 1):
        lines += [
            f"[2026-05-28 00:10:48 TP{rank}] {MAMBA}",
            f"[2026-05-28 00:10:48 TP{rank}] KV Cache is allocated. #tokens: 580364, K size: 2.10 GB, V size: 2.10 GB",
            f"[2026-05-28 00:10:48 TP{rank}] Memory pool end. avail mem=16.44 GB",
        ]
    lines.append("[2026-05-28 00:10:48 TP0] Linear attention kernel backend: decode=triton, prefill=triton")
    for rank in (0, 1):
        lines.append(
            f"[2026-05-28 00:10:48 TP{rank}] Using hybrid linear attention backend for hybrid GDN models."
        )
    lines += [
        "[2026-05-28 00:10:48 TP0] GDN kernel dispatcher: decode=TritonGDNKernel, extend=TritonGDNKernel, "
        "verify=TritonGDNKernel packed_decode=False",
        "[2026-05-28 00:10:49 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=16.40 GB",
        "[2026-05-28 00:10:49 TP1] Capture cuda graph begin. This can take up to several minutes. avail mem=16.40 GB",
        "[2026-05-28 00:10:49 TP0] Capture cuda graph bs [1, 2, 4, 8]",
        "\r".join([BAR.replace("100%", "  0%").replace("36/36", "0/4"), BAR])
        + "[2026-05-28 00:11:00 TP0] Capture cuda graph end. Time elapsed: 11.39 s. mem usage=1.00 GB. "
        "avail mem=15.40 GB.",
        "[2026-05-28 00:11:00 TP1] Capture cuda graph end. Time elapsed: 11.35 s. mem usage=1.04 GB. "
        "avail mem=15.36 GB.",
        "[2026-05-28 00:11:01 TP0] max_total_num_tokens=580364, chunked_prefill_size=2048, max_prefill_tokens=16384, "
        "max_running_requests=48, context_len=262144, available_gpu_mem=15.40 GB",
        "[2026-05-28 00:11:02] INFO:     Started server process [4242]",
        "[2026-05-28 00:11:02] INFO:     Waiting for application startup.",
        "[2026-05-28 00:11:02] INFO:     Application startup complete.",
        "[2026-05-28 00:11:02] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
        '[2026-05-28 00:11:03] INFO:     127.0.0.1:50432 - "GET /model_info HTTP/1.1" 200 OK',
        "[2026-05-28 00:11:03 TP0] Prefill batch, #new-seq: 1, #new-token: 6, #cached-token: 0, "
        "full token usage: 0.00, mamba usage: 0.01, #running-req: 0, #queue-req: 0, #pending-token: 0, "
        "cuda graph: False, input throughput (token/s): 0.00",
        '[2026-05-28 00:11:04] INFO:     127.0.0.1:50444 - "POST /generate HTTP/1.1" 200 OK',
        "[2026-05-28 00:11:04] The server is fired up and ready to roll!",
    ]
    return lines


def _log(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def test_full_startup_log_is_clean() -> None:
    findings = check_log(_log(_startup_0511()), "0.5.11")
    assert not findings, format_findings(findings)


def _mutate(old: str, new: str, count: int = 1) -> str:
    text = _log(_startup_0511())
    assert old in text
    return text.replace(old, new, count)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        pytest.param(
            _mutate("[2026-05-28 00:10:48 TP1] Memory pool end", "[2026-05-28 00:09:48 TP1] Memory pool end"),
            "time_backwards",
            id="time-backwards",
        ),
        pytest.param(
            _mutate("[2026-05-28 00:10:48 TP1] Using hybrid", "[2026-05-28 00:10:48 TP1] Using no"),
            "per_rank_count",
            id="missing-on-one-rank",
        ),
        pytest.param(
            _mutate("[2026-05-28 00:10:48 TP1] Memory pool end", "[2026-05-28 00:10:48 TP0] Memory pool end"),
            "per_rank_count",
            id="twice-on-one-rank",
        ),
        pytest.param(
            _log(
                [
                    "[2026-05-28 00:10:06 TP0] Load weight begin. avail mem=46.80 GB",
                    "[2026-05-28 00:10:06 TP0] Memory pool end. avail mem=16.44 GB",
                ]
            ),
            "stage_order",
            id="pool-inside-load",
        ),
        pytest.param(
            _log(
                [
                    "[2026-05-28 00:10:48 TP0] Memory pool end. avail mem=16.44 GB",
                    "[2026-05-28 00:10:49 TP0] Capture cuda graph begin. This can take up to several minutes. "
                    "avail mem=16.40 GB",
                    "[2026-05-28 00:10:50 TP0] Using hybrid linear attention backend for hybrid GDN models.",
                ]
            ),
            "stage_order",
            id="attn-after-graphs",
        ),
        pytest.param(
            _log(
                [
                    "[2026-05-28 00:11:01 TP0] max_total_num_tokens=1, chunked_prefill_size=2, max_prefill_tokens=3, "
                    "max_running_requests=4, context_len=5, available_gpu_mem=15.40 GB",
                    "[2026-05-28 00:11:02 TP0] Init torch distributed begin.",
                ]
            ),
            "stage_order",
            id="dist-after-ready",
        ),
        pytest.param(
            _mutate(
                "[2026-05-28 00:11:04] The server is fired up and ready to roll!\n",
                "",
            ).replace(
                "[2026-05-28 00:11:02] INFO:     Started",
                "[2026-05-28 00:11:02] The server is fired up and ready to roll!\n[2026-05-28 00:11:02] INFO:     Started",
            ),
            "main_order",
            id="ready-before-uvicorn",
        ),
        pytest.param(
            _mutate('"GET /model_info HTTP/1.1"', '"POST /generate HTTP/1.1"'),
            "main_order",
            id="warmup-generate-first",
        ),
        pytest.param(
            _mutate(
                "[2026-05-28 00:11:02] INFO:     Started", "[2026-05-28 00:11:00] INFO:     Started"
            ).replace(
                "[2026-05-28 00:11:00 TP1] Capture cuda graph end",
                "[2026-05-28 00:11:00] INFO:     Started server process [1]\n[2026-05-28 00:11:00 TP1] Capture cuda graph end",
            ),
            "main_order",
            id="uvicorn-before-scheduler-ready",
        ),
        pytest.param(
            _mutate("TP0] Capture cuda graph bs", "TP1] Capture cuda graph bs"),
            "format",
            id="rank0-only-on-TP1",
        ),
    ],
)
def test_log_drifts_are_found(text: str, rule: str) -> None:
    findings = check_log(text, "0.5.11")
    assert rule in {f.rule for f in findings}, format_findings(findings) or "no findings"


def test_draft_model_may_load_after_target_graphs() -> None:
    """0.5.11: the draft ModelRunner loads after the target's graphs (sglang 0.5.11 scheduler.py:692)."""
    draft = [
        "[2026-05-28 00:11:00 TP0] Load weight begin. avail mem=15.40 GB",
        "[2026-05-28 00:11:01 TP0] Load weight end. elapsed=1.20 s, type=Qwen3_5MTP, avail mem=14.40 GB, "
        "mem usage=1.00 GB.",
        "[2026-05-28 00:11:01 TP0] Capture draft cuda graph begin. This can take up to several minutes. "
        "avail mem=14.40 GB",
    ]
    lines = _startup_0511()
    at = next(i for i, line in enumerate(lines) if "TP1] Capture cuda graph end" in line) + 1
    findings = check_log(_log(lines[:at] + draft), "0.5.11", complete=False)
    assert not findings, format_findings(findings)


def test_complete_false_tolerates_partial_ranks() -> None:
    text = _log(_startup_0511()[:10])
    assert not check_log(text, "0.5.11", complete=False)


def test_split_keeps_carriage_returns_inside_lines() -> None:
    text = _log(["\r".join([BAR, BAR]), f"{TS}] hello"])
    assert not check_log(text, "0.5.11")
