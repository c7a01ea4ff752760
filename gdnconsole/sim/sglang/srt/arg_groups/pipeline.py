"""Stand-in for sglang/srt/arg_groups/pipeline.py: the hooks of ``ServerArgs.resolve_once()``, in order."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sglang.srt.arg_groups import attention_hook, mamba_hook, speculative_hook

if TYPE_CHECKING:
    from sglang.srt.server_args import ServerArgs


def run_resolution_pipeline(args: ServerArgs) -> None:
    args._handle_deprecated_dp_attention()  # before any hook reads the DP layout (523 pipeline.py:45)
    args._handle_model_config()  # ModelConfig's context length and quantization checks (issue 26)
    args._handle_missing_default_values()
    args._handle_gpu_memory_settings()
    # The model hook validates the mamba strategy before the attention and speculative hooks (523
    # model_hook.py:225,737); page size is still unset there unless given. The topk assertion comes first
    # in practice (FACTS §0) because no mamba rule fails on the default strategy.
    mamba_hook.handle(args)
    attention_hook.handle(args)
    if args.page_size is None:
        args.page_size = 1
    args._handle_data_parallelism()
    speculative_hook.handle(args)
