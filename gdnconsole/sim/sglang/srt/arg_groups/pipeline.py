"""Stand-in for sglang/srt/arg_groups/pipeline.py: the hooks of ``ServerArgs.resolve_once()``, in order."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sglang.srt.arg_groups import attention_hook, mamba_hook, speculative_hook

if TYPE_CHECKING:
    from sglang.srt.server_args import ServerArgs


def run_resolution_pipeline(args: ServerArgs) -> None:
    args._handle_missing_default_values()
    args._handle_gpu_memory_settings()
    attention_hook.handle(args)
    if args.page_size is None:
        args.page_size = 1
    speculative_hook.handle(args)  # on 0.5.23 the topk assertion comes before the mamba rules (FACTS §0)
    mamba_hook.handle(args)
