"""Feeds SGLang's metric families from the simulated scheduler (the batcher).

Scheduler gauges are set per scheduler that logs: attention-TP rank 0 of each DP group and each pipeline
stage, or every rank with ``--enable-metrics-for-all-schedulers`` (0.5.11
observability/scheduler_metrics_mixin.py:121-124); their labels are model_name, engine_type, tp_rank,
pp_rank, moe_ep_rank and, with DP attention, dp_rank (0.5.11 scheduler_metrics_mixin.py:133-143, 0.5.23
observability/metrics_collector.py:1382-1392). Tokenizer families carry model_name and engine_type
(0.5.11 managers/tokenizer_manager.py:461-464) plus ``is_streaming`` ("true"/"false", 0.5.23
metrics_collector.py:2158) where that version's family has it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gdnsim.server.batching import Batcher, Running
from gdnsim.server.layout import Layout
from gdnsim.server.metrics import Registry

# One value for each label beyond the collector's, on the families the simulator has nothing to say about
# (their one child then shows at 0); the values are ones the wheel uses.
EXTRA_VALUES = {
    "cache_source": "device",  # 0.5.23 metrics_collector.py:2120-2130
    "mode": "decode_cuda_graph",  # cuda_graph_passes_total, 0.5.23 metrics_collector.py:1528
    "category": "decode",  # a ForwardMode, 0.5.23 metrics_collector.py forward_execution_seconds_total
    "forward_overlap": "none",  # 0.5.23 observability/scheduler_stage_metrics.py:54-61
    "source": "disk",  # 0.5.23 metrics_collector.py weight_load_duration_seconds' help
    "stage": "prefill_forward",
}
# every graph phase the wheel reports, captured or not (0.5.23 model_executor/graph_memory_usage.py:5-16)
GRAPH_PHASES = ("prefill", "decode", "target_verify", "draft_prefill", "draft_decode", "draft_extend")
# families whose first child only their event makes (0.5.23 metrics_collector.py:1959: an abort)
AFTER_EVENT = frozenset({"sglang:num_aborted_requests_total"})
# prefill_effective_tokens_total's modes (its help, 0.5.23 metrics_collector.py:1053)
MODE_VALUES = {"sglang:prefill_effective_tokens_total": "input", "sglang:realtime_tokens_total": "decode"}


@dataclass(frozen=True)
class Scheduler:
    """One scheduler that exports metrics, and the DP group whose requests it runs."""

    labels: dict[str, str]
    dp_group: int


def schedulers(args: Any, model_name: str) -> list[Scheduler]:
    """The schedulers that export metrics: attention-TP rank 0 of each DP rank, or every one with
    --enable-metrics-for-all-schedulers (511 scheduler_metrics_mixin.py:90-143); ``dp_rank`` is a label
    whenever the scheduler has one, replicas included (523 metrics_collector.py:1382-1392)."""
    layout = Layout.of(args)
    ep = max(1, int(getattr(args, "ep_size", 1) or 1))
    every = bool(getattr(args, "enable_metrics_for_all_schedulers", False))
    found = []
    for pp_rank in range(layout.pp):
        for slot in layout.slots():
            if slot.tp_rank % layout.attn_tp and not every:
                continue
            labels = {
                "model_name": model_name,
                "engine_type": "unified",  # no disaggregation (0.5.11 disaggregation/utils.py:39-44)
                "tp_rank": str(slot.tp_rank),
                "pp_rank": str(pp_rank),
                "moe_ep_rank": str(slot.tp_rank // max(1, layout.tp // ep)),
            }
            if slot.dp_rank is not None:
                labels["dp_rank"] = str(slot.dp_rank)
            found.append(Scheduler(labels, slot.dp_rank or 0))
    return found


@dataclass
class Feed:
    """The batcher's observer: turns batches and finished requests into samples."""

    registry: Registry
    scheds: list[Scheduler]
    model_name: str
    token_capacity: int
    groups: int = 1
    ready: Mapping[str, Any] = field(default_factory=dict)  # rank 0's ready report (rank_startup.Ready)
    _group_of: dict[str, int] = field(default_factory=dict)
    _next: int = 0

    def group(self, rid: str) -> int:
        """Requests go round the DP groups in turn (the default round-robin load balancer)."""
        if rid not in self._group_of:
            self._group_of[rid] = self._next % self.groups
            self._next += 1
        return self._group_of[rid]

    def on_log(self, batcher: Batcher) -> None:
        reg = self.registry
        for sched in self.scheds:
            for name, value in self._sched_gauges(batcher, sched).items():
                if reg.has(name):
                    reg.set(name, self._extra(name, sched.labels), value)
            if reg.has("sglang:graph_memory_usage_gb"):
                for phase in GRAPH_PHASES:
                    value = self.graph_share(phase, "graph_gib")
                    reg.set("sglang:graph_memory_usage_gb", {**sched.labels, "phase": phase}, value)
            reg.inc(
                "sglang:cuda_graph_passes_total", self._extra("sglang:cuda_graph_passes_total", sched.labels)
            )
            self._touch(sched.labels, scheduler=True)
        base = {"model_name": self.model_name, "engine_type": "unified"}
        for name, value in self._startup_gauges().items():
            family, _, phase = name.partition("#")
            if reg.has(family):
                reg.set(family, {**base, "phase": phase}, value)

    def _sched_gauges(self, batcher: Batcher, sched: Scheduler) -> dict[str, float]:
        """What the batcher knows, per scheduler (0.5.23 metrics_collector.py:1700-1760 log_stats)."""
        mine = [r for r in batcher.running.values() if self.group(r.rid) == sched.dp_group]
        used = sum(r.prompt_tokens + r.generated for r in mine)
        cap = max(1, self.token_capacity)
        slots = int(self.ready.get("mamba_slots", 0) or 0)
        page = max(1, int(self.ready.get("page_size", 1) or 1))
        waiting = sum(1 for r in batcher.waiting if self.group(r.rid) == sched.dp_group)
        return {
            "sglang:num_running_reqs": len(mine),
            "sglang:num_queue_reqs": waiting,
            "sglang:gen_throughput": batcher.last_gen_throughput,
            "sglang:cache_hit_rate": 0.0,
            "sglang:token_usage": used / cap,
            "sglang:full_token_usage": used / cap,
            "sglang:num_used_tokens": used,
            "sglang:kv_used_tokens": used,
            "sglang:kv_available_tokens": cap - used,
            "sglang:max_total_num_tokens": cap,
            "sglang:decode_sum_seq_lens": used,
            "sglang:utilization": used / cap,
            "sglang:mamba_usage": len(mine) / slots if slots else 0.0,
            "sglang:mamba_used_tokens": len(mine) if slots else 0,
            "sglang:mamba_available_tokens": slots - len(mine) if slots else 0,
            "sglang:context_len": float(self.ready.get("context_len", 0) or 0),
            "sglang:page_size": page,
            "sglang:num_pages": cap // page,
            "sglang:is_cuda_graph": 1.0,
            "sglang:new_token_ratio": 0.7,  # SGLang's --init-new-token-ratio default
            "sglang:max_running_requests_under_SLO": float(self.ready.get("max_running_requests", 0) or 0),
            "sglang:spec_accept_length": batcher.avg_accept_length or 0.0,
            "sglang:num_retracted_reqs": 0,
            "sglang:engine_load_weights_time": float(self.ready.get("load_s", 0.0) or 0.0),
            "sglang:engine_startup_time": self.startup_time()["scheduler_e2e"],
            "sglang:startup_available_gpu_memory_gb": float(self.ready.get("avail_gib", 0.0) or 0.0),
            "sglang:weight_memory_usage_gb": float(self.ready.get("weight_gib", 0.0) or 0.0),
            "sglang:kv_cache_memory_usage_gb": float(self.ready.get("kv_gib", 0.0) or 0.0),
            "sglang:weight_load_duration_seconds": float(self.ready.get("load_s", 0.0) or 0.0),
        }

    def startup_time(self) -> dict[str, Any]:
        """A scheduler's startup phases in seconds, as it reports them (523
        observability/startup_time.py:11-28): weights, the KV pool, its whole start, graph capture."""
        load, pool = (float(self.ready.get(k, 0.0) or 0.0) for k in ("load_s", "pool_s"))
        graph = float(self.ready.get("graph_s", 0.0) or 0.0)
        return {
            "load_weight": load,
            "kv_cache_allocation": pool,
            "scheduler_e2e": load + pool + graph,
            "cuda_graph": {phase: self.graph_share(phase, "graph_s") for phase in GRAPH_PHASES},
        }

    def engine_startup_time(self) -> dict[str, Any]:
        """The tokenizer's: the slowest scheduler's phases plus its own start (523
        observability/startup_time.py:31-71). The sim's ranks start in step, so rank 0's are the slowest."""
        engine = self.startup_time()
        return {**engine, "tokenizer_e2e": engine["scheduler_e2e"]}

    def _startup_gauges(self) -> dict[str, float]:
        """The tokenizer's startup phases (0.5.23 metrics_collector.py:2074-2090); ``name#phase``."""
        engine = self.engine_startup_time()
        graphs = engine.pop("cuda_graph")
        return {
            **{f"sglang:startup_time_seconds#{phase}": value for phase, value in engine.items()},
            **{f"sglang:startup_cuda_graph_time_seconds#{phase}": value for phase, value in graphs.items()},
        }

    def graph_share(self, phase: str, key: str) -> float:
        """The sim captures decode graphs only: the whole figure goes to that phase."""
        return float(self.ready.get(key, 0.0) or 0.0) if phase == "decode" else 0.0

    def _extra(self, name: str, labels: Mapping[str, str]) -> dict[str, str]:
        """The collector's labels plus a value for each of the family's own."""
        extra = {}
        for key in self.registry.family(name).extra_labels:
            if key == "is_streaming":
                continue
            extra[key] = MODE_VALUES.get(name, EXTRA_VALUES[key]) if key == "mode" else EXTRA_VALUES[key]
        return {**labels, **extra}

    def _touch(self, labels: Mapping[str, str], scheduler: bool) -> None:
        """Every other gauge and counter of that side gets its child (at 0), as the wheel's log_stats and
        observe_one_finished_request set them whatever the values."""
        reg = self.registry
        for fam in reg.families():
            if fam.scheduler != scheduler or fam.kind == "histogram":
                continue
            if "is_streaming" in fam.extra_labels or fam.name in AFTER_EVENT:
                continue  # fed by each request as it is, or made only by its event
            if any(key not in EXTRA_VALUES for key in fam.extra_labels):
                continue  # set with its own label values (the phases)
            full = self._extra(fam.name, labels)
            if fam.kind == "gauge" and not reg.has_child(fam.name, full):
                reg.set(fam.name, full, 0.0)
            elif fam.kind == "counter":
                reg.inc(fam.name, full, 0.0)

    def on_admit(self, request: Running) -> None:
        """Queue time, observed by the scheduler that takes the request (0.5.11
        metrics_collector.py:940)."""
        owner = self._sched_for(request.rid)
        if owner is not None and request.admitted is not None:
            queued = request.admitted - request.submitted
            self.registry.observe("sglang:queue_time_seconds", owner.labels, queued)

    def _sched_for(self, rid: str) -> Scheduler | None:
        group = self.group(rid)
        return next((s for s in self.scheds if s.dp_group == group), None)

    def _labels(self, name: str, stream: bool) -> dict[str, str]:
        labels = {"model_name": self.model_name, "engine_type": "unified"}
        if "is_streaming" in self.registry.family(name).extra_labels:
            labels["is_streaming"] = "true" if stream else "false"
        return labels

    def on_finish(self, request: Running) -> None:
        reg = self.registry
        self._group_of.pop(request.rid, None)
        if request.aborted:
            reg.inc(
                "sglang:num_aborted_requests_total", self._labels("sglang:num_aborted_requests_total", False)
            )
            return
        stream = request.stream
        for name, value in (
            ("sglang:prompt_tokens_total", request.prompt_tokens),
            ("sglang:generation_tokens_total", request.generated),
            ("sglang:num_requests_total", 1),
        ):
            reg.inc(name, self._labels(name, stream), value)
        if request.first_at is not None:
            name = "sglang:time_to_first_token_seconds"
            reg.observe(name, self._labels(name, stream), request.first_at - request.submitted)
        for gap in request.gaps:
            name = "sglang:inter_token_latency_seconds"
            reg.observe(name, self._labels(name, stream), gap)
        if request.last_at is not None:
            name = "sglang:e2e_request_latency_seconds"
            reg.observe(name, self._labels(name, stream), request.last_at - request.submitted)
        self._finish_more(request)

    def _finish_more(self, request: Running) -> None:
        """The families past 0.5.11's core a finished request moves."""
        reg = self.registry
        name = "sglang:request_time_per_output_token_seconds"
        # (last_token_time - first_token_time) / (completion_tokens - 1), 0.5.23 metrics_collector.py:2060
        if (
            reg.has(name)
            and request.first_at is not None
            and request.last_at is not None
            and request.generated > 1
        ):
            per_token = (request.last_at - request.first_at) / (request.generated - 1)
            reg.observe(name, self._labels(name, request.stream), per_token)
        if reg.has("sglang:spec_verify_calls_total"):
            reg.inc(
                "sglang:spec_verify_calls_total",
                self._labels("sglang:spec_verify_calls_total", False),
                request.verify_ct,
            )
        owner = self._sched_for(request.rid)
        if owner is not None:
            name = "sglang:realtime_tokens_total"
            for mode, count in (("prefill_compute", request.prompt_tokens), ("decode", request.generated)):
                reg.inc(name, {**owner.labels, "mode": mode}, count)
            name = "sglang:per_stage_req_latency_seconds"
            if request.first_at is not None and request.admitted is not None:
                reg.observe(name, self._extra(name, owner.labels), request.first_at - request.admitted)
        self._touch({"model_name": self.model_name, "engine_type": "unified"}, scheduler=False)

    def on_loads(self, seconds: float) -> None:
        """``/v1/loads`` answered (0.5.23 metrics_collector.py get_loads_duration_seconds)."""
        name = "sglang:get_loads_duration_seconds"
        if self.registry.has(name):
            self.registry.observe(name, {"model_name": self.model_name, "engine_type": "unified"}, seconds)
