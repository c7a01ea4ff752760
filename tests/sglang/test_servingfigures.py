"""The serving figures from each wheel's rendered page, from /v1/loads with metrics off, and windowed."""

from __future__ import annotations

import json
import math

import pytest

from gdnconsole.sglang.exposition import Exposition, parse
from gdnconsole.sglang.histwindow import HistogramHistory
from gdnconsole.sglang.loads import parse_loads, parse_server_info
from gdnconsole.sglang.metricfacts import families
from gdnconsole.sglang.servingfigures import (
    from_loads,
    from_metrics,
    histogram_series,
    latency,
    sum_buckets,
    windowed,
    with_latencies,
)
from tests.sglang.servingdata import loads_0511, loads_0523, page, server_info
from tests.tools.sglang_metrics_agreement import ABORTED, ACCEPT, RANKS, RETRACTED, TTFT


def expo(text: str) -> Exposition:
    parsed = parse(text)
    assert isinstance(parsed, Exposition), parsed
    return parsed


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_dp_attention_two_ranks_read_from_tp_rank_0(version: str) -> None:
    figures = from_metrics(expo(page(version)), version=version, pools=frozenset({"mamba"}))
    assert figures.source == "metrics" and figures.version == version
    assert [r.dp_rank for r in figures.ranks] == [0, 1]
    for r in figures.ranks:
        fed = RANKS[r.dp_rank]
        assert (r.running, r.queued, r.token_usage, r.mamba_usage) == (
            fed["running"], fed["queued"], fed["full"], fed["mamba"]
        )  # fmt: skip
        assert r.token_usage != fed["max"]  # the KV pool's own, not SGLang's max over pools
        assert (r.gen_throughput, r.cache_hit_rate) == (fed["gen"], fed["hit"])
        assert (r.accept_length, r.retracted) == (ACCEPT[r.dp_rank], RETRACTED[r.dp_rank])
        assert r.swa_usage is None and r.max_running is None  # no SWA pool; no /server_info
    assert [r.aborted for r in figures.ranks] == [ABORTED, None]
    assert figures.gen_throughput == RANKS[0]["gen"] + RANKS[1]["gen"]
    assert figures.ttft_s is not None and figures.ttft_s.count == len(TTFT)
    assert figures.ttft_s.window == "since start"


def test_pools_the_model_lacks_are_none_though_sglang_writes_0() -> None:
    figures = from_metrics(expo(page("0.5.23")), version="0.5.23")
    assert all(r.mamba_usage is None and r.swa_usage is None for r in figures.ranks)
    assert all("mamba_usage" not in rank for rank in figures.to_json()["ranks"])  # type: ignore[attr-defined]


def test_server_info_gives_the_caps_and_version() -> None:
    info = parse_server_info(server_info("0.5.23"))
    figures = from_metrics(expo(page("0.5.23")), info)
    assert figures.version == "0.5.23"
    assert [r.max_running for r in figures.ranks] == [48, 48]


def without(text: str, family: str) -> str:
    return "\n".join(line for line in text.splitlines() if family not in line) + "\n"


def test_a_histogram_with_no_series_yet_is_none_not_zero() -> None:
    text = page("0.5.23")
    for figure in ("ttft", "itl", "e2e", "queue_time"):
        text = without(text, families("0.5.23")[figure].name)
    figures = from_metrics(expo(text), version="0.5.23")
    assert (figures.ttft_s, figures.e2e_s, figures.itl_s, figures.queue_s) == (None, None, None, None)
    line = json.loads(figures.json_line())
    assert line["ttft_s"] is None and line["queue_s"] is None


def test_an_empty_page_gives_one_rank_of_nothing() -> None:
    figures = from_metrics(expo(""), version="0.5.11")
    assert len(figures.ranks) == 1
    rank = figures.ranks[0]
    assert (rank.running, rank.token_usage, rank.retracted, rank.accept_length) == (None, None, None, None)
    assert rank.aborted is None and rank.gen_throughput is None and figures.gen_throughput is None


def test_counters_without_series_are_0_once_their_collector_writes() -> None:
    fam = families("0.5.23")
    text = without(without(page("0.5.23"), fam["aborted"].name), fam["retracted"].name)
    figures = from_metrics(expo(text), version="0.5.23")
    assert [(r.aborted, r.retracted) for r in figures.ranks] == [(0, 0), (None, 0)]


def test_accept_length_zero_is_no_reading() -> None:
    text = page("0.5.11").replace("sglang:spec_accept_length{", "sglang:ignored{")
    text += 'sglang:spec_accept_length{dp_rank="0",tp_rank="0"} 0.0\n'
    figures = from_metrics(expo(text), version="0.5.11")
    assert figures.ranks[0].accept_length is None


def test_json_shape_is_the_issues() -> None:
    figures = from_metrics(expo(page("0.5.23")), version="0.5.23", pools=frozenset({"mamba"}))
    line = json.loads(figures.json_line())
    assert list(line) == ["source", "version", "ranks", "ttft_s", "e2e_s", "itl_s", "queue_s"]
    assert list(line["ranks"][0]) == [
        "dp_rank", "running", "queued", "max_running", "token_usage", "gen_throughput", "accept_length",
        "mamba_usage",
    ]  # fmt: skip
    assert list(line["ttft_s"]) == ["p50", "p90", "p99", "count", "window"]


def test_metrics_off_reads_loads_and_hides_0511_zeros() -> None:
    loads = parse_loads(loads_0511())
    figures = from_loads(loads)
    assert figures.source == "loads" and figures.version == "0.5.11"
    assert [(r.dp_rank, r.running, r.queued, r.max_running) for r in figures.ranks] == [
        (0, 5, 2, 48),
        (1, 3, 0, 48),
    ]
    for r in figures.ranks:
        # 0.5.11 sends gen_throughput and cache_hit_rate as 0 without metrics: not shown as 0
        assert r.gen_throughput is None and r.cache_hit_rate is None
        assert r.accept_length == 2.6 and r.token_usage == 0.25
        assert (r.aborted, r.retracted, r.mamba_usage) == (None, None, None)
    assert (figures.ttft_s, figures.e2e_s, figures.itl_s, figures.queue_s) == (None, None, None, None)
    assert json.loads(figures.json_line())["ranks"][0]["gen_throughput"] is None


def test_metrics_off_takes_throughput_from_server_info() -> None:
    figures = from_loads(parse_loads(loads_0523()), parse_server_info(server_info("0.5.23", ranks=1)))
    rank = figures.ranks[0]
    assert (rank.running, rank.queued, rank.max_running, rank.gen_throughput) == (4, 1, 64, 123.5)
    assert rank.accept_length == 2.5  # /server_info's avg_spec_accept_length; this load had no spec section


def test_summed_buckets_step_over_missing_bounds() -> None:
    inf = math.inf
    assert sum_buckets([((1.0, 1.0), (inf, 2.0)), ((2.0, 3.0), (inf, 3.0))]) == (
        (1.0, 1.0), (2.0, 4.0), (inf, 5.0)
    )  # fmt: skip
    assert sum_buckets([]) is None
    assert latency(((1.0, 0.0), (inf, 0.0)), "60s") is None


def test_malformed_series_are_left_out() -> None:
    name = families("0.5.23")["itl"].name
    text = f'{name}_bucket{{le="x"}} 1\n{name}_bucket{{le="1.0",a="b"}} 1\n'
    assert histogram_series(expo(text), families("0.5.23")["itl"]) == ()


def test_windows_from_a_history_of_pages() -> None:
    family = families("0.5.23")["ttft"]
    history = HistogramHistory()
    before = expo(page("0.5.23"))
    for key, buckets in histogram_series(before, family):
        history.add(100.0, key, buckets)
    # one more observation of 0.15 s in the streaming series, 30 s later
    bumped = []
    for key, buckets in histogram_series(before, family):
        if ("is_streaming", "true") in key:
            buckets = tuple((le, n + (1 if le >= 0.2 else 0)) for le, n in buckets)
        bumped.append((key, buckets))
    for key, buckets in bumped:
        history.add(130.0, key, buckets)
    last_minute = windowed(history, 130.0, 60)
    assert last_minute is not None and last_minute.count == 1 and last_minute.window == "60s"
    assert last_minute.p50 is not None and 0.1 < last_minute.p50 <= 0.2
    figures = with_latencies(from_metrics(before, version="0.5.23"), last_minute, None, None, None)
    assert figures.ttft_s == last_minute and figures.e2e_s is None
