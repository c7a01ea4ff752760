"""The serving figures of one server: what the panel, `serving`, `status --json` and the journal show.

Built from one parsed /metrics page (latencies "since start") or, with metrics off, from /v1/loads; both
take /server_info for the caps SGLang computed. A value SGLang did not collect is None, never 0: a
histogram before its first observation, a pool the model does not have, /v1/loads' gen_throughput and
cache_hit_rate without --enable-metrics (metricfacts says where each comes from).

Series are read as SGLang writes them (metricfacts' module note): a DP rank's figures are its
``dp_rank`` label's (0 without one: a tokenizer counter, a server without DP attention), from its lowest
``tp_rank`` when every scheduler logs (one attention group counts the same requests once per TP rank);
labels that do not split what the operator asks (metricfacts.UNSPLIT_LABELS) are summed over.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from gdnconsole.sglang.decodepoints import DecodePoint
from gdnconsole.sglang.exposition import Exposition, Labels, Sample, finite
from gdnconsole.sglang.histwindow import Buckets, HistogramHistory, quantile
from gdnconsole.sglang.loads import InternalState, Loads, ServerInfo
from gdnconsole.sglang.metricfacts import Figure, MetricFamily, families

Source = Literal["metrics", "loads", "log"]
Pool = Literal["swa", "mamba"]
LATENCIES: tuple[Figure, ...] = ("ttft", "e2e", "itl", "queue_time")
SINCE_START = "since start"


@dataclass(frozen=True)
class Latency:
    """Quantiles (seconds) of the observations in ``window`` ("since start", "60s", "300s")."""

    p50: float | None
    p90: float | None
    p99: float | None
    count: int
    window: str


@dataclass(frozen=True)
class RankFigures:
    """One DP rank. ``token_usage`` is the KV pool's own (not SGLang's max over pools); ``aborted`` and
    ``retracted`` count requests since the server started."""

    dp_rank: int
    running: int | None
    queued: int | None
    max_running: int | None
    token_usage: float | None
    gen_throughput: float | None
    accept_length: float | None
    mamba_usage: float | None
    swa_usage: float | None
    cache_hit_rate: float | None
    aborted: int | None
    retracted: int | None


@dataclass(frozen=True)
class ServingFigures:
    source: Source
    version: str | None
    ranks: tuple[RankFigures, ...]
    ttft_s: Latency | None
    e2e_s: Latency | None
    itl_s: Latency | None
    queue_s: Latency | None

    @property
    def gen_throughput(self) -> float | None:
        """Decode tokens/s of the whole server: the ranks' summed, None when no rank says."""
        said = [r.gen_throughput for r in self.ranks if r.gen_throughput is not None]
        return sum(said) if said else None

    def to_json(self) -> dict[str, object]:
        """The one line of `serving --json` (issue 28), as a JSON-ready dict."""
        return {
            "source": self.source,
            "version": self.version,
            "ranks": [_rank_json(r) for r in self.ranks],
            "ttft_s": _latency_json(self.ttft_s),
            "e2e_s": _latency_json(self.e2e_s),
            "itl_s": _latency_json(self.itl_s),
            "queue_s": _latency_json(self.queue_s),
        }

    def json_line(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"), allow_nan=False)


def _rank_json(r: RankFigures) -> dict[str, object]:
    out: dict[str, object] = {
        "dp_rank": r.dp_rank,
        "running": r.running,
        "queued": r.queued,
        "max_running": r.max_running,
        "token_usage": r.token_usage,
        "gen_throughput": r.gen_throughput,
        "accept_length": r.accept_length,
    }
    if r.mamba_usage is not None:  # hybrid models only
        out["mamba_usage"] = r.mamba_usage
    if r.swa_usage is not None:  # sliding-window models only
        out["swa_usage"] = r.swa_usage
    return out


def _latency_json(latency: Latency | None) -> dict[str, object] | None:
    if latency is None:
        return None
    return {
        "p50": latency.p50,
        "p90": latency.p90,
        "p99": latency.p99,
        "count": latency.count,
        "window": latency.window,
    }


# ---- reading series -------------------------------------------------------------------------------


def _int_label(sample: Sample, key: str) -> int:
    """A rank label as a number; absent is 0, anything but digits is not SGLang's (-1: left out)."""
    value = sample.label(key)
    if value is None:
        return 0
    return int(value) if value.isdigit() and len(value) < 10 else -1


def _is_total(sample: Sample) -> bool:
    # With priority scheduling the total is under priority="" beside per-priority series.
    return sample.label("priority") in (None, "")


def _by_rank(samples: Iterable[Sample]) -> dict[int, list[Sample]]:
    """Samples grouped by DP rank, only the lowest TP rank's of each."""
    grouped: dict[int, dict[int, list[Sample]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        dp, tp = _int_label(s, "dp_rank"), _int_label(s, "tp_rank")
        if dp >= 0 and tp >= 0:
            grouped[dp][tp].append(s)
    return {dp: tps[min(tps)] for dp, tps in grouped.items()}


def _sample_name(family: MetricFamily) -> str:
    return family.name  # a gauge's and a counter's sample carry the declared name (…_total)


def gauges(expo: Exposition, family: MetricFamily) -> dict[int, float]:
    """A scheduler gauge per DP rank: the total, the most recent of per-pid series (max)."""
    totals = (s for s in expo.named(_sample_name(family)) if _is_total(s))
    out: dict[int, float] = {}
    for dp, samples in _by_rank(totals).items():
        values = [v for s in samples if (v := finite(s.value)) is not None]
        if values:
            out[dp] = max(values)
    return out


def counters(expo: Exposition, family: MetricFamily) -> dict[int, int]:
    """A counter per DP rank, summed over the labels that do not split it."""
    out: dict[int, int] = {}
    for dp, samples in _by_rank(expo.named(_sample_name(family))).items():
        values = [v for s in samples if (v := finite(s.value)) is not None and v >= 0]
        if values:
            out[dp] = int(sum(values))
    return out


def _buckets(samples: list[Sample]) -> Buckets | None:
    pairs: list[tuple[float, float]] = []
    for s in samples:
        le = s.label("le")
        try:
            bound = float(le) if le is not None else math.nan
        except ValueError:
            return None
        if math.isnan(bound) or not math.isfinite(s.value) or s.value < 0:
            return None
        pairs.append((bound, s.value))
    pairs.sort()
    if not pairs or pairs[-1][0] != math.inf:
        return None
    return tuple(pairs)


def histogram_series(expo: Exposition, family: MetricFamily) -> tuple[tuple[Labels, Buckets], ...]:
    """Each series of a histogram (its labels but ``le``, its buckets), a scheduler's from the lowest TP
    rank of each DP rank only; a malformed series is left out."""
    bucket_samples = list(expo.named(f"{family.name}_bucket"))
    if family.role == "scheduler":
        bucket_samples = [s for group in _by_rank(bucket_samples).values() for s in group]
    series: dict[Labels, list[Sample]] = defaultdict(list)
    for s in bucket_samples:
        series[tuple(kv for kv in s.labels if kv[0] != "le")].append(s)
    out = []
    for key, samples in series.items():
        buckets = _buckets(samples)
        if buckets is not None:
            out.append((key, buckets))
    return tuple(out)


def sum_buckets(many: Iterable[Buckets]) -> Buckets | None:
    """Series of one histogram summed: each bound's cumulative count added up (a series without that
    bound counts what it holds at its next lower one)."""
    many = list(many)
    bounds = sorted({le for buckets in many for le, _ in buckets})
    if not bounds:
        return None
    return tuple((le, sum(_at(buckets, le) for buckets in many)) for le in bounds)


def _at(buckets: Buckets, le: float) -> float:
    count = 0.0
    for bound, cumulative in buckets:
        if bound > le:
            break
        count = cumulative
    return count


def latency(buckets: Buckets | None, window: str) -> Latency | None:
    """p50/p90/p99 of summed buckets; None before any observation."""
    if buckets is None or buckets[-1][1] <= 0:
        return None
    return Latency(
        p50=_q(0.5, buckets),
        p90=_q(0.9, buckets),
        p99=_q(0.99, buckets),
        count=int(buckets[-1][1]),
        window=window,
    )


def _q(q: float, buckets: Buckets) -> float | None:
    # Prometheus' NaN for buckets it cannot read (no +Inf, one bucket) is no figure, not a number to show.
    value = quantile(q, buckets)
    return value if value is not None and math.isfinite(value) else None


def windowed(history: HistogramHistory, now: float, seconds: float) -> Latency | None:
    """A latency over the last ``seconds`` of a history fed with ``histogram_series``."""
    return latency(history.window(now, seconds), f"{seconds:g}s")


# ---- the figures ----------------------------------------------------------------------------------


def _state(info: ServerInfo | None, dp: int) -> InternalState | None:
    if info is None or dp >= len(info.internal_states):
        return None
    return info.internal_states[dp]


def _cap(info: ServerInfo | None, dp: int) -> int | None:
    state = _state(info, dp)
    if state is not None and state.max_running is not None:
        return state.max_running
    return info.max_running_requests if info is not None else None


def _accept(value: float | None) -> float | None:
    # An accept length is at least 1 once measured; SGLang's gauge reads 0 without speculative decoding
    # and before the first verify (metrics_collector.py log_stats writes it every time).
    return value if value is not None and value > 0 else None


_GAUGES: tuple[Figure, ...] = (
    "running",
    "queued",
    "kv_usage",
    "swa_usage",
    "mamba_usage",
    "gen_throughput",
    "cache_hit_rate",
    "accept_length",
)


def _int(value: float | None) -> int | None:
    return None if value is None else int(value)


def from_metrics(
    expo: Exposition,
    info: ServerInfo | None = None,
    *,
    version: str | None = None,
    pools: frozenset[Pool] = frozenset(),
) -> ServingFigures:
    """The figures of one /metrics page: latencies since the server started. ``pools`` are the hybrid
    pools the model has (its config says): SGLang writes the others as 0."""
    version = version or (info.version if info else None)
    fam = families(version)
    values = {f: gauges(expo, fam[f]) for f in _GAUGES}
    aborted, retracted = counters(expo, fam["aborted"]), counters(expo, fam["retracted"])
    # A counter has no series before its first count: 0 once its collector is known to write (the
    # scheduler's gauges for its rank; the tokenizer's TTFT, after a first request), else not collected.
    # The tokenizer's aborted count has no dp_rank: it is rank 0's.
    tokenizer_wrote = expo.has(f"{fam['ttft'].name}_bucket")
    seen = set().union(*values.values(), aborted, retracted)
    seen.update(range(len(info.internal_states) if info else 0))
    ranks = []
    for dp in sorted(seen or {0}):
        state = _state(info, dp)
        ranks.append(
            RankFigures(
                dp_rank=dp,
                running=_int(values["running"].get(dp)),
                queued=_int(values["queued"].get(dp)),
                max_running=_cap(info, dp),
                token_usage=values["kv_usage"].get(dp),
                gen_throughput=values["gen_throughput"].get(dp),
                accept_length=_accept(values["accept_length"].get(dp))
                or _accept(state.accept_length if state else None),
                mamba_usage=values["mamba_usage"].get(dp) if "mamba" in pools else None,
                swa_usage=values["swa_usage"].get(dp) if "swa" in pools else None,
                cache_hit_rate=values["cache_hit_rate"].get(dp),
                aborted=aborted.get(dp, 0 if tokenizer_wrote else None) if dp == 0 else None,
                retracted=retracted.get(dp, 0 if dp in values["running"] else None),
            )
        )
    lat = {
        f: latency(sum_buckets(b for _, b in histogram_series(expo, fam[f])), SINCE_START) for f in LATENCIES
    }
    return ServingFigures(
        "metrics", version, tuple(ranks), lat["ttft"], lat["e2e"], lat["itl"], lat["queue_time"]
    )


def from_loads(loads: Loads, info: ServerInfo | None = None) -> ServingFigures:
    """The figures of /v1/loads when /metrics is off (404): no latencies; gen_throughput from
    /server_info's last_gen_throughput, since /v1/loads' reads 0 without metrics, as its
    cache_hit_rate does (None here)."""
    ranks = []
    for r in loads.ranks:
        state = _state(info, r.dp_rank)
        ranks.append(
            RankFigures(
                dp_rank=r.dp_rank,
                running=r.running,
                queued=r.waiting,
                max_running=r.max_running if r.max_running is not None else _cap(info, r.dp_rank),
                token_usage=r.token_usage,
                gen_throughput=state.last_gen_throughput if state else None,
                accept_length=_accept(r.accept_length) or _accept(state.accept_length if state else None),
                mamba_usage=None,
                swa_usage=None,
                cache_hit_rate=None,
                aborted=None,
                retracted=None,
            )
        )
    version = loads.version or (info.version if info else None)
    return ServingFigures("loads", version, tuple(ranks), None, None, None, None)


def with_latencies(
    figures: ServingFigures,
    ttft: Latency | None,
    e2e: Latency | None,
    itl: Latency | None,
    queue: Latency | None,
) -> ServingFigures:
    """The same figures with windowed latencies in place of "since start"."""
    return replace(figures, ttft_s=ttft, e2e_s=e2e, itl_s=itl, queue_s=queue)


def from_decode(point: DecodePoint, version: str | None = None) -> ServingFigures:
    """The last resort: one ``Decode batch`` line of the log (TP0's), when no endpoint answers. It says
    running and queued requests, the pools' usage, decode tokens/s and accept length; the rest is not in
    it (None). Without DP attention the line is the server's; with it, only the first group's."""
    rank = RankFigures(
        dp_rank=0,
        running=point.running,
        queued=point.queued,
        max_running=None,
        token_usage=point.token_usage,
        gen_throughput=point.gen_throughput,
        accept_length=_accept(point.accept_len),
        mamba_usage=point.mamba_usage,
        swa_usage=point.swa_usage,
        cache_hit_rate=None,
        aborted=None,
        retracted=None,
    )
    return ServingFigures("log", version, (rank,), None, None, None, None)
