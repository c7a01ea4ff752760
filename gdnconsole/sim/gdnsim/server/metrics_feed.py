"""Feeds SGLang's metric families from the simulated scheduler (the batcher).

Scheduler gauges are set per scheduler that logs: attention-TP rank 0 of each DP group and each pipeline
stage, or every rank with ``--enable-metrics-for-all-schedulers`` (0.5.11
observability/scheduler_metrics_mixin.py:121-124); their labels are model_name, engine_type, tp_rank,
pp_rank, moe_ep_rank and, with DP attention, dp_rank (0.5.11 scheduler_metrics_mixin.py:133-143, 0.5.23
observability/metrics_collector.py:1382-1392). Tokenizer families carry model_name and engine_type
(0.5.11 managers/tokenizer_manager.py:461-464) plus ``is_streaming`` ("true"/"false", 0.5.23
metrics_collector.py:2158) where that version's family has it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gdnsim.server.batching import Batcher, Running
from gdnsim.server.metrics import Registry


@dataclass(frozen=True)
class Scheduler:
    """One scheduler that exports metrics, and the DP group whose requests it runs."""

    labels: dict[str, str]
    dp_group: int


def schedulers(args: Any, model_name: str) -> list[Scheduler]:
    tp = max(1, int(getattr(args, "tp_size", 1) or 1))
    pp = max(1, int(getattr(args, "pp_size", 1) or 1))
    dp = max(1, int(getattr(args, "dp_size", 1) or 1))
    ep = max(1, int(getattr(args, "ep_size", 1) or 1))
    dp_attention = bool(getattr(args, "enable_dp_attention", False)) and dp > 1
    attn_tp = tp // dp if dp_attention and tp % dp == 0 else tp
    every = bool(getattr(args, "enable_metrics_for_all_schedulers", False))
    found = []
    for pp_rank in range(pp):
        for tp_rank in range(tp):
            if tp_rank % attn_tp and not every:
                continue
            labels = {
                "model_name": model_name,
                "engine_type": "unified",  # no disaggregation (0.5.11 disaggregation/utils.py:39-44)
                "tp_rank": str(tp_rank),
                "pp_rank": str(pp_rank),
                "moe_ep_rank": str(tp_rank // max(1, tp // ep)),
            }
            group = tp_rank // attn_tp if dp_attention else 0
            if dp_attention:
                labels["dp_rank"] = str(group)
            found.append(Scheduler(labels, group))
    return found


@dataclass
class Feed:
    """The batcher's observer: turns batches and finished requests into samples."""

    registry: Registry
    scheds: list[Scheduler]
    model_name: str
    token_capacity: int
    groups: int = 1
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
            mine = [r for r in batcher.running.values() if self.group(r.rid) == sched.dp_group]
            used = sum(r.prompt_tokens + r.generated for r in mine)
            labels = sched.labels
            reg.set("sglang:num_running_reqs", labels, len(mine))
            waiting = sum(1 for r in batcher.waiting if self.group(r.rid) == sched.dp_group)
            reg.set("sglang:num_queue_reqs", labels, waiting)
            reg.set("sglang:gen_throughput", labels, batcher.last_gen_throughput)
            reg.set("sglang:cache_hit_rate", labels, 0.0)
            reg.set("sglang:token_usage", labels, used / max(1, self.token_capacity))
            reg.set("sglang:spec_accept_length", labels, batcher.avg_accept_length or 0.0)
            reg.set("sglang:num_retracted_reqs", labels, 0)

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
