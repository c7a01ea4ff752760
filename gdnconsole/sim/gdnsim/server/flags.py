"""The command-line flags of ``sglang serve`` / ``python -m sglang.launch_server``, per version.

Only the flags an operator commonly edits, with SGLang's names, aliases, types, defaults and choices.
argparse keeps ``allow_abbrev`` on, as SGLang's parser does, so unambiguous prefixes work
(``--speculative-num-step 3``) and ambiguous ones fail the same way.
"""

from __future__ import annotations

import argparse
import re
from decimal import Decimal

from gdnsim.server import version

SPEC_CHOICES_0_5_11 = ["DFLASH", "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"]  # 511 server_args.py:5365
MAMBA_STRATEGIES = ["auto", "no_buffer", "extra_buffer"]  # 511 server_args.py:1079
MAMBA_RADIX_STRATEGIES = [*MAMBA_STRATEGIES, "extra_buffer_lazy"]  # 523 arg_groups/fields/exec_.py:512
LOG_LEVELS = ["debug", "info", "warning", "error", "critical"]
KV_CACHE_DTYPES = ["auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16", "fp4_e2m1"]
DTYPES = ["auto", "half", "float16", "bfloat16", "float", "float32"]
ATTENTION_BACKENDS = [
    "triton", "torch_native", "flex_attention", "cutlass_mla", "fa3", "fa4", "flashinfer",
    "flashmla", "trtllm_mla", "trtllm_mha", "dual_chunk_flash_attn", "aiter", "wave", "intel_amx",
    "ascend",
]  # fmt: skip


SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def human_readable_int(value: str) -> int:
    """SGLang's type for token counts (511 srt/utils/common.py:2328-2363; 523 the same, used by
    arg_groups/fields/model.py and schedule.py): ``32k`` is 32000, ``32Ki`` 32768, ``25.6k`` 25600;
    suffixes are case-sensitive and IEC ones take no decimals."""
    value = value.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if match:
        number, suffix = match.groups()
        if suffix in IEC:
            if "." in number:
                raise argparse.ArgumentTypeError(
                    f"Decimals are not allowed with IEC suffixes like '{suffix}'. "
                    f"Use an integer IEC value such as '{int(Decimal(number))}{suffix}', "
                    f"or an SI value such as '{number}{suffix[0]}'."
                )
            return int(number) * IEC[suffix]
        return int(Decimal(number) * SI[suffix])
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid integer value: '{value}'. "
            "Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). "
            "Suffixes are case-sensitive."
        ) from None


def add_cli_args(parser: argparse.ArgumentParser) -> None:
    """Register every flag of the emulated version on ``parser``."""
    _model_flags(parser)
    _serving_flags(parser)
    _memory_flags(parser)
    _parallel_flags(parser)
    _backend_flags(parser)
    _speculative_flags(parser)
    _mamba_flags(parser)
    _cuda_graph_flags(parser)
    _logging_flags(parser)


def _model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model-path", "--model", type=str, required=True, help="The model weights path.")
    p.add_argument("--tokenizer-path", type=str, default=None)
    p.add_argument("--trust-remote-code", action="store_true")
    p.add_argument("--context-length", type=human_readable_int, default=None)
    p.add_argument("--dtype", type=str, default="auto", choices=DTYPES)
    p.add_argument("--kv-cache-dtype", type=str, default="auto", choices=KV_CACHE_DTYPES)
    p.add_argument("--quantization", type=str, default=None)
    p.add_argument("--load-format", type=str, default="auto")
    p.add_argument("--revision", type=str, default=None)
    p.add_argument("--served-model-name", type=str, default=None)
    p.add_argument("--chat-template", type=str, default=None)
    p.add_argument("--reasoning-parser", type=str, default=None)
    p.add_argument("--tool-call-parser", type=str, default=None)
    p.add_argument("--random-seed", type=int, default=None)


def _serving_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", type=str, default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--api-key", type=str, default=None)
    p.add_argument("--skip-server-warmup", action="store_true")
    p.add_argument("--enable-metrics", action="store_true")
    p.add_argument("--enable-metrics-for-all-schedulers", action="store_true")
    p.add_argument("--watchdog-timeout", type=float, default=300)
    p.add_argument("--max-running-requests", type=int, default=None)
    p.add_argument("--max-queued-requests", type=int, default=None)
    p.add_argument("--max-total-tokens", type=human_readable_int, default=None)
    p.add_argument("--chunked-prefill-size", type=int, default=None)
    p.add_argument("--max-prefill-tokens", type=human_readable_int, default=16384)
    p.add_argument("--schedule-policy", type=str, default="fcfs")
    p.add_argument("--disable-radix-cache", action="store_true")
    p.add_argument("--disable-overlap-schedule", action="store_true")
    p.add_argument("--enable-mixed-chunk", action="store_true")
    p.add_argument("--stream-interval", type=int, default=1)


def _memory_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mem-fraction-static", type=float, default=None)
    p.add_argument("--page-size", type=int, default=None)


def _parallel_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tensor-parallel-size", "--tp-size", dest="tp_size", type=int, default=1)
    p.add_argument("--data-parallel-size", "--dp-size", dest="dp_size", type=int, default=1)
    p.add_argument("--pipeline-parallel-size", "--pp-size", dest="pp_size", type=int, default=1)
    p.add_argument("--base-gpu-id", type=int, default=0)
    p.add_argument("--gpu-id-step", type=int, default=1)
    p.add_argument("--enable-dp-attention", action="store_true")
    if version.at_least("0.5.22"):  # 523 arg_groups/fields: attention DP has its own size
        p.add_argument("--attn-dp-size", "--attention-data-parallel-size", dest="attn_dp_size", type=int)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", type=int, default=0)


def _backend_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--attention-backend", type=str, default=None, choices=ATTENTION_BACKENDS)
    p.add_argument("--prefill-attention-backend", type=str, default=None, choices=ATTENTION_BACKENDS)
    p.add_argument("--decode-attention-backend", type=str, default=None, choices=ATTENTION_BACKENDS)
    p.add_argument("--sampling-backend", type=str, default=None, choices=["flashinfer", "pytorch"])
    p.add_argument("--enable-torch-compile", action="store_true")
    if version.at_least("0.5.22"):
        p.add_argument("--linear-attn-backend", type=str, default="triton")


def _speculative_flags(p: argparse.ArgumentParser) -> None:
    choices = SPEC_CHOICES_0_5_11 if version.spec_algorithm_has_choices() else None
    p.add_argument("--speculative-algorithm", type=str, default=None, choices=choices)
    p.add_argument("--speculative-draft-model-path", "--speculative-draft-model", type=str, default=None)
    p.add_argument("--speculative-draft-model-revision", type=str, default=None)
    p.add_argument("--speculative-num-steps", type=int, default=None)
    p.add_argument("--speculative-eagle-topk", type=int, default=None)
    p.add_argument("--speculative-num-draft-tokens", type=int, default=None)
    p.add_argument("--speculative-accept-threshold-single", type=float, default=1.0)
    p.add_argument("--speculative-accept-threshold-acc", type=float, default=1.0)
    p.add_argument("--speculative-token-map", type=str, default=None)
    p.add_argument("--speculative-attention-mode", type=str, default="prefill", choices=["prefill", "decode"])
    p.add_argument("--speculative-draft-attention-backend", type=str, default=None)
    p.add_argument("--speculative-ngram-max-bfs-breadth", type=int, default=10)


def _mamba_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-mamba-cache-size", type=int, default=None)
    p.add_argument("--mamba-ssm-dtype", type=str, default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--mamba-track-interval", type=int, default=256)
    if not version.radix_strategy_renamed():
        p.add_argument("--mamba-scheduler-strategy", type=str, default="auto", choices=MAMBA_STRATEGIES)
        return
    p.add_argument("--mamba-radix-cache-strategy", type=str, default="auto", choices=MAMBA_RADIX_STRATEGIES)
    if not version.old_flag_names_removed():  # 0.5.14-0.5.19: deprecated alias of the new name
        p.add_argument(
            "--mamba-scheduler-strategy",
            dest="mamba_radix_cache_strategy",
            type=str,
            choices=MAMBA_RADIX_STRATEGIES,
            help=argparse.SUPPRESS,
        )


def _cuda_graph_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--disable-cuda-graph", action="store_true")
    p.add_argument("--disable-cuda-graph-padding", action="store_true")
    if not version.radix_strategy_renamed():
        p.add_argument("--cuda-graph-max-bs", type=int, default=None)
        p.add_argument("--cuda-graph-bs", type=int, nargs="+", default=None)
        return
    # 0.5.14+: split per phase; from 0.5.20 the old name is gone, so it is an ambiguous prefix.
    p.add_argument("--cuda-graph-max-bs-decode", dest="cuda_graph_max_bs", type=int, default=None)
    p.add_argument("--cuda-graph-max-bs-prefill", type=int, default=None)
    if not version.old_flag_names_removed():
        p.add_argument("--cuda-graph-max-bs", dest="cuda_graph_max_bs", type=int, help=argparse.SUPPRESS)
    p.add_argument("--cuda-graph-bs", type=int, nargs="+", default=None)


def _logging_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--log-level", type=str, default="info", choices=LOG_LEVELS)
    p.add_argument("--log-level-http", type=str, default=None, choices=LOG_LEVELS)
    p.add_argument("--log-requests", action="store_true")
    p.add_argument("--log-requests-level", type=int, default=2, choices=[0, 1, 2, 3])
    p.add_argument("--decode-log-interval", type=int, default=40)
    p.add_argument("--show-time-cost", action="store_true")
    p.add_argument("--enable-cache-report", action="store_true")
