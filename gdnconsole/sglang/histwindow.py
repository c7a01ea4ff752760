"""Latency percentiles over a recent window, from a histogram's cumulative buckets scraped over time.

Two pure pieces, checked against Debian's Prometheus 2.42 (tests/sglang/test_histwindow_prometheus.py):

- ``quantile``: ``histogram_quantile`` of promql/quantile.go (2.42's ``bucketQuantile``): buckets sorted
  by upper bound, equal bounds merged, counts made monotonic, linear interpolation inside a bucket from
  0 (or the bucket below), the +Inf bucket answered by the highest finite bound. Where Prometheus says NaN
  because nothing was observed we say ``None``; its other NaNs (q NaN, no +Inf bucket, under two buckets,
  q = 0 over an empty first bucket: Go's 0/0) and ±Inf (q out of [0, 1]) are kept.
- ``HistogramHistory``: each series' cumulative buckets per scrape, and a window's increase: per bucket,
  as Prometheus' ``increase()`` over the samples in ``[now - seconds, now]`` counts it (a count that goes
  down is a restart, and what it reads then is new) but without its extrapolation to the window's edges:
  a panel shows what was observed, not an estimate. Then summed across series bucket by bucket
  (``sum by (le)``). Each scrape keeps its running increase, so a window costs one difference per series.

One deliberate difference from Prometheus 2.42: a series that first appears in a scrape after an earlier
scrape in the window (SGLang's labelled histograms have no series before their first request) counts from
zero at that earlier scrape, so the first requests are not lost. Prometheus 2.42 needs two samples of the
series and drops them.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

# (upper bound ``le``, cumulative count), sorted by bound, the last one +Inf.
Buckets = tuple[tuple[float, float], ...]
# A series' labels other than ``le``, sorted by name.
SeriesKey = tuple[tuple[str, str], ...]

# The longest window kept unless told otherwise: the panel's 5 minutes.
DEFAULT_HORIZON = 300.0


class HistogramError(ValueError):
    """A scrape's buckets that cannot be a histogram (said why), or a window longer than kept."""


def count(buckets: Buckets) -> float:
    """The observations in ``buckets``: its +Inf bucket (0 for no buckets)."""
    return buckets[-1][1] if buckets else 0.0


def quantile(q: float, buckets: Buckets) -> float | None:
    """The q-quantile as Prometheus 2.42's ``histogram_quantile`` computes it from ``buckets`` (any order,
    bounds may repeat); ``None`` where nothing was observed (Prometheus: NaN)."""
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    if not buckets:
        return None
    ordered = _monotonic(_coalesce(sorted(buckets, key=lambda b: b[0])))
    if ordered[-1][0] != math.inf or len(ordered) < 2:
        return math.nan
    observations = ordered[-1][1]
    if observations == 0:
        return None
    rank = q * observations
    b = _search(len(ordered) - 1, lambda i: ordered[i][1] >= rank)
    if b == len(ordered) - 1:
        return float(ordered[-2][0])
    if b == 0 and ordered[0][0] <= 0:
        return float(ordered[0][0])
    start, end, in_bucket = 0.0, ordered[b][0], ordered[b][1]
    if b > 0:
        start = ordered[b - 1][0]
        in_bucket -= ordered[b - 1][1]
        rank -= ordered[b - 1][1]
    return start + (end - start) * _go_divide(rank, in_bucket)


def _go_divide(a: float, b: float) -> float:
    """a / b as Go's float64 division: by zero is NaN or ±Inf, not an error (q = 0 over an empty first
    bucket is 0 / 0, NaN in Prometheus)."""
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _coalesce(ordered: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Buckets of the same bound merged, their counts summed (quantile.go coalesceBuckets)."""
    merged: list[tuple[float, float]] = []
    for bound, value in ordered:
        if merged and merged[-1][0] == bound:
            merged[-1] = (bound, merged[-1][1] + value)
        else:
            merged.append((bound, value))
    return merged


def _monotonic(ordered: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Each count raised to the highest below it (quantile.go ensureMonotonic: its NaN compares false)."""
    out: list[tuple[float, float]] = []
    highest = -math.inf
    for bound, value in ordered:
        if value > highest:
            highest = value
        elif value < highest:
            value = highest
        out.append((bound, value))
    return out


def _search(n: int, f: Callable[[int], bool]) -> int:
    """Go's sort.Search, step for step: the same answer as Prometheus even where ``f`` is not monotonic
    (a NaN count)."""
    i, j = 0, n
    while i < j:
        h = (i + j) >> 1
        if not f(h):
            i = h + 1
        else:
            j = h
    return i


@dataclass
class _Series:
    """One series' recent scrapes: their times, buckets, and each bucket's running increase (restarts
    read as Prometheus does) since the first one kept, so a window is one difference. Also when the series
    was first read, and the scrape before that (its zero), if any."""

    first_seen: float
    born_after: float | None
    times: deque[float] = field(default_factory=deque)
    buckets: deque[Buckets] = field(default_factory=deque)
    running: deque[tuple[float, ...]] = field(default_factory=deque)

    def append(self, at: float, buckets: Buckets) -> None:
        if self.buckets:
            steps = (
                now - was if now >= was else now
                for (_, was), (_, now) in zip(self.buckets[-1], buckets, strict=True)
            )
            self.running.append(tuple(r + step for r, step in zip(self.running[-1], steps, strict=True)))
        else:
            self.running.append((0.0,) * len(buckets))
        self.times.append(at)
        self.buckets.append(buckets)

    def drop_before(self, oldest: float) -> None:
        while self.times and self.times[0] < oldest:
            self.times.popleft()
            self.buckets.popleft()
            self.running.popleft()

    def increase(self, start: float, end: float) -> Buckets | None:
        """The increase per bucket over the scrapes in [start, end]; from zero when the first of them is
        the series' first and the scrape before it is in the window too."""
        first = bisect.bisect_left(self.times, start)
        last = bisect.bisect_right(self.times, end) - 1
        if first > last:
            return None
        bounds = [bound for bound, _ in self.buckets[first]]
        totals = [b - a for a, b in zip(self.running[first], self.running[last], strict=True)]
        if self.times[first] == self.first_seen and self.born_after is not None and start <= self.born_after:
            totals = [t + value for t, (_, value) in zip(totals, self.buckets[first], strict=True)]
        elif first == last:
            return None
        return tuple(zip(bounds, totals, strict=True))


class HistogramHistory:
    """Cumulative buckets of a histogram's series, scrape by scrape, and their increase over a window.

    Every series a scrape holds is added with that scrape's time (``add``); a scrape in which the family had
    no series at all is said with ``scraped``, so that a series appearing later counts from zero. Memory:
    scrapes older than ``horizon`` seconds before the newest are dropped, and a series with none left.
    """

    def __init__(self, horizon: float = DEFAULT_HORIZON) -> None:
        if not horizon > 0 or math.isinf(horizon):
            raise HistogramError(f"the horizon must be a positive number of seconds, not {horizon!r}")
        self.horizon = horizon
        self._series: dict[SeriesKey, _Series] = {}
        self._scrapes: deque[float] = deque()

    def __len__(self) -> int:
        """How many scrapes of all series are held (the memory bound's measure)."""
        return sum(len(s.times) for s in self._series.values())

    @property
    def series(self) -> frozenset[SeriesKey]:
        return frozenset(self._series)

    def scraped(self, at: float) -> None:
        """A scrape happened at ``at`` (with or without series of this family)."""
        _check_time(at)
        if self._scrapes and at < self._scrapes[-1]:
            raise HistogramError(f"scrape at {at} is older than the last one at {self._scrapes[-1]}")
        if not self._scrapes or at > self._scrapes[-1]:
            self._scrapes.append(at)
            self._prune(at)

    def add(self, at: float, key: SeriesKey, buckets: Buckets) -> None:
        """One series' cumulative ``buckets`` (sorted, last +Inf) read at ``at`` seconds."""
        _check_buckets(key, buckets)
        self.scraped(at)
        series = self._series.get(key)
        if series is not None:
            if at <= series.times[-1]:
                raise HistogramError(
                    f"series {_said(key)} was already read at {series.times[-1]}, not at {at}"
                )
            if [b for b, _ in series.buckets[-1]] != [b for b, _ in buckets]:
                series = None  # new bucket bounds: a different server; start the series again
        if series is None:
            series = self._series[key] = _Series(at, self._scrape_before(at))
        series.append(at, buckets)

    def window(
        self, now: float, seconds: float, key_filter: Callable[[SeriesKey], bool] | None = None
    ) -> Buckets | None:
        """The observations of the series ``key_filter`` keeps in ``[now - seconds, now]``, summed by bucket;
        ``None`` when no series has two scrapes (or a scrape and its zero) there. Zero counts mean scraped,
        nothing observed."""
        _check_time(now)
        if not 0 < seconds <= self.horizon:
            raise HistogramError(f"a window of {seconds!r} s: between 0 and the {self.horizon} s kept")
        start = now - seconds
        increases = [
            inc
            for key, s in self._series.items()
            if key_filter is None or key_filter(key)
            if (inc := s.increase(start, now)) is not None
        ]
        return _sum_by_le(increases) if increases else None

    def _scrape_before(self, at: float) -> float | None:
        i = bisect.bisect_left(self._scrapes, at)
        return self._scrapes[i - 1] if i > 0 else None

    def _prune(self, newest: float) -> None:
        oldest = newest - self.horizon
        # Keep one scrape before the horizon: a series appearing next counts from it.
        while len(self._scrapes) > 1 and self._scrapes[1] < oldest:
            self._scrapes.popleft()
        for key in list(self._series):
            self._series[key].drop_before(oldest)
            if not self._series[key].times:
                del self._series[key]


def _sum_by_le(increases: Iterable[Buckets]) -> Buckets:
    """Bucket-wise sums across series, over every bound any of them has (``sum by (le)``)."""
    sums: dict[float, float] = {}
    for buckets in increases:
        for bound, value in buckets:
            sums[bound] = sums.get(bound, 0.0) + value
    return tuple(sorted(sums.items()))


def _check_time(at: float) -> None:
    if not math.isfinite(at):
        raise HistogramError(f"a scrape's time must be a finite number of seconds, not {at!r}")


def _check_buckets(key: SeriesKey, buckets: Buckets) -> None:
    """What a scrape's series must be: sorted distinct bounds ending at +Inf, counts finite and >= 0."""
    if not buckets or buckets[-1][0] != math.inf:
        raise HistogramError(f"series {_said(key)} has no +Inf bucket")
    bounds = [bound for bound, _ in buckets]
    if any(math.isnan(b) for b in bounds) or any(a >= b for a, b in itertools.pairwise(bounds)):
        raise HistogramError(f"series {_said(key)}: bucket bounds not sorted and distinct: {bounds}")
    if any(not (math.isfinite(value) and value >= 0) for _, value in buckets):
        raise HistogramError(f"series {_said(key)}: a bucket count is negative or not finite")


def _said(key: SeriesKey) -> str:
    return "{" + ",".join(f"{name}={value!r}" for name, value in key) + "}"
