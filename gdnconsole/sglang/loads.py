"""/v1/loads and /server_info, read as typed values (metricfacts says what each field means per version).

Both answers are untrusted JSON, already decoded: a field of the wrong type (a bool for a count, a string
for a ratio, a negative count) is left out and said in ``warnings``; a field that is absent is None.
Neither parse raises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

# At most this many ranks are read from one answer: a hostile list of millions is not a server.
MAX_RANKS = 1024


@dataclass(frozen=True)
class LoadsRank:
    """One DP rank of /v1/loads. ``gen_throughput`` and ``cache_hit_rate`` are as SGLang sent them: 0
    without --enable-metrics (metricfacts.LOADS_ZERO_WITHOUT_METRICS) — the figures decide."""

    dp_rank: int
    running: int | None
    waiting: int | None
    used_tokens: int | None
    max_total_tokens: int | None
    max_running: int | None
    token_usage: float | None
    gen_throughput: float | None
    cache_hit_rate: float | None
    accept_length: float | None
    retracted: int | None


@dataclass(frozen=True)
class Loads:
    version: str | None
    ranks: tuple[LoadsRank, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class InternalState:
    """One DP rank's entry of /server_info's internal_states."""

    max_running: int | None
    last_gen_throughput: float | None
    accept_length: float | None


@dataclass(frozen=True)
class ServerInfo:
    version: str | None
    max_running_requests: int | None
    max_total_num_tokens: int | None
    speculative_algorithm: str | None
    internal_states: tuple[InternalState, ...]
    warnings: tuple[str, ...]


class _Reader:
    """Typed access to one JSON object, collecting what was refused."""

    def __init__(self, where: str, obj: dict[str, Any], warnings: list[str]) -> None:
        self.where, self.obj, self.warnings = where, obj, warnings

    def _refuse(self, key: str, want: str) -> None:
        got = type(self.obj[key]).__name__
        self.warnings.append(f"{self.where}.{key}: expected {want}, got {got}; left out")

    def count(self, key: str) -> int | None:
        value = self.obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self._refuse(key, "a count")
            return None
        return value

    def number(self, key: str) -> float | None:
        value = self.obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self._refuse(key, "a number")
            return None
        return float(value)

    def text(self, key: str) -> str | None:
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self._refuse(key, "a string")
            return None
        return value

    def section(self, key: str) -> _Reader | None:
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            self._refuse(key, "an object")
            return None
        return _Reader(f"{self.where}.{key}", value, self.warnings)

    def objects(self, key: str) -> list[_Reader]:
        value = self.obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self._refuse(key, "a list")
            return []
        if len(value) > MAX_RANKS:
            self.warnings.append(f"{self.where}.{key}: {len(value)} entries, read the first {MAX_RANKS}")
        readers = []
        for i, item in enumerate(value[:MAX_RANKS]):
            if isinstance(item, dict):
                readers.append(_Reader(f"{self.where}.{key}[{i}]", item, self.warnings))
            else:
                self.warnings.append(f"{self.where}.{key}[{i}]: expected an object; left out")
        return readers


def _top(where: str, body: object, warnings: list[str]) -> _Reader:
    if isinstance(body, dict):
        return _Reader(where, body, warnings)
    warnings.append(f"{where}: expected a JSON object, got {type(body).__name__}")
    return _Reader(where, {}, warnings)


def _rank(r: _Reader, index: int) -> LoadsRank:
    spec, queues = r.section("speculative"), r.section("queues")
    dp_rank = r.count("dp_rank")
    return LoadsRank(
        dp_rank=index if dp_rank is None else dp_rank,
        running=r.count("num_running_reqs"),
        waiting=r.count("num_waiting_reqs"),
        used_tokens=r.count("num_used_tokens"),
        max_total_tokens=r.count("max_total_num_tokens"),
        max_running=r.count("max_running_requests"),
        token_usage=r.number("token_usage"),
        gen_throughput=r.number("gen_throughput"),
        cache_hit_rate=r.number("cache_hit_rate"),
        accept_length=spec.number("accept_length") if spec else None,
        retracted=queues.count("retracted") if queues else None,
    )


def parse_loads(body: object) -> Loads:
    """The decoded JSON of ``GET /v1/loads``."""
    warnings: list[str] = []
    top = _top("loads", body, warnings)
    ranks = tuple(_rank(r, i) for i, r in enumerate(top.objects("loads")))
    return Loads(top.text("version"), ranks, tuple(warnings))


def parse_server_info(body: object) -> ServerInfo:
    """The decoded JSON of ``GET /server_info``."""
    warnings: list[str] = []
    top = _top("server_info", body, warnings)
    states = tuple(
        InternalState(
            max_running=s.count("effective_max_running_requests_per_dp"),
            last_gen_throughput=s.number("last_gen_throughput"),
            accept_length=s.number("avg_spec_accept_length"),
        )
        for s in top.objects("internal_states")
    )
    return ServerInfo(
        version=top.text("version"),
        max_running_requests=top.count("max_running_requests"),
        max_total_num_tokens=top.count("max_total_num_tokens"),
        speculative_algorithm=top.text("speculative_algorithm"),
        internal_states=states,
        warnings=tuple(warnings),
    )
