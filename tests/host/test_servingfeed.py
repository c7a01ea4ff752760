"""The serving feed: rounds of the agent's poll in, figures, windowed latencies and histories out.

Pages are SGLang's own exposition text (tests/sglang/data holds one captured from each wheel's collectors)
or a small page written here with SGLang's 0.5.23 names and a TTFT histogram whose counts the test sets.
"""

from __future__ import annotations

import json
from typing import Any

from gdnconsole.host.servingfeed import ServingFeed
from gdnconsole.host.servingpoll import LOADS, METRICS, SERVER_INFO, EndpointReply, ServingRound
from gdnconsole.host.servingwatch import Ask, quiet_paths
from tests.sglang.servingdata import loads_0523, page, server_info

BOUNDS = ("0.1", "0.5", "1.0", "+Inf")


def ttft_page(cumulative: tuple[int, int, int, int], running: int = 2) -> str:
    """A 0.5.23 page: one rank's running gauge and a TTFT histogram with these cumulative counts."""
    labels = 'engine_type="unified",is_streaming="true",model_name="m"'
    lines = [
        "# TYPE sglang:num_running_reqs gauge",
        f'sglang:num_running_reqs{{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"}} {running}.0',
        "# TYPE sglang:time_to_first_token_seconds histogram",
    ]
    lines += [
        f'sglang:time_to_first_token_seconds_bucket{{{labels},le="{le}"}} {n}.0'
        for le, n in zip(BOUNDS, cumulative, strict=True)
    ]
    lines += [
        f"sglang:time_to_first_token_seconds_count{{{labels}}} {cumulative[-1]}.0",
        f"sglang:time_to_first_token_seconds_sum{{{labels}}} 1.0",
    ]
    return "\n".join(lines) + "\n"


def reply(path: str, status: int | None, body: str | None = None, error: str | None = None) -> EndpointReply:
    return EndpointReply(path, status, error, 1.0, body, False)


def round_at(t: float, *replies: EndpointReply) -> ServingRound:
    return ServingRound(t, "127.0.0.1", 30000, replies)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def info_reply(version: str = "0.5.23", ranks: int = 1) -> EndpointReply:
    return reply(SERVER_INFO, 200, json.dumps(server_info(version, ranks)))


def test_a_captured_page_gives_each_dp_rank_and_latencies_since_start() -> None:
    feed = ServingFeed(version="0.5.23")
    feed.take(round_at(1.0, reply(METRICS, 200, page("0.5.23")), info_reply(ranks=2)))
    figures = feed.figures
    assert figures is not None and figures.source == "metrics"
    assert [r.dp_rank for r in figures.ranks] == [0, 1]
    assert figures.ttft_s is not None and figures.ttft_s.window == "since start"
    assert feed.problem is None and feed.reached and feed.polls == 1


def test_metrics_off_reads_v1_loads_without_latencies() -> None:
    feed = ServingFeed(version="0.5.23")
    body: dict[str, Any] = loads_0523()
    feed.take(
        round_at(1.0, reply(METRICS, 404, '{"detail":"Not Found"}'), reply(LOADS, 200, json.dumps(body)))
    )
    figures = feed.figures
    assert figures is not None and figures.source == "loads"
    assert feed.metrics_off
    assert figures.ttft_s is None and figures.e2e_s is None  # not collected: never a 0
    assert feed.windowed(60.0) == figures


def test_windows_count_only_the_requests_inside_them() -> None:
    feed = ServingFeed(version="0.5.23")
    feed.take(round_at(0.0, reply(METRICS, 200, ttft_page((0, 0, 0, 0)))))
    feed.take(round_at(200.0, reply(METRICS, 200, ttft_page((10, 10, 10, 10)))))  # 10 fast ones, long ago
    feed.take(round_at(235.0, reply(METRICS, 200, ttft_page((10, 10, 10, 10)))))  # the window's first poll
    feed.take(round_at(290.0, reply(METRICS, 200, ttft_page((10, 10, 14, 14)))))  # then 4 slow ones
    last_minute = feed.latency("ttft", 60.0)
    assert last_minute is not None and last_minute.count == 4
    assert last_minute.p50 is not None and 0.5 < last_minute.p50 <= 1.0  # all four in (0.5, 1.0]
    five = feed.latency("ttft", 300.0)
    assert five is not None and five.count == 14
    since_start = feed.figures.ttft_s if feed.figures else None
    assert since_start is not None and since_start.count == 14


def test_a_restart_resets_counts_and_never_goes_negative() -> None:
    feed = ServingFeed(version="0.5.23")
    feed.take(round_at(0.0, reply(METRICS, 200, ttft_page((5, 5, 5, 5)))))
    feed.take(round_at(10.0, reply(METRICS, 200, ttft_page((0, 1, 1, 1)))))  # restarted, one request since
    window = feed.latency("ttft", 60.0)
    assert window is not None and window.count == 1
    assert window.p50 is not None and window.p50 > 0


def test_a_histogram_with_no_series_yet_is_none_not_zero() -> None:
    feed = ServingFeed(version="0.5.23")
    gauge_only = ttft_page((0, 0, 0, 0)).split("# TYPE sglang:time_to_first_token_seconds")[0]
    feed.take(round_at(0.0, reply(METRICS, 200, gauge_only)))
    assert feed.figures is not None and feed.figures.ttft_s is None
    assert feed.latency("ttft", 60.0) is None


def test_a_failed_round_keeps_the_last_figures_and_says_why_and_how_old() -> None:
    clock = Clock()
    feed = ServingFeed(version="0.5.23", clock=clock)
    feed.take(round_at(0.0, reply(METRICS, 200, ttft_page((1, 1, 1, 1)))))
    first = feed.figures
    clock.now += 12.0
    feed.take(round_at(12.0, reply(METRICS, None, error="timed out after 2 s")))
    assert feed.figures is first
    assert feed.problem == "/metrics: timed out after 2 s"
    assert feed.age() == 12.0 and not feed.reached


def test_hostile_pages_are_a_problem_not_a_traceback() -> None:
    feed = ServingFeed(version="0.5.23")
    feed.take(round_at(0.0, reply(METRICS, 200, "sglang:x{le=\x1b[2J"), reply(LOADS, 200, "not json")))
    assert feed.figures is None and feed.problem is not None


def test_histories_and_the_summary_for_the_journal() -> None:
    feed = ServingFeed(version="0.5.23")
    for t, running in ((0.0, 2), (1.0, 7), (2.0, 3)):
        feed.take(round_at(t, reply(METRICS, 200, ttft_page((1, 2, 3, 3), running=running))))
    assert list(feed.running) == [2.0, 7.0, 3.0]
    summary = feed.summary()
    assert summary.peak_running == 7 and summary.polls == 3
    assert summary.ttft_p90_s is not None


def test_the_access_log_flag_decides_the_poll_interval() -> None:
    paths = ("/metrics", "/server_info")
    assert quiet_paths(
        ["--uvicorn-access-log-exclude-prefixes", "/metrics", "/server_info", "--tp", "2"], paths
    )
    assert quiet_paths(["--uvicorn-access-log-exclude-prefixes", "/"], paths)
    assert not quiet_paths(["--uvicorn-access-log-exclude-prefixes", "/metrics"], paths)
    assert not quiet_paths(["--tp", "2"], paths)
    assert not quiet_paths(["--uvicorn-access-log-exclude-prefixes"], paths)  # nargs='*': none excluded


def test_an_ask_is_the_agents_request() -> None:
    ask = Ask("127.0.0.1", 30000, 1.0, ("/metrics",), None)
    assert ask.message() == {
        "op": "serving",
        "host": "127.0.0.1",
        "port": 30000,
        "interval": 1.0,
        "paths": ["/metrics"],
        "api_key": None,
    }


def test_a_page_that_repeats_a_bound_is_said_not_raised() -> None:
    feed = ServingFeed(version="0.5.23")
    page_text = ttft_page((1, 1, 1, 1)).replace('le="0.5"', 'le="1"')  # bounds 0.1, 1, 1.0, +Inf
    feed.take(round_at(0.0, reply(METRICS, 200, page_text)))
    assert feed.unread is not None and feed.unread.startswith("/metrics:")
    assert feed.figures is not None  # the gauges are read all the same
