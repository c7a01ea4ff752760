"""The serving figures said in words and cells, one way for the `serving` command and the dashboard's
panel: a value SGLang did not collect is "—", never 0; the pool that binds is named."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gdnconsole.timefmt import span

if TYPE_CHECKING:  # the figures' modules load with the first poll, not with the dashboard's first frame
    from gdnconsole.host.journal import Served
    from gdnconsole.sglang.servingfigures import Latency, RankFigures, ServingFigures

NOT_COLLECTED = "—"
SOURCE_WORDS = {"metrics": "/metrics", "loads": "/v1/loads (metrics off)", "log": "the log's Decode lines"}
RANK_HEADERS = (
    "DP",
    "running",
    "queued",
    "KV",
    "mamba",
    "binds",
    "tok/s",
    "cache hit",
    "accept",
    "aborted",
    "retracted",
)


def percent(value: float | None) -> str:
    return NOT_COLLECTED if value is None else f"{value * 100:.0f}%"


def number(value: float | int | None, digits: int = 0) -> str:
    if value is None:
        return NOT_COLLECTED
    return f"{value:.{digits}f}" if digits else f"{value:.0f}"


def running_of(rank: RankFigures) -> str:
    """``3/48``: running against the cap SGLang computed (``3`` when the cap is not known)."""
    if rank.running is None:
        return NOT_COLLECTED
    return f"{rank.running}/{rank.max_running}" if rank.max_running is not None else str(rank.running)


def binding_pool(rank: RankFigures) -> str | None:
    """The pool nearest its end: the one that caps new requests first (KV, SWA or mamba)."""
    pools = {"KV": rank.token_usage, "SWA": rank.swa_usage, "mamba": rank.mamba_usage}
    known = {name: use for name, use in pools.items() if use is not None}
    return max(known, key=lambda name: known[name]) if known else None


def rank_cells(rank: RankFigures) -> tuple[str, ...]:
    return (
        str(rank.dp_rank),
        running_of(rank),
        number(rank.queued),
        percent(rank.token_usage),
        percent(rank.mamba_usage),
        binding_pool(rank) or NOT_COLLECTED,
        number(rank.gen_throughput, 1),
        percent(rank.cache_hit_rate),
        number(rank.accept_length, 2),
        number(rank.aborted),
        number(rank.retracted),
    )


@dataclass(frozen=True)
class LatencyLine:
    name: str
    text: str


LATENCY_NAMES = (("ttft_s", "TTFT"), ("itl_s", "ITL"), ("e2e_s", "end-to-end"), ("queue_s", "queue"))


def latency_text(latency: Latency | None) -> str:
    """``p50 210 ms · p90 580 ms · p99 1.20 s (412 since start)``; "no request yet" before any."""
    if latency is None or latency.count == 0:
        return "no request observed" + (f" in {latency.window}" if latency is not None else " yet")
    parts = [
        f"{name} {span(value) if value is not None else NOT_COLLECTED}" for name, value in _quantiles(latency)
    ]
    return " · ".join(parts) + f" ({_observed(latency)})"


def _observed(latency: Latency) -> str:
    """``412 requests since start`` / ``9 requests in the last 60s``."""
    from gdnconsole.sglang.servingfigures import SINCE_START

    many = f"{latency.count} request{'s' if latency.count != 1 else ''}"
    return (
        f"{many} {latency.window}"
        if latency.window == SINCE_START
        else f"{many} in the last {latency.window}"
    )


def _quantiles(latency: Latency) -> tuple[tuple[str, float | None], ...]:
    return (("p50", latency.p50), ("p90", latency.p90), ("p99", latency.p99))


def latency_lines(figures: ServingFigures) -> tuple[LatencyLine, ...]:
    if figures.source != "metrics":
        return (
            LatencyLine("latency", f"not served by {SOURCE_WORDS[figures.source]}: needs --enable-metrics"),
        )
    return tuple(LatencyLine(label, latency_text(getattr(figures, attr))) for attr, label in LATENCY_NAMES)


def headline(figures: ServingFigures, age_s: float | None = None) -> str:
    """``SGLang 0.5.23 · from /metrics · 2 DP ranks · 3 s old``."""
    parts = [f"SGLang {figures.version}" if figures.version else "SGLang version not said"]
    parts.append(f"from {SOURCE_WORDS[figures.source]}")
    if len(figures.ranks) > 1:
        parts.append(f"{len(figures.ranks)} DP ranks")
    if age_s is not None:
        parts.append(f"{span(age_s)} old")
    return " · ".join(parts)


def served_words(served: Served) -> str:
    """A launch attempt's serving summary, as the journal shows it: what was not measured is "—"."""
    ttft = NOT_COLLECTED if served.ttft_p90_s is None else span(served.ttft_p90_s)
    return (
        f"peak {number(served.peak_running)} running · TTFT p90 {ttft} · "
        f"{number(served.mean_tokens_s)} tok/s mean · accept {number(served.accept_length, 2)} · "
        f"{served.polls} poll{'' if served.polls == 1 else 's'}"
    )
