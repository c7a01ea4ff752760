"""histwindow's percentiles against a real Prometheus (Debian's 2.42) over the same scrapes.

A real prometheus_client histogram, named, labelled and bucketed as SGLang 0.5.23's TTFT histogram, is
observed between scrapes and restarted twice (its counts start again from zero). Each scrape is written
with its exact timestamp as OpenMetrics and turned into TSDB blocks by ``promtool tsdb create-blocks-from
openmetrics``; a Prometheus started on those blocks answers the PromQL below. Exact timestamps instead of a
live scrape: no wall clock, no scrape jitter, the same samples on both sides.

The PromQL is ``histogram_quantile(q, sum by (le) (increase(X_bucket[W])))`` evaluated only at scrape
times ``t`` such that ``t - W`` is a scrape time too. Prometheus 2.42's range ``[t - W, t]`` is closed, so
its first and last samples sit on the range's edges: ``extrapolatedRate`` then multiplies by
``(sampled + 0 + 0) / sampled`` = 1 exactly, and ``increase`` is the reset-adjusted difference our window
computes. ``X - X offset W`` would compare nothing useful (it goes negative across a restart).
"""

from __future__ import annotations

import json
import math
import random
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Histogram

from gdnconsole.sglang.histwindow import Buckets, HistogramHistory, SeriesKey, count, quantile
from tests import needs

NAME = "sglang:time_to_first_token_seconds"
# 0.5.23 observability/metrics_collector.py:1965-1985 (the default TTFT buckets) and :2040-2048 (the
# histogram: its name, the collector's labels plus is_streaming).
TTFT_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
LABELS = ("model_name", "is_streaming")
BASE = 1_700_000_000  # the first scrape's time, seconds
STEP = 10  # seconds between scrapes
SCRAPES = 40
RESTARTS = {12, 25}  # the server restarts just before these scrapes
QUIET = range(31, 38)  # a minute with nothing observed: both say so (NaN there, None here)
WINDOWS = (60, 300)
QUANTILES = (0.0, 0.5, 0.9, 0.99, 1.0)


class Server:
    """The histogram a server exposes: a fresh registry at each restart, both series present from it."""

    def __init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        self.registry = CollectorRegistry()
        self.ttft = Histogram(NAME, "TTFT", labelnames=LABELS, buckets=TTFT_BUCKETS, registry=self.registry)
        for streaming in ("true", "false"):
            self.ttft.labels(model_name="qwen", is_streaming=streaming)

    def scrape(self) -> dict[SeriesKey, Buckets]:
        """Each series' cumulative buckets, read as a scraper reads them."""
        series: dict[SeriesKey, list[tuple[float, float]]] = {}
        for family in self.registry.collect():
            for sample in family.samples:
                if sample.name == f"{NAME}_bucket":
                    key = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "le"))
                    series.setdefault(key, []).append((float(sample.labels["le"]), sample.value))
        return {key: tuple(buckets) for key, buckets in series.items()}


def _observe(server: Server, rng: random.Random, index: int) -> None:
    """A burst between two scrapes: lognormal TTFTs, some exactly on bounds, some past the last one; after
    the second restart many slow ones, so that +Inf outgrows its count before the restart while the low
    buckets stay below theirs (a restart seen by some buckets only, as Prometheus sees it)."""
    slow = index >= 25
    for _ in range(600 if index == 25 else rng.randrange(0, 40)):
        value = rng.lognormvariate(3.0 if slow else 0.0, 1.2)
        if rng.random() < 0.05:
            value = rng.choice(TTFT_BUCKETS)
        if rng.random() < 0.02:
            value = 1000.0
        server.ttft.labels(model_name="qwen", is_streaming=rng.choice(("true", "false"))).observe(value)


def _scrapes() -> list[tuple[int, dict[SeriesKey, Buckets]]]:
    rng = random.Random(28)
    server = Server()
    taken = []
    for index in range(SCRAPES):
        if index in RESTARTS:
            server.restart()
        if index > 0 and index not in QUIET:
            _observe(server, rng, index)
        taken.append((BASE + STEP * index, server.scrape()))
    return taken


def _openmetrics(scrapes: list[tuple[int, dict[SeriesKey, Buckets]]]) -> str:
    lines = [f"# TYPE {NAME} histogram"]
    for at, series in scrapes:
        for key, buckets in series.items():
            labels = ",".join(f'{k}="{v}"' for k, v in key)
            for bound, value in buckets:
                le = "+Inf" if bound == math.inf else repr(bound)
                lines.append(f'{NAME}_bucket{{{labels},le="{le}"}} {value!r} {at}')
            lines.append(f"{NAME}_count{{{labels}}} {buckets[-1][1]!r} {at}")
    return "\n".join([*lines, "# EOF", ""])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return int(answer.status), bytes(answer.read())
    except OSError:
        return 0, b""


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[str]:
    """A Prometheus on TSDB blocks made from the scrapes; its base URL."""
    needs.require("prometheus")
    needs.require("promtool")
    om = tmp_path / "scrapes.om"
    om.write_text(_openmetrics(_scrapes()))
    data = tmp_path / "data"
    subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", "-q", str(om), str(data)],
        check=True,
        capture_output=True,
    )
    config = tmp_path / "prometheus.yml"
    config.write_text("global: {}\n")
    port = _free_port()
    process = subprocess.Popen(
        [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            "--storage.tsdb.retention.time=36500d",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "prometheus.log").open("wb"),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        # Await readiness: /-/ready answers 200 once the blocks are open (or the process is gone).
        deadline = time.monotonic() + 120
        while _get(f"{url}/-/ready")[0] != 200:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"prometheus did not start: {(tmp_path / 'prometheus.log').read_text()[-2000:]}")
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _query(url: str, expr: str, at: int) -> list[dict[str, object]]:
    status, body = _get(f"{url}/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": at}))
    assert status == 200, body
    answer = json.loads(body)
    assert answer["status"] == "success", answer
    result: list[dict[str, object]] = answer["data"]["result"]
    return result


def _theirs(url: str, q: float, window: int, at: int) -> float:
    expr = f'histogram_quantile({q}, sum by (le) (increase({{__name__="{NAME}_bucket"}}[{window}s])))'
    result = _query(url, expr, at)
    assert len(result) == 1, result
    value = result[0]["value"]
    assert isinstance(value, list)
    return float(value[1])


def test_prometheus_holds_every_scrape(prometheus: str) -> None:
    expr = f'count_over_time({{__name__="{NAME}_count"}}[{STEP * SCRAPES}s])'
    result = _query(prometheus, expr, BASE + STEP * (SCRAPES - 1))
    assert sorted(float(r["value"][1]) for r in result) == [SCRAPES, SCRAPES]  # type: ignore[index]


def test_quantiles_over_windows_match_prometheus(prometheus: str) -> None:
    history = HistogramHistory(horizon=max(WINDOWS))
    compared = restarts_inside = nothing = zero_over_zero = 0
    for at, series in _scrapes():
        for key, buckets in series.items():
            history.add(at, key, buckets)
        for window in WINDOWS:
            if at - window < BASE:
                continue
            ours = history.window(at, window)
            assert ours is not None
            restarts_inside += any(at - window < BASE + STEP * i <= at for i in RESTARTS)
            for q in QUANTILES:
                mine = quantile(q, ours)
                theirs = _theirs(prometheus, q, window, at)
                said = (at, window, q, mine, theirs)
                if mine is None:  # nothing observed: Prometheus' NaN
                    assert math.isnan(theirs) and count(ours) == 0, said
                    nothing += 1
                elif math.isnan(mine):  # q = 0 over an empty first bucket: 0/0 on both sides
                    assert math.isnan(theirs), said
                    zero_over_zero += 1
                else:
                    assert mine == pytest.approx(theirs, abs=1e-9, rel=0), said
                compared += 1
    assert compared == len(QUANTILES) * sum(SCRAPES - w // STEP for w in WINDOWS)
    assert restarts_inside > 0 and nothing > 0 and zero_over_zero > 0


def test_the_second_restart_is_seen_by_some_buckets_only() -> None:
    """What the comparison above covers: +Inf grows across the restart while a low bucket drops."""
    scrapes = dict(_scrapes())
    before, after = scrapes[BASE + STEP * 24], scrapes[BASE + STEP * 25]
    assert any(
        after[key][-1][1] > before[key][-1][1] and after[key][0][1] < before[key][0][1] for key in after
    )
