"""Stand-in for sglang/srt/arg_groups/speculative_hook.py (0.5.23)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sglang.srt.server_args import ServerArgs

logger = logging.getLogger(__name__)

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE")
PAGED_TOPK_BACKENDS = ("flashinfer", "fa3", "triton")  # 523 speculative_hook.py:1270-1284
BUILTINS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO")


def handle(args: ServerArgs) -> None:
    if args.speculative_algorithm is None:
        return
    args.speculative_algorithm = args.speculative_algorithm.upper()  # upper-cased during resolution
    if args.speculative_algorithm not in BUILTINS:  # srt/speculative/spec_info.py:65
        raise ValueError(f"Unknown speculative algorithm name: {args.speculative_algorithm}")
    if args.speculative_algorithm == "NEXTN":  # speculative_hook.py:81-118
        args.speculative_algorithm = "EAGLE"
    if args.speculative_algorithm in EAGLE_FAMILY:
        _handle_eagle_family(args)
    elif args.speculative_algorithm == "DFLASH" and args.speculative_draft_model_path is None:
        # speculative_hook.py:324-327
        raise ValueError("DFLASH speculative decoding requires setting --speculative-draft-model-path.")
    elif args.speculative_algorithm == "NGRAM":
        args.speculative_num_steps = 1  # 0.5.23 sets it during resolution (FACTS §0)
        args.speculative_eagle_topk = args.speculative_ngram_max_bfs_breadth
        if args.speculative_num_draft_tokens is None:
            args.speculative_num_draft_tokens = 12
        if args.speculative_eagle_topk > 1 and args.page_size > 1 and args.attention_backend != "flashinfer":  # type: ignore[operator]
            # speculative_hook.py:1357-1367
            raise ValueError(
                f"speculative_eagle_topk({args.speculative_eagle_topk}) > 1 with page_size({args.page_size}) "
                "> 1 is unstable and produces incorrect results for paged attention backends. This "
                "combination is only supported for the 'flashinfer' backend."
            )


def _handle_eagle_family(args: ServerArgs) -> None:
    from sglang.srt.server_args import auto_choose_speculative_params

    if args.max_running_requests is None:
        args.max_running_requests = 48
        logger.warning(
            "Max running requests is reset to 48 for speculative decoding. You can override this by "
            "explicitly setting --max-running-requests."
        )
    if args.speculative_num_steps is None:
        # speculative_hook.py:1159-1163: a bare assert, no message.
        assert args.speculative_eagle_topk is None and args.speculative_num_draft_tokens is None
        (
            args.speculative_num_steps,
            args.speculative_eagle_topk,
            args.speculative_num_draft_tokens,
        ) = auto_choose_speculative_params(args)
    backends = (args.attention_backend, args.prefill_attention_backend, args.decode_attention_backend)
    if "trtllm_mha" in backends and args.speculative_eagle_topk > 1:  # type: ignore[operator]  # :1176-1180
        raise ValueError("trtllm_mha backend only supports topk = 1 for speculative decoding.")
    if (
        args.speculative_eagle_topk == 1
        and args.speculative_num_draft_tokens != args.speculative_num_steps + 1
    ):
        # :1254-1267
        logger.warning(
            "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when "
            "speculative_eagle_topk == 1"
        )
        args.speculative_num_draft_tokens = args.speculative_num_steps + 1
    if (  # :1270-1284 (TypeError here when topk stayed None, as in SGLang)
        args.speculative_eagle_topk > 1  # type: ignore[operator]
        and args.page_size > 1  # type: ignore[operator]
        and args.attention_backend not in PAGED_TOPK_BACKENDS
    ):
        raise ValueError(
            f"speculative_eagle_topk > 1 with page_size > 1 is only supported on {PAGED_TOPK_BACKENDS}; "
            f"got attention_backend={args.attention_backend!r}. Use page_size == 1 or one of those backends."
        )
    if args.disable_overlap_schedule:  # :1098-1102
        logger.warning("Non-overlap (synchronous) spec v2 is used because overlap schedule is disabled.")
