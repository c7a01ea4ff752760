"""SGLang's metric families the simulator serves, per version, read from the wheels'
``sglang/srt/observability/metrics_collector.py`` (line numbers beside each family; generated with an ast
reading of that file). ``BASE`` stands for the collector's labels: the scheduler's (0.5.11
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


FAMILIES: dict[str, tuple[Family, ...]] = {
    "0.5.11": (
        # 0.5.11 observability/metrics_collector.py:200
        Family("sglang:num_running_reqs", "gauge", "The number of running requests.", (), None, True),
        # 0.5.11 observability/metrics_collector.py:206
        Family(
            "sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", (), None, True
        ),
        # 0.5.11 observability/metrics_collector.py:218
        Family("sglang:gen_throughput", "gauge", "The generation throughput (token/s).", (), None, True),
        # 0.5.11 observability/metrics_collector.py:224
        Family("sglang:cache_hit_rate", "gauge", "The prefix cache hit rate.", (), None, True),
        # 0.5.11 observability/metrics_collector.py:240
        Family("sglang:token_usage", "gauge", "The token usage.", (), None, True),
        # 0.5.11 observability/metrics_collector.py:296
        Family(
            "sglang:spec_accept_length",
            "gauge",
            "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
            (),
            None,
            True,
        ),
        # 0.5.11 observability/metrics_collector.py:313
        Family("sglang:num_retracted_reqs", "gauge", "The number of retracted requests.", (), None, True),
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
        ),
        # 0.5.11 observability/metrics_collector.py:1207
        Family(
            "sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.", (), None, False
        ),
        # 0.5.11 observability/metrics_collector.py:1212
        Family(
            "sglang:generation_tokens_total",
            "counter",
            "Number of generation tokens processed.",
            (),
            None,
            False,
        ),
        # 0.5.11 observability/metrics_collector.py:1279
        Family("sglang:num_requests_total", "counter", "Number of requests processed.", (), None, False),
        # 0.5.11 observability/metrics_collector.py:1291
        Family(
            "sglang:num_aborted_requests_total", "counter", "Number of requests aborted.", (), None, False
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
        ),
    ),
    "0.5.23": (
        # 0.5.23 observability/metrics_collector.py:364
        Family("sglang:num_running_reqs", "gauge", "The number of running requests.", (), None, True),
        # 0.5.23 observability/metrics_collector.py:370
        Family(
            "sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", (), None, True
        ),
        # 0.5.23 observability/metrics_collector.py:382
        Family("sglang:gen_throughput", "gauge", "The generation throughput (token/s).", (), None, True),
        # 0.5.23 observability/metrics_collector.py:388
        Family("sglang:cache_hit_rate", "gauge", "The prefix cache hit rate.", (), None, True),
        # 0.5.23 observability/metrics_collector.py:404
        Family("sglang:token_usage", "gauge", "The token usage.", (), None, True),
        # 0.5.23 observability/metrics_collector.py:511
        Family(
            "sglang:spec_accept_length",
            "gauge",
            "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
            (),
            None,
            True,
        ),
        # 0.5.23 observability/metrics_collector.py:552
        Family("sglang:num_retracted_reqs", "gauge", "The number of retracted requests.", (), None, True),
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
        ),
        # 0.5.23 observability/metrics_collector.py:1855
        Family(
            "sglang:prompt_tokens_total",
            "counter",
            "Number of prefill tokens processed.",
            ("is_streaming",),
            None,
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
        ),
        # 0.5.23 observability/metrics_collector.py:1940
        Family(
            "sglang:num_requests_total",
            "counter",
            "Number of requests processed.",
            ("is_streaming",),
            None,
            False,
        ),
        # 0.5.23 observability/metrics_collector.py:1959
        Family(
            "sglang:num_aborted_requests_total", "counter", "Number of requests aborted.", (), None, False
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
        ),
    ),
}
