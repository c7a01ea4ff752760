"""The core rules' place in each version's table (coretables, spliced in by ruletables): the order in which
SGLang's code runs them, which decides the error SGLang raises first, and the file and lines each cites. The
sources were read against the wheels (0.5.11 server_args.py; 0.5.23 arg_groups/*)."""

from __future__ import annotations

from gdnconsole.sglang.ruletables import table_for

# The core's own steps among the attention ones (the rest of "attention." is ruletables').
CORE_ATTENTION = frozenset(
    {
        "attention.flashmla_page_size",
        "attention.cutlass_mla_page_size",
        "attention.trtllm_mla_hardware",
        "attention.trtllm_mla_page_size",
        "attention.trtllm_mla_kv_cache_dtype",
        "attention.cutedsl_mla_page_size",
        "attention.deepseek_sm100_trtllm_mla",
        "attention.fa3_fp8_e5m2_is_triton",
        "attention.fa4_page_size",
        "attention.linear_flashinfer_needs_bf16_ssm",
    }
)


def core_steps(sglang: str) -> list[tuple[str, str]]:
    """The core's steps (servingtables' own, issue 26, are pinned in test_ruletables_tables.py)."""
    return [
        (step.id, step.source)
        for step in table_for(sglang)
        if step.when.__module__ != "gdnconsole.sglang.servingtables"
        and (step.id.split(".")[0] in ("memory", "parallel", "moe", "schedule") or step.id in CORE_ATTENTION)
    ]


def test_core_steps_of_0_5_11_in_sglangs_order_with_their_lines() -> None:
    assert core_steps("0.5.11") == [
        ("memory.chunked_prefill_default", "srt/server_args.py:1294-1380 (0.5.11)"),
        ("attention.deepseek_sm100_trtllm_mla", "srt/server_args.py:1765-1774 (0.5.11)"),
        ("attention.flashmla_page_size", "srt/server_args.py:2580-2587 (0.5.11)"),
        ("attention.cutlass_mla_page_size", "srt/server_args.py:2589-2596 (0.5.11)"),
        ("attention.trtllm_mla_hardware", "srt/server_args.py:2598-2605 (0.5.11)"),
        ("attention.trtllm_mla_page_size", "srt/server_args.py:2606-2610 (0.5.11)"),
        ("attention.trtllm_mla_kv_cache_dtype", "srt/server_args.py:2611-2616 (0.5.11)"),
        ("attention.fa3_fp8_e5m2_is_triton", "srt/server_args.py:2652-2658 (0.5.11)"),
        ("attention.fa4_page_size", "srt/server_args.py:2660-2668 (0.5.11)"),
        ("attention.linear_flashinfer_needs_bf16_ssm", "srt/server_args.py:2855-2888 (0.5.11)"),
        ("parallel.dp_attention_needs_dp", "srt/server_args.py:2929-2931 (0.5.11)"),
        ("parallel.tp_not_divisible_by_dp", "srt/server_args.py:2933-2940 (0.5.11)"),
        ("parallel.dp_attention_chunk", "srt/server_args.py:2933-2940 (0.5.11)"),
        ("moe.unquant", "srt/server_args.py:815-817 (0.5.11)"),
        ("moe.mxfp8_runner", "srt/server_args.py:2947-2960 (0.5.11)"),
        ("moe.flashinfer_cutlass_quantization", "srt/server_args.py:2962-2968 (0.5.11)"),
        ("moe.flashinfer_cutlass_ep_size", "srt/server_args.py:2969-2972 (0.5.11)"),
        ("moe.flashinfer_cutedsl_quantization", "srt/server_args.py:2974-2977 (0.5.11)"),
        ("moe.flashinfer_cutedsl_ep_size", "srt/server_args.py:2978-2981 (0.5.11)"),
        ("moe.flashinfer_cutedsl_a2a", "srt/server_args.py:2982-2988 (0.5.11)"),
        ("moe.flashinfer_trtllm_quantization", "srt/server_args.py:2994-3003 (0.5.11)"),
        ("moe.flashinfer_trtllm_routed_quantization", "srt/server_args.py:3009-3015 (0.5.11)"),
        ("moe.cutlass_fp8_ep_size", "srt/server_args.py:3030-3036 (0.5.11)"),
        ("moe.a2a_sets_ep_size", "srt/server_args.py:3055-3111 (0.5.11)"),
        ("moe.flashinfer_a2a_runner", "srt/server_args.py:3106-3108 (0.5.11)"),
        ("moe.mori_dispatch_tokens", "srt/server_args.py:3120-3125 (0.5.11)"),
        ("moe.eplb_needs_ep", "srt/server_args.py:3139-3140 (0.5.11)"),
        ("parallel.pp_disables_overlap", "srt/server_args.py:3175-3180 (0.5.11)"),
        ("parallel.tp_pp_nodes", "srt/server_args.py:6774-6777 (0.5.11)"),
        ("parallel.pp_with_speculative", "srt/server_args.py:6785-6788 (0.5.11)"),
        ("parallel.multi_node_dp", "srt/server_args.py:6790-6792 (0.5.11)"),
        ("moe.dense_tp_size", "srt/server_args.py:6797-6801 (0.5.11)"),
        ("memory.chunked_prefill_page_size", "srt/server_args.py:6821-6826 (0.5.11)"),
        ("memory.chunked_prefill_page_size_maybe", "srt/server_args.py:6821-6826 (0.5.11)"),
        ("schedule.priority_policy", "srt/server_args.py:6862-6866 (0.5.11)"),
        ("schedule.conservativeness_negative", "srt/server_args.py:6914-6916 (0.5.11)"),
    ]


def test_core_steps_of_0_5_23_in_sglangs_order_with_their_files_and_lines() -> None:
    assert core_steps("0.5.23") == [
        ("parallel.deprecated_dp_attention", "srt/arg_groups/parallel_hook.py:39-61 (0.5.23)"),
        ("memory.chunked_prefill_default", "srt/arg_groups/memory_hook.py:78-180 (0.5.23)"),
        (
            "attention.deepseek_sm100_trtllm_mla",
            "srt/arg_groups/model_overrides/deepseek_v2.py:177-188 (0.5.23)",
        ),
        ("attention.flashmla_page_size", "srt/arg_groups/overrides.py:1147-1154 (0.5.23)"),
        ("attention.trtllm_mla_page_size", "srt/arg_groups/overrides.py:1155-1163 (0.5.23)"),
        ("attention.cutedsl_mla_page_size", "srt/arg_groups/overrides.py:1164-1173 (0.5.23)"),
        ("attention.trtllm_mla_hardware", "srt/arg_groups/overrides.py:1203-1213 (0.5.23)"),
        ("attention.trtllm_mla_kv_cache_dtype", "srt/arg_groups/overrides.py:1214-1217 (0.5.23)"),
        ("attention.fa3_fp8_e5m2_is_triton", "srt/arg_groups/overrides.py:1263-1270 (0.5.23)"),
        ("attention.fa4_page_size", "srt/arg_groups/overrides.py:1273-1297 (0.5.23)"),
        ("attention.linear_flashinfer_needs_bf16_ssm", "srt/arg_groups/attention_hook.py:281-345 (0.5.23)"),
        ("parallel.tp_not_divisible_by_dp", "srt/arg_groups/parallel_hook.py:313-333 (0.5.23)"),
        ("parallel.dp_attention_chunk", "srt/arg_groups/parallel_hook.py:313-333 (0.5.23)"),
        ("moe.unquant", "srt/arg_groups/serving_hook.py:695-697 (0.5.23)"),
        ("moe.mxfp8_runner", "srt/arg_groups/overrides.py:1484-1512 (0.5.23)"),
        ("moe.flashinfer_cutlass_quantization", "srt/arg_groups/moe_hook.py:80-88 (0.5.23)"),
        ("moe.flashinfer_cutlass_ep_size", "srt/arg_groups/moe_hook.py:89-92 (0.5.23)"),
        ("moe.flashinfer_cutedsl_quantization", "srt/arg_groups/moe_hook.py:94-101 (0.5.23)"),
        ("moe.flashinfer_cutedsl_ep_size", "srt/arg_groups/moe_hook.py:102-105 (0.5.23)"),
        ("moe.flashinfer_cutedsl_a2a", "srt/arg_groups/moe_hook.py:106-113 (0.5.23)"),
        ("moe.flashinfer_trtllm_quantization", "srt/arg_groups/moe_hook.py:123-136 (0.5.23)"),
        ("moe.flashinfer_trtllm_routed_quantization", "srt/arg_groups/moe_hook.py:137-148 (0.5.23)"),
        ("moe.cutlass_fp8_ep_size", "srt/arg_groups/moe_hook.py:155-163 (0.5.23)"),
        ("moe.a2a_sets_ep_size", "srt/arg_groups/overrides.py:1611-1620 (0.5.23)"),
        ("moe.flashinfer_a2a_attn_dp", "srt/arg_groups/moe_hook.py:473-484 (0.5.23)"),
        ("moe.flashinfer_a2a_runner", "srt/arg_groups/moe_hook.py:531-541 (0.5.23)"),
        ("moe.mori_dispatch_tokens", "srt/arg_groups/moe_hook.py:563-573 (0.5.23)"),
        ("moe.pplx_low_latency_only", "srt/arg_groups/moe_hook.py:576-580 (0.5.23)"),
        ("moe.pplx_needs_attn_dp", "srt/arg_groups/moe_hook.py:591-594 (0.5.23)"),
        ("moe.pplx_runner", "srt/arg_groups/moe_hook.py:599-602 (0.5.23)"),
        ("moe.pplx_dispatch_tokens", "srt/arg_groups/moe_hook.py:612-620 (0.5.23)"),
        ("moe.eplb_needs_ep", "srt/arg_groups/parallel_hook.py:790-791 (0.5.23)"),
        ("parallel.pp_disables_overlap", "srt/arg_groups/overrides.py:1624-1628 (0.5.23)"),
        ("parallel.tp_pp_nodes", "srt/arg_groups/validation_hook.py:177-181 (0.5.23)"),
        ("parallel.pp_with_speculative", "srt/arg_groups/validation_hook.py:128-135 (0.5.23)"),
        ("parallel.pp_speculative_needs_prefill_node", "srt/arg_groups/validation_hook.py:158-163 (0.5.23)"),
        ("parallel.multi_node_dp", "srt/arg_groups/validation_hook.py:199-202 (0.5.23)"),
        ("moe.dense_tp_size", "srt/arg_groups/validation_hook.py:207-211 (0.5.23)"),
        ("memory.chunked_prefill_page_size", "srt/arg_groups/validation_hook.py:241-246 (0.5.23)"),
        ("memory.chunked_prefill_page_size_maybe", "srt/arg_groups/validation_hook.py:241-246 (0.5.23)"),
        ("schedule.priority_policy", "srt/arg_groups/validation_hook.py:282-287 (0.5.23)"),
        ("schedule.conservativeness_negative", "srt/arg_groups/validation_hook.py:314-316 (0.5.23)"),
    ]
