"""Stand-in for sglang/srt/arg_groups/mamba_hook.py (0.5.23), with the ``auto`` override of overrides.py."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from gdnsim.server import models

if TYPE_CHECKING:
    from sglang.srt.server_args import ServerArgs

logger = logging.getLogger(__name__)


def handle(args: ServerArgs) -> None:
    arch = args.get_model_spec().arch
    if args.disable_radix_cache:
        return  # model_hook.py:1048-1076: no radix cache, no mamba radix-cache strategy to check
    if arch not in models.HYBRID_GDN_ARCHS:
        if args.mamba_radix_cache_strategy.startswith("extra_buffer"):
            raise ValueError(
                f"--mamba-radix-cache-strategy {args.mamba_radix_cache_strategy} needs mamba state, "
                f"got {arch}."
            )
        return
    if args.mamba_radix_cache_strategy == "auto":
        _resolve_auto(args, arch)
    strategy = args.mamba_radix_cache_strategy
    if strategy.startswith("extra_buffer"):
        assert arch in models.EXTRA_BUFFER_ARCHS, f"extra_buffer is not supported for {arch}; use no_buffer."
        # mamba_hook.py:132-135: asserts with no message, on what the user gave (auto-choice comes later)
        if args.speculative_num_draft_tokens is not None:
            assert args.mamba_track_interval >= args.speculative_num_draft_tokens
        if args.page_size is not None:
            assert args.mamba_track_interval % args.page_size == 0
    elif strategy == "no_buffer":
        assert args.page_size in (1, None), "no_buffer only supports page_size=1."
        assert args.disable_overlap_schedule, (
            "no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True."
        )
        assert args.attention_backend != "trtllm_mha", (
            "no_buffer do not support trtllm_mha attention backend."
        )


def _resolve_auto(args: ServerArgs, arch: str) -> None:
    # overrides.py:455-487: extra_buffer when the arch supports it (triton linear attention) and overlap is
    # on or pages are larger than one token; otherwise no_buffer with the overlap schedule off.
    supported = arch in models.EXTRA_BUFFER_ARCHS and args.linear_attn_backend == "triton"
    paging = args.page_size is not None and args.page_size > 1
    if supported and (not args.disable_overlap_schedule or paging):
        args.mamba_radix_cache_strategy = "extra_buffer"
        return
    args.mamba_radix_cache_strategy = "no_buffer"
    args.disable_overlap_schedule = True
