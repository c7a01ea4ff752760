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
    # 523 attention_hook.py:203: trtllm_mha is refused below SM90.
    backends = (args.attention_backend, args.prefill_attention_backend, args.decode_attention_backend)
    if "trtllm_mha" in backends and major < 9:
        raise ValueError("TRTLLM MHA backend is only supported on Hopper (SM90) and Blackwell (SM100) GPUs.")
