"""Stand-in for sglang/srt/arg_groups/attention_hook.py (0.5.23)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import gdnsim.config as sim_config

if TYPE_CHECKING:
    from sglang.srt.server_args import ServerArgs

logger = logging.getLogger(__name__)


def handle(args: ServerArgs) -> None:
    major = int(sim_config.load().compute_capability.split(".")[0])
    if args.attention_backend is None:
        args.attention_backend = "fa3" if major == 9 else "trtllm_mha" if major == 10 else "flashinfer"
        logger.warning(f"Attention backend not specified. Use {args.attention_backend} backend by default.")
    _check_trtllm_mha_hardware(args, major)


def _check_trtllm_mha_hardware(args: ServerArgs, major: int) -> None:
    # 523 attention_hook.py:201-227: trtllm_mha needs SM90, SM100 or SM120, for prefill and for decode.
    prefill = args.prefill_attention_backend or args.attention_backend
    decode = args.decode_attention_backend or args.attention_backend
    if prefill == "trtllm_mha" and major not in (9, 10, 12):
        raise ValueError(
            "TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs. "
            "Please use a different prefill backend."
        )
    if decode == "trtllm_mha" and major not in (9, 10, 12):
        raise ValueError(
            "TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and (SM120) "
            "GPUs. Please use a different decode backend."
        )
