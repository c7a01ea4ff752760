"""One scheduler's internal state, as /server_info lists it once per DP rank, in each version's shape:
0.5.11's is the server args with four figures added (511 managers/scheduler.py:3369-3392); 0.5.23's is
the resolved args with its contributors' sections (523 managers/scheduler_components/internal_state.py:
45-145)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gdnsim.server import version
from gdnsim.server.metrics_feed import GRAPH_PHASES, Feed

# The graph phases a PD router counts as decode's (523 internal_state.py:30-31).
DECODE_GRAPH_PHASES = ("decode", "target_verify", "draft_decode", "draft_extend")


def internal_state(
    sglang: str,
    args: Mapping[str, Any],
    feed: Feed,
    gen_throughput: float,
    accept_length: float | None,
) -> dict[str, Any]:
    if version.parse(sglang) >= (0, 5, 23):
        return _state_523(args, feed, gen_throughput, accept_length)
    return _state_511(args, feed, gen_throughput, accept_length)


def _state_511(
    args: Mapping[str, Any], feed: Feed, gen_throughput: float, accept_length: float | None
) -> dict[str, Any]:
    ready = feed.ready
    state = dict(args)
    state["last_gen_throughput"] = gen_throughput
    state["memory_usage"] = {
        "weight": round(float(ready["weight_gib"]), 2),
        "kvcache": round(float(ready["kv_gib"]), 2),
        "token_capacity": int(ready["max_total_num_tokens"]),
        "graph": round(float(ready["graph_gib"]), 2),
    }
    state["effective_max_running_requests_per_dp"] = int(ready["max_running_requests"])
    if accept_length is not None:  # once the first verify has counted (511 scheduler.py:3383-3386)
        state["avg_spec_accept_length"] = accept_length
    return state


def _state_523(
    args: Mapping[str, Any], feed: Feed, gen_throughput: float, accept_length: float | None
) -> dict[str, Any]:
    ready = feed.ready
    tp, pp, dp = (max(1, int(args.get(k, 1) or 1)) for k in ("tp_size", "pp_size", "dp_size"))
    graph = {phase: round(feed.graph_share(phase, "graph_gib"), 3) for phase in GRAPH_PHASES}
    state = dict(args)
    state["world_size"] = dp * tp * pp  # 523 server_args.py compute_world_size
    state["startup_time"] = feed.startup_time()
    state["effective_max_running_requests_per_dp"] = int(ready["max_running_requests"])
    state["last_gen_throughput"] = gen_throughput
    state["memory_usage"] = {  # 523 scheduler_components/memory_usage.py:15-41
        "weight": round(float(ready["weight_gib"]), 3),
        "kvcache": round(float(ready["kv_gib"]), 3),
        "startup_available": round(float(ready["avail_gib"]), 3),
        "token_capacity": int(ready["max_total_num_tokens"]),
        "token_capacity_swa": None,  # no sliding-window model in the sim
        "graph": graph,
    }
    state["disaggregation_mode"] = "null"  # no PD disaggregation
    state["decode_cuda_graph_bs"] = list(ready.get("graph_bs", []))
    state["decode_cuda_graph_memory_gb"] = round(sum(graph[p] for p in DECODE_GRAPH_PHASES), 3)
    if accept_length is not None:
        state["avg_spec_accept_length"] = accept_length
    return state
