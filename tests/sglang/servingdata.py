"""Test data for the serving figures: the pages the agreement tool rendered from each wheel's own
collectors (tests/tools/sglang_metrics_agreement.py, its RANKS and latencies), and /v1/loads and
/server_info answers in each version's shape (metricfacts cites the fields)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"


def page(version: str) -> str:
    return (DATA / f"metrics-{version}.txt").read_text()


def _load_0511(dp: int, running: int, waiting: int) -> dict[str, Any]:
    # io_struct.py 0511:2011-2054 through v1_loads.py's dict factory (None and timestamp dropped), plus
    # num_total_reqs; metrics off: gen_throughput, cache_hit_rate, utilization read 0.
    return {
        "dp_rank": dp,
        "num_running_reqs": running,
        "num_waiting_reqs": waiting,
        "num_used_tokens": 5000,
        "num_total_tokens": 6000,
        "max_total_num_tokens": 20000,
        "token_usage": 0.25,
        "gen_throughput": 0.0,
        "cache_hit_rate": 0.0,
        "utilization": 0.0,
        "max_running_requests": 48,
        "memory": {"weight_gb": 25.1, "kv_cache_gb": 10.0, "graph_gb": 1.2, "token_capacity": 20000},
        "speculative": {"accept_length": 2.6, "accept_rate": 0.0},
        "queues": {"waiting": waiting, "grammar": 0, "paused": 0, "retracted": 0},
        "num_total_reqs": running + waiting,
    }


def loads_0511() -> dict[str, Any]:
    loads = [_load_0511(0, 5, 2), _load_0511(1, 3, 0)]
    return {"timestamp": "2026-12-02T13:00:00+00:00", "version": "0.5.11", "dp_rank_count": 2,
            "loads": loads, "aggregate": {"total_running_reqs": 8}}  # fmt: skip


def loads_0523() -> dict[str, Any]:
    # load_snapshot.py 0523:196-225 (LoadSnapshot.to_dict), one rank without DP attention.
    load = {
        "timestamp": 1796218006.0, "dp_rank": 0, "num_running_reqs": 4, "num_waiting_reqs": 1,
        "num_waiting_uncached_tokens": 100, "num_used_tokens": 900, "num_total_tokens": 1000,
        "num_active_tokens": 1000, "num_prealloc_ready_tokens": 0, "max_total_num_tokens": 40000,
        "max_running_requests": 64, "token_usage": 0.0225, "gen_throughput": 0.0, "cache_hit_rate": 0.0,
        "utilization": 0.0, "total_prefill_uncached_tokens": 0, "total_prefill_busy_us": 0,
        "decode_moments": None, "queues": {"waiting": 1, "grammar": 0, "paused": 0, "retracted": 0,
        "prealloc_ready": 0},
    }  # fmt: skip
    return {"timestamp": "2026-12-02T13:00:00+00:00", "version": "0.5.23", "accelerator": "NVIDIA RTX A6000",
            "num_accelerators": 2, "loads": [load]}  # fmt: skip


def server_info(version: str, ranks: int = 2) -> dict[str, Any]:
    states = [
        {"effective_max_running_requests_per_dp": 48, "last_gen_throughput": 123.5 + dp,
         "avg_spec_accept_length": 2.5}
        for dp in range(ranks)
    ]  # fmt: skip
    return {"model_path": "Qwen/Qwen3.6-27B", "max_running_requests": None, "max_total_num_tokens": 20000,
            "speculative_algorithm": "NEXTN", "internal_states": states, "version": version}  # fmt: skip
