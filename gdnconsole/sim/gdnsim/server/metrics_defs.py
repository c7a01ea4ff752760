"""SGLang's metric families the simulator serves, per version, read from the wheels'
``sglang/srt/observability/metrics_collector.py`` (line numbers beside each family; generated with an ast
reading of that file: ``tools/gen_metrics_defs.py build/sgw``, which also leaves out the families
README.md "Left out" lists). ``BASE`` stands for the collector's labels: the scheduler's (0.5.11
observability/scheduler_metrics_mixin.py:133-143) or the tokenizer manager's (0.5.11
managers/tokenizer_manager.py:461-464)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    name: str
    kind: str  # "gauge", "counter" or "histogram"
    doc: str
    extra_labels: tuple[str, ...]  # after the collector's own
    buckets: tuple[float, ...] | None
    scheduler: bool  # from the scheduler (per rank), else from the tokenizer manager
    pid: bool = False  # a gauge whose multiprocess_mode keeps the pid label ("all", the default)


# ruff: noqa: E501 (help texts as the wheels have them)
FAMILIES: dict[str, tuple[Family, ...]] = {
    "0.5.11": (
        # 0.5.11 observability/metrics_collector.py:200
        Family("sglang:num_running_reqs", "gauge", "The number of running requests.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:206
        Family(
            "sglang:num_queue_reqs",
            "gauge",
            "The number of requests in the waiting queue.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:218
        Family(
            "sglang:gen_throughput", "gauge", "The generation throughput (token/s).", (), None, True, False
        ),
        # 0.5.11 observability/metrics_collector.py:224
        Family("sglang:cache_hit_rate", "gauge", "The prefix cache hit rate.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:230
        Family(
            "sglang:decode_sum_seq_lens",
            "gauge",
            "The sum of all sequence lengths in decode.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:240
        Family("sglang:token_usage", "gauge", "The token usage.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:246
        Family(
            "sglang:full_token_usage",
            "gauge",
            "The token usage for full attention layers.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:252
        Family("sglang:swa_token_usage", "gauge", "The token usage for SWA layers.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:258
        Family("sglang:mamba_usage", "gauge", "The token usage for Mamba layers.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:268
        Family("sglang:num_used_tokens", "gauge", "The number of used tokens.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:274
        Family(
            "sglang:kv_available_tokens",
            "gauge",
            "Number of free token slots in the KV cache pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:280
        Family(
            "sglang:kv_evictable_tokens",
            "gauge",
            "Number of evictable (radix-cached) token slots in the KV cache pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:286
        Family(
            "sglang:kv_used_tokens",
            "gauge",
            "Number of actively used token slots in the KV cache pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:296
        Family(
            "sglang:spec_accept_length",
            "gauge",
            "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:302
        Family(
            "sglang:spec_accept_rate",
            "gauge",
            "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:313
        Family(
            "sglang:num_retracted_reqs", "gauge", "The number of retracted requests.", (), None, True, True
        ),
        # 0.5.11 observability/metrics_collector.py:318
        Family(
            "sglang:num_retracted_requests_total",
            "counter",
            "Total number of retracted requests.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:324
        Family(
            "sglang:num_retracted_input_tokens_total",
            "counter",
            "Total number of retracted input tokens.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:329
        Family(
            "sglang:num_retracted_output_tokens_total",
            "counter",
            "Total number of retracted output tokens.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:334
        Family(
            "sglang:num_paused_reqs",
            "gauge",
            "The number of paused requests by async weight sync.",
            (),
            None,
            True,
            True,
        ),
        # 0.5.11 observability/metrics_collector.py:422
        Family("sglang:utilization", "gauge", "The utilization.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:432
        Family("sglang:new_token_ratio", "gauge", "The new token ratio.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:443
        Family(
            "sglang:is_cuda_graph", "gauge", "Whether the batch is using CUDA graph.", (), None, True, False
        ),
        # 0.5.11 observability/metrics_collector.py:449
        Family(
            "sglang:cuda_graph_passes_total",
            "counter",
            "Total number of forward passes categorized by CUDA graph.",
            ("mode",),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:515
        Family(
            "sglang:num_unique_running_routing_keys",
            "gauge",
            "Number of unique routing keys in running batch.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:537
        Family(
            "sglang:queue_time_seconds",
            "histogram",
            "Histogram of queueing time in seconds.",
            (),
            (
                0.0,
                0.1,
                0.2,
                0.5,
                1.0,
                2.0,
                3.0,
                4.0,
                5.0,
                10.0,
                15.0,
                20.0,
                30.0,
                40.0,
                50.0,
                60.0,
                70.0,
                80.0,
                90.0,
                100.0,
                200.0,
                300.0,
                400.0,
                500.0,
                600.0,
                700.0,
                800.0,
                900.0,
                1000.0,
                1200.0,
                1400.0,
                1600.0,
                1800.0,
                2000.0,
                2500.0,
                3000.0,
            ),
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:580
        Family(
            "sglang:per_stage_req_latency_seconds",
            "histogram",
            "The latency of each stage of requests.",
            ("stage",),
            (
                0.001,
                0.0016200000000000001,
                0.0026244000000000007,
                0.004251528,
                0.006887475360000002,
                0.011157710083200004,
                0.018075490334784006,
                0.029282294342350097,
                0.047437316834607154,
                0.07684845327206359,
                0.12449449430074302,
                0.20168108076720373,
                0.3267233508428701,
                0.5292918283654495,
                0.8574527619520282,
                1.389073474362286,
                2.2502990284669036,
                3.6454844261163837,
                5.905684770308542,
                9.567209327899839,
                15.49887911119774,
                25.10818416014034,
                40.67525833942735,
                65.89391850987231,
                106.74814798599316,
                172.93199973730896,
                280.1498395744405,
                453.84274011059364,
                735.2252389791618,
                1191.064887146242,
            ),
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:730
        Family(
            "sglang:realtime_tokens_total",
            "counter",
            "Total number of tokens processed (updated on each log interval). mode: prefill_compute, prefill_cache, decode.",
            ("mode",),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:738
        Family(
            "sglang:forward_execution_seconds_total",
            "counter",
            "Total time that GPU is busy executing model forward passes. Refer to ForwardMode for category labels.",
            ("category",),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:746
        Family(
            "sglang:estimated_flops_per_gpu_total",
            "counter",
            "Estimated number of floating point operations per GPU (for Model FLOPs Utilization calculations).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:754
        Family(
            "sglang:estimated_read_bytes_per_gpu_total",
            "counter",
            "Estimated number of bytes read from memory per GPU (for Model FLOPs Utilization calculations).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:762
        Family(
            "sglang:estimated_write_bytes_per_gpu_total",
            "counter",
            "Estimated number of bytes written to memory per GPU (for Model FLOPs Utilization calculations).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:838
        Family(
            "sglang:max_total_num_tokens",
            "gauge",
            "Maximum total number of tokens in the KV cache pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:844
        Family(
            "sglang:max_running_requests_under_SLO",
            "gauge",
            "The maximum number of running requests under SLO.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:850
        Family(
            "sglang:engine_startup_time",
            "gauge",
            "The time taken for the engine to start up.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:856
        Family(
            "sglang:engine_load_weights_time",
            "gauge",
            "The time taken for the engine to load weights.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:862
        Family("sglang:page_size", "gauge", "KV cache page size in tokens.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:868
        Family("sglang:num_pages", "gauge", "Number of KV cache pages.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:874
        Family("sglang:context_len", "gauge", "Maximum context length.", (), None, True, False),
        # 0.5.11 observability/metrics_collector.py:880
        Family(
            "sglang:startup_available_gpu_memory_gb",
            "gauge",
            "Available GPU memory in GB at startup.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:499
        Family(
            "sglang:num_streaming_sessions",
            "gauge",
            "The number of streaming sessions.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:505
        Family(
            "sglang:streaming_session_held_tokens",
            "gauge",
            "The number of KV tokens currently held by streaming session slots.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:1207
        Family(
            "sglang:prompt_tokens_total",
            "counter",
            "Number of prefill tokens processed.",
            (),
            None,
            False,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:1212
        Family(
            "sglang:generation_tokens_total",
            "counter",
            "Number of generation tokens processed.",
            (),
            None,
            False,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:1273
        Family(
            "sglang:cached_tokens_total",
            "counter",
            "Number of cached prompt tokens by source (device/host/storage).",
            ("cache_source",),
            None,
            False,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:1279
        Family(
            "sglang:num_requests_total", "counter", "Number of requests processed.", (), None, False, False
        ),
        # 0.5.11 observability/metrics_collector.py:1291
        Family(
            "sglang:num_aborted_requests_total",
            "counter",
            "Number of requests aborted.",
            (),
            None,
            False,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:1372
        Family(
            "sglang:time_to_first_token_seconds",
            "histogram",
            "Histogram of time to first token in seconds.",
            (),
            (
                0.1,
                0.2,
                0.4,
                0.6,
                0.8,
                1.0,
                2.0,
                4.0,
                6.0,
                8.0,
                10.0,
                20.0,
                40.0,
                60.0,
                80.0,
                100.0,
                200.0,
                400.0,
            ),
            False,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:1379
        Family(
            "sglang:inter_token_latency_seconds",
            "histogram",
            "Histogram of inter-token latency in seconds.",
            (),
            (
                0.002,
                0.004,
                0.006,
                0.008,
                0.01,
                0.015,
                0.02,
                0.025,
                0.03,
                0.035,
                0.04,
                0.06,
                0.08,
                0.1,
                0.2,
                0.4,
                0.6,
                0.8,
                1.0,
                2.0,
                4.0,
                6.0,
                8.0,
            ),
            False,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:1386
        Family(
            "sglang:e2e_request_latency_seconds",
            "histogram",
            "Histogram of End-to-end request latency in seconds",
            (),
            (
                0.1,
                0.2,
                0.4,
                0.6,
                0.8,
                1.0,
                2.0,
                4.0,
                6.0,
                8.0,
                10.0,
                20.0,
                40.0,
                60.0,
                80.0,
                100.0,
                200.0,
                400.0,
                600.0,
                1200.0,
                1800.0,
                2400.0,
            ),
            False,
            False,
        ),
    ),
    "0.5.23": (
        # 0.5.23 observability/metrics_collector.py:364
        Family("sglang:num_running_reqs", "gauge", "The number of running requests.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:370
        Family(
            "sglang:num_queue_reqs",
            "gauge",
            "The number of requests in the waiting queue.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:382
        Family(
            "sglang:gen_throughput", "gauge", "The generation throughput (token/s).", (), None, True, False
        ),
        # 0.5.23 observability/metrics_collector.py:388
        Family("sglang:cache_hit_rate", "gauge", "The prefix cache hit rate.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:394
        Family(
            "sglang:decode_sum_seq_lens",
            "gauge",
            "The sum of all sequence lengths in decode.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:404
        Family("sglang:token_usage", "gauge", "The token usage.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:410
        Family(
            "sglang:full_token_usage",
            "gauge",
            "The token usage for full attention layers.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:416
        Family("sglang:swa_token_usage", "gauge", "The token usage for SWA layers.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:422
        Family("sglang:mamba_usage", "gauge", "The token usage for Mamba layers.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:432
        Family("sglang:num_used_tokens", "gauge", "The number of used tokens.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:438
        Family(
            "sglang:kv_available_tokens",
            "gauge",
            "Number of free token slots in the KV cache pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:444
        Family(
            "sglang:kv_evictable_tokens",
            "gauge",
            "Number of evictable (radix-cached) token slots in the KV cache pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:450
        Family(
            "sglang:kv_used_tokens",
            "gauge",
            "Number of actively used token slots in the KV cache pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:456
        Family(
            "sglang:swa_available_tokens",
            "gauge",
            "Number of free token slots in the SWA pool (hybrid-SWA only).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:462
        Family(
            "sglang:swa_evictable_tokens",
            "gauge",
            "Number of evictable (radix-cached) token slots in the SWA pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:468
        Family(
            "sglang:swa_used_tokens",
            "gauge",
            "Number of actively used token slots in the SWA pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:474
        Family(
            "sglang:mamba_available_tokens",
            "gauge",
            "Number of free state slots in the mamba SSM pool (hybrid-SSM only).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:480
        Family(
            "sglang:mamba_evictable_tokens",
            "gauge",
            "Number of evictable (radix-cached) state slots in the mamba SSM pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:486
        Family(
            "sglang:mamba_used_tokens",
            "gauge",
            "Number of actively used state slots in the mamba SSM pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:496
        Family(
            "sglang:weight_load_duration_seconds",
            "gauge",
            "Wall time of the most recent update_weights_from_<source> call on this scheduler rank (seconds). `source` label is one of: disk, distributed, tensor, ipc. Event-detection via changes(...[<range>]) > 0 — no separate counter needed.",
            ("source",),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:511
        Family(
            "sglang:spec_accept_length",
            "gauge",
            "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:517
        Family(
            "sglang:spec_accept_rate",
            "gauge",
            "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:523
        Family(
            "sglang:spec_cap_length",
            "gauge",
            "Mean DSpark confidence-scheduled verify window per verify step, incl the bonus slot (0 when no cap is scheduled).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:529
        Family(
            "sglang:spec_block_accept_length",
            "gauge",
            "Mean uncapped full-block accept length per verify step (accept + cap-trimmed drafts; exact only in DSpark cap-accept mode).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:535
        Family(
            "sglang:spec_num_steps", "gauge", "Currently active speculative_num_steps.", (), None, True, False
        ),
        # 0.5.23 observability/metrics_collector.py:541
        Family(
            "sglang:spec_num_draft_tokens",
            "gauge",
            "Currently active speculative_num_draft_tokens (decouples from steps under topk>1).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:552
        Family(
            "sglang:num_retracted_reqs", "gauge", "The number of retracted requests.", (), None, True, True
        ),
        # 0.5.23 observability/metrics_collector.py:557
        Family(
            "sglang:num_retracted_requests_total",
            "counter",
            "Total number of retracted requests.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:563
        Family(
            "sglang:num_retracted_input_tokens_total",
            "counter",
            "Total number of retracted input tokens.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:568
        Family(
            "sglang:num_retracted_output_tokens_total",
            "counter",
            "Total number of retracted output tokens.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:573
        Family(
            "sglang:num_paused_reqs",
            "gauge",
            "The number of paused requests by async weight sync.",
            (),
            None,
            True,
            True,
        ),
        # 0.5.23 observability/metrics_collector.py:704
        Family("sglang:utilization", "gauge", "The utilization.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:710
        Family(
            "sglang:fwd_occupancy", "gauge", "Forward pass GPU occupancy percentage.", (), None, True, False
        ),
        # 0.5.23 observability/metrics_collector.py:720
        Family("sglang:new_token_ratio", "gauge", "The new token ratio.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:731
        Family(
            "sglang:is_cuda_graph", "gauge", "Whether the batch is using CUDA graph.", (), None, True, False
        ),
        # 0.5.23 observability/metrics_collector.py:737
        Family(
            "sglang:cuda_graph_passes_total",
            "counter",
            "Total number of forward passes categorized by CUDA graph.",
            ("mode",),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:815
        Family(
            "sglang:num_unique_running_routing_keys",
            "gauge",
            "Number of unique routing keys in running batch.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:837
        Family(
            "sglang:queue_time_seconds",
            "histogram",
            "Histogram of queueing time in seconds.",
            (),
            (
                0.0,
                0.001,
                0.005,
                0.01,
                0.05,
                0.1,
                0.2,
                0.5,
                1.0,
                2.0,
                3.0,
                4.0,
                5.0,
                10.0,
                15.0,
                20.0,
                30.0,
                40.0,
                50.0,
                60.0,
                70.0,
                80.0,
                90.0,
                100.0,
                200.0,
                300.0,
                400.0,
                500.0,
                600.0,
                700.0,
                800.0,
                900.0,
                1000.0,
                1200.0,
                1400.0,
                1600.0,
                1800.0,
                2000.0,
                2500.0,
                3000.0,
            ),
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:884
        Family(
            "sglang:per_stage_req_latency_seconds",
            "histogram",
            "The latency of each stage of requests.",
            ("stage",),
            (
                0.001,
                0.0016200000000000001,
                0.0026244000000000007,
                0.004251528,
                0.006887475360000002,
                0.011157710083200004,
                0.018075490334784006,
                0.029282294342350097,
                0.047437316834607154,
                0.07684845327206359,
                0.12449449430074302,
                0.20168108076720373,
                0.3267233508428701,
                0.5292918283654495,
                0.8574527619520282,
                1.389073474362286,
                2.2502990284669036,
                3.6454844261163837,
                5.905684770308542,
                9.567209327899839,
                15.49887911119774,
                25.10818416014034,
                40.67525833942735,
                65.89391850987231,
                106.74814798599316,
                172.93199973730896,
                280.1498395744405,
                453.84274011059364,
                735.2252389791618,
                1191.064887146242,
            ),
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1032
        Family(
            "sglang:realtime_tokens_total",
            "counter",
            "Total number of tokens processed (updated on each log interval). mode: prefill_compute, prefill_cache, decode.",
            ("mode",),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1040
        Family(
            "sglang:prefill_effective_tokens_total",
            "counter",
            "Effective prefill tokens with retracted-request re-counts excluded, updated on each log interval. mode: device_hit, host_hit, storage_hit, input. Windowed prefix cache hit rate = rate(sum of *_hit) / rate(sum of all modes); per-tier rate uses a single *_hit mode in the numerator.",
            ("mode",),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1054
        Family(
            "sglang:forward_execution_seconds_total",
            "counter",
            "Total time that GPU is busy executing model forward passes. Refer to ForwardMode for category labels.",
            ("category",),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1062
        Family(
            "sglang:scheduler_idle_seconds_total",
            "counter",
            "Total wall time while the scheduler has no runnable or queued work.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1069
        Family(
            "sglang:scheduler_process_cpu_seconds_total",
            "counter",
            "Total CPU time consumed by the scheduler process across all threads.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1076
        Family(
            "sglang:scheduler_stage_seconds_total",
            "counter",
            "Total scheduler-loop wall time exclusively attributed to each stage. forward_overlap (full, partial, none): full=both endpoints active, partial=one, none=no observed overlap (including unavailable timing). Not exact overlapped/exposed seconds.",
            ("category", "forward_overlap"),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1092
        Family(
            "sglang:estimated_flops_per_gpu_total",
            "counter",
            "Estimated number of floating point operations per GPU (for Model FLOPs Utilization calculations).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1100
        Family(
            "sglang:estimated_read_bytes_per_gpu_total",
            "counter",
            "Estimated number of bytes read from memory per GPU (for Model FLOPs Utilization calculations).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1108
        Family(
            "sglang:estimated_write_bytes_per_gpu_total",
            "counter",
            "Estimated number of bytes written to memory per GPU (for Model FLOPs Utilization calculations).",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1289
        Family(
            "sglang:max_total_num_tokens",
            "gauge",
            "Maximum total number of tokens in the KV cache pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1295
        Family(
            "sglang:max_total_num_tokens_swa",
            "gauge",
            "Maximum total number of tokens in the SWA KV cache pool.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1301
        Family(
            "sglang:weight_memory_usage_gb",
            "gauge",
            "Memory used by model weights in GB.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1307
        Family(
            "sglang:kv_cache_memory_usage_gb",
            "gauge",
            "Memory used by the KV cache pools in GB.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1313
        Family(
            "sglang:graph_memory_usage_gb",
            "gauge",
            "Memory used by captured device graphs in GB.",
            ("phase",),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1319
        Family(
            "sglang:max_running_requests_under_SLO",
            "gauge",
            "The maximum number of running requests under SLO.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1325
        Family("sglang:page_size", "gauge", "KV cache page size in tokens.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:1331
        Family("sglang:num_pages", "gauge", "Number of KV cache pages.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:1337
        Family("sglang:context_len", "gauge", "Maximum context length.", (), None, True, False),
        # 0.5.23 observability/metrics_collector.py:1343
        Family(
            "sglang:startup_available_gpu_memory_gb",
            "gauge",
            "Available GPU memory in GB at startup.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:799
        Family(
            "sglang:num_streaming_sessions",
            "gauge",
            "The number of streaming sessions.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:805
        Family(
            "sglang:streaming_session_held_tokens",
            "gauge",
            "The number of KV tokens currently held by streaming session slots.",
            (),
            None,
            True,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1842
        Family(
            "sglang:startup_time_seconds",
            "gauge",
            "Engine startup duration by phase in seconds.",
            ("phase",),
            None,
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1848
        Family(
            "sglang:startup_cuda_graph_time_seconds",
            "gauge",
            "CUDA graph capture duration by phase in seconds.",
            ("phase",),
            None,
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1855
        Family(
            "sglang:prompt_tokens_total",
            "counter",
            "Number of prefill tokens processed.",
            ("is_streaming",),
            None,
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1860
        Family(
            "sglang:generation_tokens_total",
            "counter",
            "Number of generation tokens processed.",
            ("is_streaming",),
            None,
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1865
        Family(
            "sglang:spec_verify_calls_total",
            "counter",
            "Number of speculative decoding verification calls.",
            (),
            None,
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1934
        Family(
            "sglang:cached_tokens_total",
            "counter",
            "Number of cached prompt tokens by source (device/host/storage).",
            ("cache_source",),
            None,
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1940
        Family(
            "sglang:num_requests_total",
            "counter",
            "Number of requests processed.",
            ("is_streaming",),
            None,
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1946
        Family(
            "sglang:get_loads_duration_seconds",
            "histogram",
            "Time spent serving /v1/loads requests (seconds).",
            (),
            (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0),
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1959
        Family(
            "sglang:num_aborted_requests_total",
            "counter",
            "Number of requests aborted.",
            (),
            None,
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:2040
        Family(
            "sglang:time_to_first_token_seconds",
            "histogram",
            "Histogram of time to first token in seconds.",
            ("is_streaming",),
            (
                0.1,
                0.2,
                0.4,
                0.6,
                0.8,
                1.0,
                2.0,
                4.0,
                6.0,
                8.0,
                10.0,
                20.0,
                40.0,
                60.0,
                80.0,
                100.0,
                200.0,
                400.0,
            ),
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:2050
        Family(
            "sglang:inter_token_latency_seconds",
            "histogram",
            "Histogram of inter-token latency in seconds.",
            (),
            (
                0.002,
                0.004,
                0.006,
                0.008,
                0.01,
                0.015,
                0.02,
                0.025,
                0.03,
                0.035,
                0.04,
                0.06,
                0.08,
                0.1,
                0.2,
                0.4,
                0.6,
                0.8,
                1.0,
                2.0,
                4.0,
                6.0,
                8.0,
            ),
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:2057
        Family(
            "sglang:request_time_per_output_token_seconds",
            "histogram",
            "Per-request TPOT in seconds: (finished_time - first_token_time) / (completion_tokens - 1).",
            ("is_streaming",),
            (
                0.002,
                0.004,
                0.006,
                0.008,
                0.01,
                0.015,
                0.02,
                0.025,
                0.03,
                0.035,
                0.04,
                0.06,
                0.08,
                0.1,
                0.2,
                0.4,
                0.6,
                0.8,
                1.0,
                2.0,
                4.0,
                6.0,
                8.0,
            ),
            False,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:2067
        Family(
            "sglang:e2e_request_latency_seconds",
            "histogram",
            "Histogram of End-to-end request latency in seconds",
            ("is_streaming",),
            (
                0.1,
                0.2,
                0.4,
                0.6,
                0.8,
                1.0,
                2.0,
                4.0,
                6.0,
                8.0,
                10.0,
                20.0,
                40.0,
                60.0,
                80.0,
                100.0,
                200.0,
                400.0,
                600.0,
                1200.0,
                1800.0,
                2400.0,
            ),
            False,
            False,
        ),
    ),
}
