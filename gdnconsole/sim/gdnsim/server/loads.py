"""``GET /v1/loads`` as each version answers it (JSON form, every section: ``include`` defaults to all).

0.5.11 entrypoints/v1_loads.py:137-179 over scheduler_metrics_mixin.py:795-920 (GetLoadsReqOutput,
managers/io_struct.py:2010-2055): None fields dropped, ``num_total_reqs`` added, an ``aggregate``.
0.5.23 entrypoints/v1_loads.py:84-150 over managers/load_snapshot.py:142-258 (every core key, sections as
dicts), with ``accelerator`` and ``num_accelerators`` instead of ``aggregate``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gdnsim.server import version as versions

NEW_LOADS = (0, 5, 23)


def core(
    rank: int | None, running: int, used: int, capacity: int, throughput: float, mrr: int, waiting: int = 0
) -> dict[str, Any]:
    return {
        "dp_rank": rank,
        "num_running_reqs": running,
        "num_waiting_reqs": waiting,
        "num_used_tokens": used,
        "num_total_tokens": used,
        "max_total_num_tokens": capacity,
        "token_usage": round(used / max(1, capacity), 4),
        "gen_throughput": round(throughput, 2),
        "cache_hit_rate": 0.0,
        "utilization": round(used / max(1, capacity), 4),
        "max_running_requests": mrr,
    }


def one_rank(
    sglang: str, base: dict[str, Any], memory: dict[str, Any], spec: dict[str, float] | None
) -> dict[str, Any]:
    if versions.parse(sglang) >= NEW_LOADS:
        load: dict[str, Any] = {
            "timestamp": datetime.now(UTC).timestamp(),
            "dp_rank": base["dp_rank"] or 0,
            "num_running_reqs": base["num_running_reqs"],
            "num_waiting_reqs": base["num_waiting_reqs"],
            "num_waiting_uncached_tokens": 0,
            "num_used_tokens": base["num_used_tokens"],
            "num_total_tokens": base["num_total_tokens"],
            "num_active_tokens": base["num_total_tokens"],
            "num_prealloc_ready_tokens": 0,
            "max_total_num_tokens": base["max_total_num_tokens"],
            "max_running_requests": base["max_running_requests"],
            "token_usage": base["token_usage"],
            "gen_throughput": base["gen_throughput"],
            "cache_hit_rate": 0.0,
            "utilization": base["utilization"],
            "total_prefill_uncached_tokens": 0,
            "total_prefill_busy_us": 0,
            "decode_moments": None,
            "memory": memory,
        }
        if spec is not None:
            load["speculative"] = spec
        load["disaggregation"] = _disaggregation("prefill_bootstrap_queue_reqs")
        load["queues"] = {
            "waiting": base["num_waiting_reqs"],
            "grammar": 0,
            "paused": 0,
            "retracted": 0,
            "prealloc_ready": 0,
        }
        return load
    load = {k: v for k, v in base.items() if v is not None}
    load["memory"] = memory
    if spec is not None:
        load["speculative"] = spec
    load["disaggregation"] = _disaggregation("prefill_prealloc_queue_reqs")
    load["queues"] = {"waiting": base["num_waiting_reqs"], "grammar": 0, "paused": 0, "retracted": 0}
    load["num_total_reqs"] = load["num_running_reqs"] + load["num_waiting_reqs"]
    return load


def _disaggregation(prefill_queue: str) -> dict[str, Any]:
    """No PD disaggregation: every queue empty. The prefill side's first queue is its bootstrap queue
    in 0.5.23, its prealloc queue in 0.5.11 (their load_snapshot.py / io_struct.py)."""
    queues = [prefill_queue, "prefill_inflight_queue_reqs", "decode_prealloc_queue_reqs"]
    queues += ["decode_transfer_queue_reqs", "decode_retracted_queue_reqs"]
    return {
        "mode": "null",
        **dict.fromkeys(queues, 0),
        "kv_transfer_speed_gb_s": 0.0,
        "kv_transfer_latency_ms": 0.0,
    }


def answer(
    sglang: str, loads: list[dict[str, Any]], accelerators: int, accelerator: str | None
) -> dict[str, Any]:
    stamp = datetime.now(UTC).isoformat()
    if versions.parse(sglang) >= NEW_LOADS:
        return {
            "timestamp": stamp,
            "version": sglang,
            "accelerator": accelerator,
            "num_accelerators": accelerators,
            "loads": loads,
        }
    return {
        "timestamp": stamp,
        "version": sglang,
        "dp_rank_count": len(loads),
        "loads": loads,
        "aggregate": _aggregate(loads),
    }


def _aggregate(loads: list[dict[str, Any]]) -> dict[str, Any]:
    """0.5.11 v1_loads.py:62-87."""
    n = max(1, len(loads))
    return {
        "total_running_reqs": sum(d["num_running_reqs"] for d in loads),
        "total_waiting_reqs": sum(d["num_waiting_reqs"] for d in loads),
        "total_reqs": sum(d["num_running_reqs"] + d["num_waiting_reqs"] for d in loads),
        "total_used_tokens": sum(d["num_used_tokens"] for d in loads),
        "total_tokens": sum(d["num_total_tokens"] for d in loads),
        "avg_token_usage": round(sum(d["token_usage"] for d in loads) / n, 4),
        "avg_throughput": round(sum(d["gen_throughput"] for d in loads) / n, 2),
        "avg_utilization": round(sum(d["utilization"] for d in loads) / n, 4),
    }
