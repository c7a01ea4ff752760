"""The serving figures of one server as its polls arrive: the latest, windowed latencies, short histories.

Fed one ``ServingRound`` (host/servingpoll.py) at a time, it reads ``/metrics`` when the server answers
it, ``/v1/loads`` when metrics are off (404), and ``/server_info`` for the caps SGLang computed
(sglang/servingfigures.py builds the figures). Latencies over the last 1 and 5 minutes come from the
differences of cumulative buckets between polls (sglang/histwindow.py), so a restart's reset never gives
a negative count. A round that brings nothing usable keeps the last figures and says why; the figures'
age is measured on this machine's clock, since the host's may be off.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from gdnconsole.host.journal import Served
from gdnconsole.host.servingpoll import LOADS, METRICS, SERVER_INFO, EndpointReply, ServingRound
from gdnconsole.sglang import exposition, loads, servingfigures
from gdnconsole.sglang.decodepoints import DecodePoint
from gdnconsole.sglang.histwindow import HistogramError, HistogramHistory
from gdnconsole.sglang.metricfacts import Figure, families, read_names
from gdnconsole.sglang.servingfigures import LATENCIES, Latency, Pool, ServingFigures

WINDOWS_S = (60.0, 300.0)
HISTORY_POINTS = 120  # sparkline points: two minutes at the poll's once a second


def _total(values: list[float | int | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(sum(known)) if known else None


def _mean(values: list[float | int | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


class ServingFeed:
    def __init__(
        self,
        *,
        version: str | None = None,
        pools: frozenset[Pool] = frozenset(),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.version = version
        self.pools = pools
        self.clock = clock
        self.figures: ServingFigures | None = None  # the latest, latencies since the server started
        self.info: loads.ServerInfo | None = None
        self.received: float | None = None  # this machine's clock when the latest figures came
        self.problem: str | None = None  # why the latest round brought no figures
        self.reached = False  # the latest round had an HTTP answer
        self.unread: str | None = None  # what of the latest /metrics page could not be read
        self.metrics_off = False  # /metrics said 404: only /v1/loads is worth asking
        self.histories = {f: HistogramHistory() for f in LATENCIES}
        self.running: deque[float | None] = deque(maxlen=HISTORY_POINTS)
        self.queued: deque[float | None] = deque(maxlen=HISTORY_POINTS)
        self.tokens_s: deque[float | None] = deque(maxlen=HISTORY_POINTS)
        self._peak: int | None = None
        self._tokens: list[float | None] = []
        self._accepts: list[float | None] = []
        self.polls = 0  # rounds that brought figures
        self.rounds = 0  # rounds taken, whatever they brought
        self._log_point: DecodePoint | None = None
        self.last_t: float | None = None  # the host's time of the latest /metrics page

    # -- taking rounds ----------------------------------------------------------------------------

    def take(self, round_: ServingRound) -> None:
        self.rounds += 1
        self.reached = round_.reached
        self.unread = None
        info = round_.reply(SERVER_INFO)
        if info is not None and info.ok and info.body is not None:
            self.info = loads.parse_server_info(exposition_json(info.body))
        figures = self._from_metrics(round_) or self._from_loads(round_)
        if figures is None:
            self.problem = self.unread or _why_nothing(round_)
            return
        self.figures, self.received, self.problem = figures, self.clock(), None
        self.version = figures.version or self.version
        self._remember(figures)

    def _from_metrics(self, round_: ServingRound) -> ServingFigures | None:
        reply = round_.reply(METRICS)
        if reply is None:
            return None
        self.metrics_off = reply.status == 404
        if not reply.ok or reply.body is None:
            return None
        version = self.version or (self.info.version if self.info else None)
        parsed = exposition.parse(reply.body, read_names(version))  # a third of the page's cost
        if isinstance(parsed, exposition.ExpositionError):
            self.unread = parsed.message
            return None
        if not parsed.samples:
            self.unread = "/metrics holds none of the families SGLang serves its figures in"
            return None
        figures = servingfigures.from_metrics(parsed, self.info, version=self.version, pools=self.pools)
        self.last_t = round_.t
        self._add_histograms(round_.t, parsed, figures.version)
        return figures

    def _add_histograms(self, at: float, parsed: exposition.Exposition, version: str | None) -> None:
        fam = families(version)
        for figure in LATENCIES:
            history = self.histories[figure]
            history.scraped(at)  # a series that first appears after this poll counts from zero
            for labels, buckets in servingfigures.histogram_series(parsed, fam[figure]):
                try:
                    history.add(at, tuple(labels), buckets)
                except HistogramError as exc:  # a page that repeats a bound, or a series read twice
                    self.unread = f"/metrics: {exc}"

    def _from_loads(self, round_: ServingRound) -> ServingFigures | None:
        reply = round_.reply(LOADS)
        if reply is None or not reply.ok or reply.body is None:
            return None
        parsed = loads.parse_loads(exposition_json(reply.body))
        if not parsed.ranks:
            return None
        return servingfigures.from_loads(parsed, self.info)

    def _remember(self, figures: ServingFigures) -> None:
        running = _total([r.running for r in figures.ranks])
        self.running.append(running)
        self.queued.append(_total([r.queued for r in figures.ranks]))
        tokens = _total([r.gen_throughput for r in figures.ranks])  # each DP rank decodes its own
        self.tokens_s.append(tokens)
        self.polls += 1
        if running is not None:
            self._peak = max(self._peak or 0, int(running))
        self._tokens.append(tokens)
        self._accepts.append(_mean([r.accept_length for r in figures.ranks]))

    def take_log(self, point: DecodePoint) -> None:
        """The polls bring nothing (``problem`` says why): the log's last Decode line, the last resort,
        stands for the figures, said as such (source "log")."""
        if self.figures is not None and self.figures.source == "log" and self._log_point is point:
            return  # the same line again: nothing new to show or count
        self._log_point = point
        self.figures, self.received = servingfigures.from_decode(point, self.version), self.clock()
        self._remember(self.figures)

    # -- reading ----------------------------------------------------------------------------------

    def age(self) -> float | None:
        """Seconds since the latest figures came; None before any."""
        return None if self.received is None else max(0.0, self.clock() - self.received)

    def windowed(self, seconds: float) -> ServingFigures | None:
        """The latest figures with their latencies over the last ``seconds`` of polls instead of since
        the server started (None for a latency with no observation in that window)."""
        if self.figures is None:
            return None
        if self.figures.source != "metrics":
            return self.figures
        lat = {f: self.latency(f, seconds) for f in LATENCIES}
        return servingfigures.with_latencies(
            self.figures, lat["ttft"], lat["e2e"], lat["itl"], lat["queue_time"]
        )

    def latency(self, figure: Figure, seconds: float) -> Latency | None:
        history = self.histories.get(figure)
        if history is None or self.last_t is None:
            return None
        return servingfigures.windowed(history, self.last_t, seconds)

    def summary(self) -> Served:
        """What the journal keeps of the attempt: peak running, TTFT p90 since the server started, mean
        decode tokens/s and accept length over the polls that measured them."""
        ttft = self.figures.ttft_s if self.figures is not None else None
        return Served(
            peak_running=self._peak,
            ttft_p90_s=ttft.p90 if ttft is not None else None,
            mean_tokens_s=_mean(self._tokens),
            accept_length=_mean(self._accepts),
            polls=self.polls,
        )


def exposition_json(body: str) -> object:
    """A JSON body, or None when it is not JSON (the parsers then say what they miss)."""
    import json

    try:
        return json.loads(body)
    except ValueError:
        return None


def _why_nothing(round_: ServingRound) -> str:
    """One line on why a round brought no figures: the first reply's error or status."""
    for reply in round_.replies:
        if reply.error:
            return f"{reply.path}: {reply.error}"
    for reply in round_.replies:
        if reply.status not in (None, 200, 404):
            return f"{reply.path}: HTTP {reply.status}"
    return _said(round_.reply(METRICS)) or "the server sent no figures"


def _said(reply: EndpointReply | None) -> str | None:
    if reply is not None and reply.status == 200 and reply.truncated:
        return f"{reply.path}: the page was cut at its size limit"
    return None
