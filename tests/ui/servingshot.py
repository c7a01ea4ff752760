"""Serving figures on hand-set, deterministic state, for the serving strip's and screen's tests and shots.

Pages are written with SGLang 0.5.23's names and labels as the captured page has them
(tests/sglang/data/metrics-0.5.23.txt, from the wheel's own collectors): two DP ranks' scheduler gauges
(tp_rank 0 of each attention group), the tokenizer's TTFT, inter-token and end-to-end histograms, the
scheduler's queue time. Each round adds requests whose latencies the test sets: steady for minutes, then a
burst in the last minute that is slower, so the 1-minute and 5-minute windows differ.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gdnconsole.config.hosts import Profile
from gdnconsole.host.servingfeed import ServingFeed
from gdnconsole.host.servingpoll import METRICS, SERVER_INFO, EndpointReply, ServingRound
from gdnconsole.host.session import HostSession
from tests.sglang.servingdata import server_info

STEP_S = 5.0  # between two rounds: 70 rounds cover the 5-minute window
ROUNDS = 70
BURST = 12  # the last minute's rounds
T0 = 1_796_218_000.0  # the host's clock at the first round
SCHED = 'engine_type="unified",model_name="qwen3.6-27b",moe_ep_rank="0",pp_rank="0",tp_rank="0"'
TOKENIZER = 'engine_type="unified",model_name="qwen3.6-27b"'
# name, role, base seconds, bounds (SGLang's default buckets for each, 0.5.23 metrics_collector.py)
HISTOGRAMS: tuple[tuple[str, str, float, tuple[float, ...]], ...] = (
    ("time_to_first_token_seconds", "tokenizer", 0.42, (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40)),
    ("inter_token_latency_seconds", "tokenizer", 0.024, (0.002, 0.005, 0.01, 0.02, 0.03, 0.04, 0.06, 0.1, 0.2, 0.4)),
    ("e2e_request_latency_seconds", "tokenizer", 6.5, (0.3, 0.5, 1, 2, 4, 6, 8, 10, 20, 40, 60, 120)),
    ("queue_time_seconds", "scheduler", 0.04, (0.005, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30)),
)  # fmt: skip
STREAMING = {"time_to_first_token_seconds", "e2e_request_latency_seconds"}


class Clock:
    """This machine's clock as the feed reads it (the figures' age)."""

    def __init__(self, now: float = 5000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class Histograms:
    """Cumulative bucket counts per histogram (per DP rank for the scheduler's)."""

    counts: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    sums: dict[tuple[str, int], float] = field(default_factory=dict)

    def observe(self, name: str, rank: int, bounds: Sequence[float], value: float) -> None:
        counts = self.counts.setdefault((name, rank), [0] * (len(bounds) + 1))
        for i, bound in enumerate((*bounds, math.inf)):
            if value <= bound:
                counts[i] += 1
        self.sums[(name, rank)] = self.sums.get((name, rank), 0.0) + value


def _spread(j: int) -> float:
    """A request's latency as a share of the base: deterministic, 0.5 to 2.0."""
    return 0.5 + ((j * 0.6180339887) % 1.0) * 1.5


def _gauge(name: str, values: Sequence[float]) -> list[str]:
    out = [f"# TYPE sglang:{name} gauge"]
    out += [f'sglang:{name}{{dp_rank="{dp}",{SCHED}}} {v}' for dp, v in enumerate(values)]
    return out


def _histogram(name: str, role: str, bounds: Sequence[float], h: Histograms, ranks: int) -> list[str]:
    out = [f"# TYPE sglang:{name} histogram"]
    keys = [(name, dp) for dp in range(ranks)] if role == "scheduler" else [(name, 0)]
    for key in keys:
        if key not in h.counts:
            continue
        if role == "scheduler":
            labels = f'dp_rank="{key[1]}",{SCHED}'
        else:
            labels = TOKENIZER + (',is_streaming="true"' if name in STREAMING else "")
        for bound, count in zip((*bounds, math.inf), h.counts[key], strict=True):
            le = "+Inf" if bound == math.inf else f"{bound}"
            out.append(f'sglang:{name}_bucket{{{labels},le="{le}"}} {float(count)}')
        out.append(f"sglang:{name}_count{{{labels}}} {float(h.counts[key][-1])}")
        out.append(f"sglang:{name}_sum{{{labels}}} {h.sums[key]:.3f}")
    return out


@dataclass(frozen=True)
class Load:
    """One round's per-rank gauges."""

    running: tuple[int, ...]
    queued: tuple[int, ...]
    tokens_s: tuple[float, ...]
    kv: tuple[float, ...]
    mamba: tuple[float, ...]
    accept: tuple[float, ...]


def load_at(i: int) -> Load:
    burst = i >= ROUNDS - BURST
    running = tuple(9 + (i * 7 + dp * 3) % 8 + (22 if burst else 0) for dp in range(2))
    queued = tuple(((i + dp) % 3 + (6 if burst else 0)) if dp == 0 else (i % 2) for dp in range(2))
    tokens = tuple(r * (31.0 if burst else 38.0) + (i % 5) * 4 for r in running)
    return Load(
        running=running,
        queued=queued,
        tokens_s=tokens,
        kv=tuple(round(0.18 + r / 140, 3) for r in running),
        mamba=tuple(round(0.22 + r / 95, 3) for r in running),
        accept=tuple(round(2.86 + ((i + dp) % 4) * 0.03, 2) for dp in range(2)),
    )


def page(i: int, h: Histograms, load: Load) -> str:
    lines: list[str] = []
    lines += _gauge("num_running_reqs", load.running)
    lines += _gauge("num_queue_reqs", load.queued)
    lines += _gauge("gen_throughput", load.tokens_s)
    lines += _gauge("cache_hit_rate", (0.61, 0.58))
    lines += _gauge("full_token_usage", load.kv)
    lines += _gauge("token_usage", [max(k, m) for k, m in zip(load.kv, load.mamba, strict=True)])
    lines += _gauge("mamba_usage", load.mamba)
    lines += _gauge("spec_accept_length", load.accept)
    lines += ["# TYPE sglang:num_retracted_requests_total counter"]
    lines += [f'sglang:num_retracted_requests_total{{dp_rank="{dp}",{SCHED}}} {float(dp)}' for dp in range(2)]
    lines += ["# TYPE sglang:num_aborted_requests_total counter"]
    lines += [f"sglang:num_aborted_requests_total{{{TOKENIZER}}} {float(i // 30)}"]
    for name, role, _base, bounds in HISTOGRAMS:
        lines += _histogram(name, role, bounds, h, 2)
    return "\n".join(lines) + "\n"


def rounds(count: int = ROUNDS) -> list[ServingRound]:
    """``count`` rounds of a serving ct129 (2 DP ranks, mamba pools), STEP_S apart, the last BURST
    rounds slower and busier."""
    h = Histograms()
    info = EndpointReply(SERVER_INFO, 200, None, 1.0, json.dumps(server_info("0.5.23", 2)), False)
    out = []
    j = 0
    for i in range(count):
        burst = i >= ROUNDS - BURST
        for _ in range(6 if burst else 3):
            j += 1
            for name, role, base, bounds in HISTOGRAMS:
                slow = 2.6 if burst and name != "inter_token_latency_seconds" else (1.3 if burst else 1.0)
                h.observe(name, j % 2 if role == "scheduler" else 0, bounds, base * slow * _spread(j))
        body = page(i, h, load_at(i))
        metrics = EndpointReply(METRICS, 200, None, 2.0, body, False)
        out.append(ServingRound(T0 + i * STEP_S, "127.0.0.1", 30000, (metrics, info)))
    return out


def timed_out(i: int) -> ServingRound:
    """A round whose /metrics did not answer in time (a hung server)."""
    reply = EndpointReply(METRICS, None, "timed out after 2.0 s", None, None, False)
    return ServingRound(T0 + i * STEP_S, "127.0.0.1", 30000, (reply,))


def fed(clock: Clock | None = None, count: int = ROUNDS, *, stale_s: float | None = None) -> ServingFeed:
    """A feed that took ``count`` rounds; read 1.2 s after the latest figures, or, with ``stale_s``, a
    poll that timed out and the figures that old."""
    clock = clock or Clock()
    feed = ServingFeed(version="0.5.23", pools=frozenset({"mamba"}), clock=clock)
    for round_ in rounds(count):
        feed.take(round_)
    clock.now += 1.2
    if stale_s is not None:
        feed.take(timed_out(count))
        clock.now += stale_s - 1.2
    return feed


def with_figures(session: HostSession, feed: ServingFeed) -> HostSession:
    """The session's watch holds ``feed`` (as if the agent's rounds had come), and says so."""
    session.figures.feed = feed
    session.notify("figures")
    return session


def message(round_: ServingRound) -> dict[str, Any]:
    """A round as the agent's ``serving`` frame (host/servingpoll.py parses it back)."""
    return {
        "type": "serving",
        "t": round_.t,
        "host": round_.host,
        "port": round_.port,
        "replies": [
            {"path": r.path, "status": r.status, "error": r.error, "ms": r.ms, "body": r.body,
             "truncated": r.truncated}
            for r in round_.replies
        ],
    }  # fmt: skip


def tuned_store(folder: Path, host: str, profile: Profile, python: str = "python3") -> None:
    """A tune sweep of ``profile`` as it is (its model, its flags run with ``python``) in the store beside
    the journal: the tune screen's shot's sweep."""
    from gdnconsole.tune.store import TuneStore
    from gdnconsole.tune.sweep import flags_digest, sweep_record
    from tests.ui.tune_shot import sweep

    done = sweep()
    done.identity = dataclasses.replace(
        done.identity, model=profile.model, flags=flags_digest(profile, python)
    )
    done.profile = profile.name
    done.started = done.ended = T0
    TuneStore(host, folder).add_sweep(sweep_record(done))
