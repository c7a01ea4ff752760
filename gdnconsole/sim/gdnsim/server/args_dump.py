# ruff: noqa: E501  (a data table: one row of SGLang fields per line reads best)
"""The ``server_args=…`` line: 0.5.11 prints the dataclass repr (``ServerArgs(model_path='…', …)``, about
11 KB), 0.5.22+ a dict of resolved values. SGLang has a few hundred fields; the stand-in ``ServerArgs``
keeps the ones the simulator acts on, and this table supplies the rest, in SGLang's field order."""

from __future__ import annotations

import dataclasses
from typing import Any

from gdnsim.server import version

# (field, default) in 0.5.11's order; values of the stand-in's own fields replace these defaults.
FIELDS: list[tuple[str, Any]] = [
    ("model_path", None), ("tokenizer_path", None), ("tokenizer_mode", "auto"), ("tokenizer_worker_num", 1),
    ("skip_tokenizer_init", False), ("load_format", "auto"), ("model_loader_extra_config", "{}"),
    ("trust_remote_code", False), ("context_length", None), ("is_embedding", False),
    ("enable_multimodal", None), ("revision", None), ("model_impl", "auto"), ("host", "127.0.0.1"),
    ("port", 30000), ("fastapi_root_path", ""), ("grpc_mode", False), ("skip_server_warmup", False),
    ("warmups", None), ("nccl_port", None), ("checkpoint_engine_wait_weights_before_ready", False),
    ("dtype", "auto"), ("quantization", None), ("quantization_param_path", None), ("kv_cache_dtype", "auto"),
    ("enable_fp32_lm_head", False), ("modelopt_quant", None), ("modelopt_checkpoint_restore_path", None),
    ("modelopt_checkpoint_save_path", None), ("modelopt_export_path", None),
    ("quantize_and_serve", False), ("rl_quant_profile", None), ("mem_fraction_static", None),
    ("max_running_requests", None), ("max_queued_requests", None), ("max_total_tokens", None),
    ("chunked_prefill_size", None), ("enable_dynamic_chunking", False), ("max_prefill_tokens", 16384),
    ("prefill_max_requests", None), ("schedule_policy", "fcfs"), ("enable_priority_scheduling", False),
    ("abort_on_priority_when_disabled", False), ("schedule_low_priority_values_first", False),
    ("priority_scheduling_preemption_threshold", 10), ("schedule_conservativeness", 1.0),
    ("page_size", 1), ("swa_full_tokens_ratio", 0.8), ("disable_hybrid_swa_memory", False),
    ("radix_eviction_policy", "lru"), ("enable_prefill_delayer", False),
    ("prefill_delayer_max_delay_passes", 30), ("prefill_delayer_token_usage_low_watermark", None),
    ("device", "cuda"), ("tp_size", 1), ("pp_size", 1), ("pp_max_micro_batch_size", None),
    ("pp_async_batch_depth", 0), ("stream_interval", 1), ("incremental_streaming_output", False),
    ("enable_streaming_session", False), ("random_seed", None),
    ("constrained_json_whitespace_pattern", None), ("constrained_json_disable_any_whitespace", False),
    ("watchdog_timeout", 300), ("soft_watchdog_timeout", 300), ("dist_timeout", None),
    ("download_dir", None), ("model_checksum", None), ("base_gpu_id", 0), ("gpu_id_step", 1),
    ("sleep_on_idle", False), ("use_ray", False), ("custom_sigquit_handler", None), ("log_level", "info"),
    ("log_level_http", None), ("log_requests", False), ("log_requests_level", 2),
    ("log_requests_format", "text"), ("log_requests_target", None), ("uvicorn_access_log_exclude_prefixes", []),
    ("crash_dump_folder", None), ("show_time_cost", False), ("enable_metrics", False),
    ("enable_metrics_for_all_schedulers", False), ("tokenizer_metrics_custom_labels_header", "x-custom-labels"),
    ("tokenizer_metrics_allowed_custom_labels", None), ("extra_metric_labels", None),
    ("bucket_time_to_first_token", None), ("bucket_inter_token_latency", None),
    ("bucket_e2e_request_latency", None), ("collect_tokens_histogram", False),
    ("prompt_tokens_buckets", None), ("generation_tokens_buckets", None), ("gc_warning_threshold_secs", 0.0),
    ("decode_log_interval", 40), ("enable_request_time_stats_logging", False), ("kv_events_config", None),
    ("enable_trace", False), ("otlp_traces_endpoint", "localhost:4317"), ("export_metrics_to_file", False),
    ("export_metrics_to_file_dir", None), ("api_key", None), ("admin_api_key", None),
    ("served_model_name", None), ("weight_version", "default"), ("chat_template", None),
    ("hf_chat_template_name", None), ("completion_template", None), ("file_storage_path", "sglang_storage"),
    ("enable_cache_report", False), ("reasoning_parser", None), ("tool_call_parser", None),
    ("tool_server", None), ("sampling_defaults", "model"), ("dp_size", 1), ("load_balance_method", "auto"),
    ("attn_cp_size", 1), ("moe_dp_size", 1), ("dist_init_addr", None), ("nnodes", 1), ("node_rank", 0),
    ("json_model_override_args", "{}"), ("preferred_sampling_params", None), ("enable_lora", None),
    ("enable_lora_overlap_loading", None), ("max_lora_rank", None), ("lora_target_modules", None),
    ("lora_paths", None), ("max_loaded_loras", None), ("max_loras_per_batch", 8),
    ("lora_eviction_policy", "lru"), ("lora_backend", "csgmv"), ("max_lora_chunk_size", 16),
    ("attention_backend", None), ("decode_attention_backend", None), ("prefill_attention_backend", None),
    ("sampling_backend", "flashinfer"), ("grammar_backend", "xgrammar"), ("mm_attention_backend", None),
    ("fp8_gemm_runner_backend", "auto"), ("fp4_gemm_runner_backend", "auto"), ("nsa_prefill_backend", None),
    ("nsa_decode_backend", None), ("disable_flashinfer_autotune", False), ("mamba_backend", "triton"),
    ("speculative_algorithm", None), ("speculative_draft_model_path", None),
    ("speculative_draft_model_revision", None), ("speculative_draft_load_format", None),
    ("speculative_num_steps", None), ("speculative_eagle_topk", None), ("speculative_num_draft_tokens", None),
    ("speculative_dflash_block_size", None), ("speculative_dflash_draft_window_size", None),
    ("speculative_accept_threshold_single", 1.0), ("speculative_accept_threshold_acc", 1.0),
    ("speculative_token_map", None), ("speculative_attention_mode", "prefill"),
    ("speculative_draft_attention_backend", None), ("speculative_moe_runner_backend", "auto"),
    ("speculative_moe_a2a_backend", None), ("speculative_draft_model_quantization", None),
    ("speculative_ngram_min_match_window_size", 1), ("speculative_ngram_max_match_window_size", 12),
    ("speculative_ngram_min_bfs_breadth", 1), ("speculative_ngram_max_bfs_breadth", 10),
    ("speculative_ngram_match_type", "BFS"), ("speculative_ngram_branch_length", 18),
    ("speculative_ngram_capacity", 10000000), ("enable_multi_layer_eagle", False), ("ep_size", 1),
    ("moe_a2a_backend", "none"), ("moe_runner_backend", "auto"), ("flashinfer_mxfp4_moe_precision", "default"),
    ("enable_flashinfer_allreduce_fusion", False), ("deepep_mode", "auto"), ("ep_num_redundant_experts", 0),
    ("ep_dispatch_algorithm", None), ("init_expert_location", "trivial"), ("enable_eplb", False),
    ("eplb_algorithm", "auto"), ("eplb_rebalance_num_iterations", 1000), ("eplb_rebalance_layers_per_chunk", None),
    ("eplb_min_rebalancing_utilization_threshold", 1.0), ("expert_distribution_recorder_mode", None),
    ("expert_distribution_recorder_buffer_size", 1000), ("enable_expert_distribution_metrics", False),
    ("deepep_config", None), ("moe_dense_tp_size", None), ("elastic_ep_backend", None),
    ("mooncake_ib_device", None), ("max_mamba_cache_size", None), ("mamba_ssm_dtype", "float32"),
    ("mamba_full_memory_ratio", 0.9), ("mamba_scheduler_strategy", "auto"), ("mamba_track_interval", 256),
    ("linear_attn_backend", "triton"), ("linear_attn_decode_backend", None), ("linear_attn_prefill_backend", None),
    ("enable_hierarchical_cache", False), ("hicache_ratio", 2.0), ("hicache_size", 0),
    ("hicache_write_policy", "write_through"), ("hicache_io_backend", "kernel"),
    ("hicache_mem_layout", "layer_first"), ("hicache_storage_backend", None),
    ("hicache_storage_prefetch_policy", "best_effort"), ("hicache_storage_backend_extra_config", None),
    ("enable_lmcache", False), ("kt_weight_path", None), ("kt_method", "AMXINT4"), ("kt_cpuinfer", None),
    ("kt_threadpool_count", 2), ("kt_num_gpu_experts", None), ("kt_max_deferred_experts_per_token", None),
    ("dllm_algorithm", None), ("dllm_algorithm_config", None), ("enable_double_sparsity", False),
    ("ds_channel_config_path", None), ("ds_heavy_channel_num", 32), ("ds_heavy_token_num", 256),
    ("ds_heavy_channel_type", "qk"), ("ds_sparse_decode_threshold", 4096), ("cpu_offload_gb", 0),
    ("offload_group_size", -1), ("offload_num_in_group", 1), ("offload_prefetch_step", 1),
    ("offload_mode", "cpu"), ("multi_item_scoring_delimiter", None), ("disable_radix_cache", False),
    ("cuda_graph_max_bs", None), ("cuda_graph_bs", None), ("disable_cuda_graph", False),
    ("disable_cuda_graph_padding", False), ("enable_profile_cuda_graph", False), ("enable_cudagraph_gc", False),
    ("enable_layerwise_nvtx_marker", False), ("enable_nccl_nvls", False),
    ("enable_symm_mem", False), ("disable_flashinfer_cutlass_moe_fp4_allgather", False),
    ("enable_tokenizer_batch_encode", False), ("disable_tokenizer_batch_decode", False),
    ("disable_outlines_disk_cache", False), ("disable_custom_all_reduce", False),
    ("enable_mscclpp", False), ("enable_torch_symm_mem", False), ("disable_overlap_schedule", False),
    ("enable_mixed_chunk", False), ("enable_dp_attention", False), ("enable_dp_lm_head", False),
    ("enable_two_batch_overlap", False), ("enable_single_batch_overlap", False), ("tbo_token_distribution_threshold", 0.48),
    ("enable_torch_compile", False), ("enable_piecewise_cuda_graph", False), ("enable_torch_compile_debug_mode", False),
    ("torch_compile_max_bs", 32), ("piecewise_cuda_graph_max_tokens", 4096), ("piecewise_cuda_graph_tokens", None),
    ("piecewise_cuda_graph_compiler", "eager"), ("torchao_config", ""), ("enable_nan_detection", False),
    ("enable_p2p_check", False), ("triton_attention_reduce_in_fp32", False), ("triton_attention_num_kv_splits", 8),
    ("triton_attention_split_tile_size", None), ("num_continuous_decode_steps", 1),
    ("delete_ckpt_after_loading", False), ("enable_memory_saver", False), ("enable_weights_cpu_backup", False),
    ("enable_draft_weights_cpu_backup", False), ("allow_auto_truncate", False), ("enable_custom_logit_processor", False),
    ("flashinfer_mla_disable_ragged", False), ("disable_shared_experts_fusion", False),
    ("disable_chunked_prefix_cache", False), ("disable_fast_image_processor", False),
    ("keep_mm_feature_on_device", False), ("enable_return_hidden_states", False),
    ("enable_return_routed_experts", False), ("scheduler_recv_interval", 1), ("numa_node", None),
    ("enable_deterministic_inference", False), ("rl_on_policy_target", None),
    ("enable_attn_tp_input_scattered", False), ("enable_nsa_prefill_context_parallel", False),
    ("enable_fused_qk_norm_rope", False), ("enable_precise_embedding_interpolation", False),
    ("enable_dynamic_batch_tokenizer", False), ("dynamic_batch_tokenizer_batch_size", 32),
    ("dynamic_batch_tokenizer_batch_timeout", 0.002), ("debug_tensor_dump_output_folder", None),
    ("debug_tensor_dump_layers", None), ("debug_tensor_dump_input_file", None),
    ("debug_tensor_dump_inject", False), ("disaggregation_mode", "null"),
    ("disaggregation_transfer_backend", "mooncake"), ("disaggregation_bootstrap_port", 8998),
    ("disaggregation_decode_tp", None), ("disaggregation_decode_dp", None),
    ("disaggregation_prefill_pp", 1), ("disaggregation_ib_device", None),
    ("disaggregation_decode_enable_offload_kvcache", False), ("num_reserved_decode_tokens", 512),
    ("disaggregation_decode_polling_interval", 1), ("encoder_only", False), ("language_only", False),
    ("encoder_transfer_backend", "zmq_to_scheduler"), ("encoder_urls", []),
    ("custom_weight_loader", []), ("weight_loader_disable_mmap", False),
    ("remote_instance_weight_loader_seed_instance_ip", None),
    ("remote_instance_weight_loader_seed_instance_service_port", None),
    ("remote_instance_weight_loader_send_weights_group_ports", None),
    ("remote_instance_weight_loader_backend", "nccl"), ("remote_instance_weight_loader_start_seed_via_transfer_engine", False),
    ("enable_pdmux", False), ("pdmux_config_path", None), ("sm_group_num", 8),
    ("mm_max_concurrent_calls", 32), ("mm_per_request_timeout", 10.0), ("enable_broadcast_mm_inputs_process", False),
    ("enable_prefix_mm_cache", False), ("mm_enable_dp_encoder", False), ("mm_process_config", {}),
    ("limit_mm_data_per_request", None), ("decrypted_config_file", None), ("decrypted_draft_config_file", None),
    ("forward_hooks", None),
]  # fmt: skip

RENAMED_0_5_22 = {
    "mamba_scheduler_strategy": "mamba_radix_cache_strategy",
    "cuda_graph_max_bs": "cuda_graph_max_bs_decode",
}


def values(server_args: object) -> dict[str, Any]:
    """Every field with its value: the stand-in's own fields override the table's defaults."""
    own = {f.name: getattr(server_args, f.name) for f in dataclasses.fields(server_args)}  # type: ignore[arg-type]
    if version.radix_strategy_renamed():
        own["mamba_scheduler_strategy"] = own["mamba_radix_cache_strategy"]
    merged = {name: own.get(name, default) for name, default in FIELDS}
    if version.resolution_pipeline():
        merged = {RENAMED_0_5_22.get(name, name): value for name, value in merged.items()}
    return merged


def render(server_args: object) -> str:
    """The message SGLang logs after argument processing (511 engine.py:679; 523 engine.py:1185)."""
    fields = values(server_args)
    if version.resolution_pipeline():
        return f"server_args={fields!r}"
    body = ", ".join(f"{name}={value!r}" for name, value in fields.items())
    return f"server_args=ServerArgs({body})"
