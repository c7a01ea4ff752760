"""What SGLang's own serving endpoints say, per version: the /metrics families the console reads, their
types and labels, and the /v1/loads and /server_info fields, each cited from the wheel that holds it.

Paths are under ``sglang/srt/``; "0511" and "0523" name the wheels. /metrics is mounted only with
--enable-metrics (entrypoints/http_server.py 0511:303-304, 0523:314-315): without it, a 404, and the
console reads /v1/loads, which both versions always serve. Both versions run /metrics in
prometheus_client's multiprocess mode (a PROMETHEUS_MULTIPROC_DIR made at launch, utils/common.py 0511:1401
/ 0523:2832, read by a MultiProcessCollector 0511:1417 / 0523:2848): a gauge declared with
``multiprocess_mode="mostrecent"`` is one series per label set, a gauge without one ("all", the default)
gains a ``pid`` label, counters and histograms are summed over processes.

Scheduler labels (0511 observability/scheduler_metrics_mixin.py:133-143, 0523
observability/metrics_collector.py:1382-1392): model_name, engine_type, tp_rank, pp_rank, moe_ep_rank,
``priority`` with priority scheduling (the total under ``priority=""``, 0523 metrics_collector.py:1417),
``dp_rank`` only when the scheduler has a DP rank (DP attention). Only attention-TP rank 0 logs them
unless ``--enable-metrics-for-all-schedulers`` (0511 scheduler_metrics_mixin.py:121-125, 0523
metrics_collector.py:1361-1367), so one DP group may show up once per TP rank.
Tokenizer labels (0511 managers/tokenizer_manager.py:461-466, 0523 metrics_collector.py:1806-1819):
model_name, engine_type (+ priority, custom labels): no tp_rank, no dp_rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gdnconsole.sglang.flags import parse_version

Kind = Literal["gauge", "counter", "histogram"]
Role = Literal["scheduler", "tokenizer"]

# What the console reads, by its own name.
Figure = Literal[
    "running",
    "queued",
    "max_pool_usage",
    "kv_usage",
    "swa_usage",
    "mamba_usage",
    "gen_throughput",
    "cache_hit_rate",
    "accept_length",
    "aborted",
    "retracted",
    "ttft",
    "itl",
    "e2e",
    "queue_time",
]


@dataclass(frozen=True)
class MetricFamily:
    """One /metrics family as SGLang declares it.

    ``name`` is the declared name (a counter's ends in ``_total``); ``extra_labels`` are those beyond the
    collector's own (``is_streaming``); ``per_pid`` is true for a gauge without a multiprocess mode, whose
    series carry a ``pid`` label; ``cite`` is the wheel's file:line of the declaration.
    """

    name: str
    kind: Kind
    role: Role
    extra_labels: tuple[str, ...]
    per_pid: bool
    cite: str


MC = "observability/metrics_collector.py"


def _g(name: str, cite: str, *, per_pid: bool = False) -> MetricFamily:
    return MetricFamily(f"sglang:{name}", "gauge", "scheduler", (), per_pid, f"{MC}:{cite}")


def _c(name: str, role: Role, cite: str) -> MetricFamily:
    return MetricFamily(f"sglang:{name}", "counter", role, (), False, f"{MC}:{cite}")


def _h(name: str, role: Role, cite: str, extra: tuple[str, ...] = ()) -> MetricFamily:
    return MetricFamily(f"sglang:{name}", "histogram", role, extra, False, f"{MC}:{cite}")


STREAMING = ("is_streaming",)

# sglang:token_usage is the maximum over the pools rounded to 2 places (0511
# managers/scheduler_runtime_checker_mixin.py:123, 0523
# managers/scheduler_components/pool_stats_observer.py:155); the KV pool's own is full_token_usage (0511
# :124, 0523 :156). swa_token_usage and mamba_usage are set only on hybrid models (0511 :126/:128, 0523
# :158/:163) but every log_stats writes all four gauges (0523 metrics_collector.py:1656-1659), so on a
# plain model they read 0: not a reading. num_retracted_reqs is the one gauge here without a multiprocess
# mode (a pid label); the console reads the counter num_retracted_requests_total instead.
FAMILIES: dict[str, dict[Figure, MetricFamily]] = {
    "0.5.11": {
        "running": _g("num_running_reqs", "200"),
        "queued": _g("num_queue_reqs", "206"),
        "gen_throughput": _g("gen_throughput", "218"),
        "cache_hit_rate": _g("cache_hit_rate", "224"),
        "max_pool_usage": _g("token_usage", "240"),
        "kv_usage": _g("full_token_usage", "246"),
        "swa_usage": _g("swa_token_usage", "252"),
        "mamba_usage": _g("mamba_usage", "258"),
        "accept_length": _g("spec_accept_length", "296"),
        "retracted": _c("num_retracted_requests_total", "scheduler", "318"),
        "queue_time": _h("queue_time_seconds", "scheduler", "537"),
        "aborted": _c("num_aborted_requests_total", "tokenizer", "1291"),
        "ttft": _h("time_to_first_token_seconds", "tokenizer", "1372"),
        "itl": _h("inter_token_latency_seconds", "tokenizer", "1379"),
        "e2e": _h("e2e_request_latency_seconds", "tokenizer", "1386"),
    },
    "0.5.23": {
        "running": _g("num_running_reqs", "364"),
        "queued": _g("num_queue_reqs", "370"),
        "gen_throughput": _g("gen_throughput", "382"),
        "cache_hit_rate": _g("cache_hit_rate", "388"),
        "max_pool_usage": _g("token_usage", "404"),
        "kv_usage": _g("full_token_usage", "410"),
        "swa_usage": _g("swa_token_usage", "416"),
        "mamba_usage": _g("mamba_usage", "422"),
        "accept_length": _g("spec_accept_length", "511"),
        "retracted": _c("num_retracted_requests_total", "scheduler", "557"),
        "queue_time": _h("queue_time_seconds", "scheduler", "837"),
        "aborted": _c("num_aborted_requests_total", "tokenizer", "1959"),
        "ttft": _h("time_to_first_token_seconds", "tokenizer", "2040", STREAMING),
        "itl": _h("inter_token_latency_seconds", "tokenizer", "2050"),
        "e2e": _h("e2e_request_latency_seconds", "tokenizer", "2067", STREAMING),
    },
}

# The gauge the console does not read, kept for the simulator's and the agreement tool's sake.
RETRACTED_GAUGE: dict[str, MetricFamily] = {
    "0.5.11": _g("num_retracted_reqs", "313", per_pid=True),
    "0.5.23": _g("num_retracted_reqs", "552", per_pid=True),
}

# The collectors' own labels (the module note cites them), the same in both versions; "dp_rank" joins the
# scheduler's with DP attention, "priority" both with priority scheduling, "pid" a per-pid gauge's.
SCHEDULER_LABELS = ("model_name", "engine_type", "tp_rank", "pp_rank", "moe_ep_rank")
TOKENIZER_LABELS = ("model_name", "engine_type")
# Labels that never split what the operator asks: a latency is summed over them.
UNSPLIT_LABELS = frozenset({"is_streaming", "pid", "priority", "engine_type", "model_name"})

# /v1/loads (entrypoints/v1_loads.py, the same route in both): {"timestamp", "version", "loads": [...]},
# plus "dp_rank_count" and "aggregate" in 0511 (v1_loads.py:173-179), "accelerator" and
# "num_accelerators" in 0523. Each load: 0511 managers/io_struct.py:2011-2054 (GetLoadsReqOutput), 0523
# managers/load_snapshot.py:196-225 (LoadSnapshot). gen_throughput, cache_hit_rate and utilization come
# from the scheduler's stats, which are written only when scheduler metrics are on (0511
# observability/scheduler_metrics_mixin.py:589-601, 0523 managers/scheduler_components/metrics_reporter.py:
# 806-868, 1072-1083): without --enable-metrics they read 0, which is not a reading. token_usage is the
# KV pools' usage, max(full, swa) on a hybrid-SWA model, never the mamba pool (0511
# managers/scheduler_runtime_checker_mixin.py:52-61). speculative.accept_length is counted whether or not
# metrics are on (0511 scheduler_metrics_mixin.py:841-850, 0523
# managers/scheduler_components/load_inquirer.py:162-172). dp_rank is 0 without DP attention (0523
# load_inquirer.py:230-232).
LOADS_FIELDS = (
    "dp_rank",
    "num_running_reqs",
    "num_waiting_reqs",
    "num_used_tokens",
    "max_total_num_tokens",
    "max_running_requests",
    "token_usage",
    "gen_throughput",
    "cache_hit_rate",
)
LOADS_ZERO_WITHOUT_METRICS = frozenset({"gen_throughput", "cache_hit_rate", "utilization"})

# /server_info: the server args (0511 entrypoints/http_server.py:631-645: dataclasses.asdict; 0523
# http_server.py:863-892: resolved_dict via utils/common.py:3584) plus the scheduler info
# (max_total_num_tokens, max_req_input_len: 0511 managers/scheduler.py:1483, 0523 scheduler.py:1945),
# "version", and "internal_states", one per DP rank: effective_max_running_requests_per_dp,
# last_gen_throughput (kept for the decode log line, metrics or not) and, with speculative decoding,
# avg_spec_accept_length (0511 managers/scheduler.py:3372-3386, 0523
# managers/scheduler_components/internal_state.py:73-125).
SERVER_INFO_FIELDS = ("version", "max_running_requests", "max_total_num_tokens", "speculative_algorithm")
INTERNAL_STATE_FIELDS = (
    "effective_max_running_requests_per_dp",
    "last_gen_throughput",
    "avg_spec_accept_length",
)

KNOWN = ("0.5.11", "0.5.23")


def facts_version(version: str | None) -> str:
    """The read wheel whose facts hold for ``version``: the newest read one not after it (0.5.23 when the
    version is unknown: the newer names)."""
    if version is None:
        return KNOWN[-1]
    parsed = parse_version(version)
    chosen = KNOWN[0]
    for known in KNOWN:
        if parse_version(known) <= parsed:
            chosen = known
    return chosen


def families(version: str | None) -> dict[Figure, MetricFamily]:
    """The families the console reads from a server of ``version``."""
    return FAMILIES[facts_version(version)]


def read_names(version: str | None) -> frozenset[str]:
    """The declared names of the families the console reads (exposition.parse's ``keep``)."""
    return frozenset(f.name for f in families(version).values())
