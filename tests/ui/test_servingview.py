"""The serving strip's line and the serving screen's rows, without Textual (ui/models/servingview.py): the
figures of six minutes of polls (tests/ui/servingshot.py), a stale poll, metrics off, a value not
collected, and the accept length tune measured for the profile."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from gdnconsole.config.hosts import Profile, Speculative
from gdnconsole.host.servingfeed import ServingFeed
from gdnconsole.host.servingpoll import LOADS, METRICS, EndpointReply, ServingRound
from gdnconsole.sglang import decodepoints
from gdnconsole.tune.grid import Combo
from gdnconsole.tune.store import TuneStore
from gdnconsole.ui.models import servingview as view
from tests.sglang.servingdata import loads_0523
from tests.ui.servingshot import Clock, fed, load_at, rounds, tuned_store

PROFILE = Profile(name="qwen36-mtp", model="Qwen/Qwen3.6-27B", tp=2)


def strip(feed: ServingFeed | None, width: int | None = None, server_up: bool = True) -> str | None:
    line = view.strip_line(feed, server_up, width)
    return None if line is None else view.plain(line)


def test_the_strip_says_load_pool_rate_ttft_accept_and_source() -> None:
    assert strip(fed()) == (
        "serving 71/96 · queue 7 · mamba 61% binds · 2233 tok/s · TTFT p90 2.0 s (1m) · accept 2.91 · /metrics"
    )


def test_the_strip_is_hidden_without_a_server_or_figures() -> None:
    assert strip(None) is None
    assert strip(ServingFeed(version="0.5.23")) is None  # polled, nothing came yet
    assert strip(fed(), server_up=False) is None


def test_a_stale_poll_says_its_age_and_why() -> None:
    line = view.strip_line(fed(stale_s=12.0), True)
    assert line is not None
    assert view.plain(line).endswith(" · /metrics · stale 12.0 s: /metrics: timed out after 2.0 s")
    assert line[-1].tone == "warn"


def test_a_narrow_strip_keeps_the_load_and_the_stale_mark_first() -> None:
    assert (
        strip(fed(stale_s=12.0), 78)
        == "serving 71/96 · queue 7 · stale 12.0 s: /metrics: timed out after 2.0 s"
    )
    assert strip(fed(stale_s=12.0), 70) == "serving 71/96 · stale 12.0 s: /metrics: timed out after 2.0 s"
    assert strip(fed(), 60) == "serving 71/96 · queue 7 · mamba 61% binds · 2233 tok/s"
    text = strip(fed(), 200)
    assert text is not None and text.endswith("/metrics")


def test_metrics_off_has_no_latency_and_no_zero_that_means_not_collected() -> None:
    feed = ServingFeed(version="0.5.23", clock=Clock())
    body = json.dumps(loads_0523())
    off = EndpointReply(METRICS, 404, '{"detail":"Not Found"}', 1.0, None, False)
    feed.take(ServingRound(1.0, "127.0.0.1", 30000, (off, EndpointReply(LOADS, 200, None, 1.0, body, False))))
    # /v1/loads' gen_throughput reads 0 without metrics: not shown; no latency; the source named.
    assert strip(feed) == "serving 4/64 · queue 1 · KV 2% binds · /v1/loads"
    assert view.latency_rows(feed) is None
    assert view.no_latency_words(feed) == (
        "no latencies from /v1/loads (metrics off): the server needs --enable-metrics"
    )


def test_a_rank_that_does_not_say_running_reads_a_dash() -> None:
    feed = fed()
    assert feed.figures is not None
    blank = [dataclasses.replace(r, running=None, queued=None) for r in feed.figures.ranks]
    assert view.running_text(blank) == "—"
    feed.figures = dataclasses.replace(feed.figures, ranks=tuple(blank))
    text = strip(feed)
    assert text is not None and text.startswith("serving — · queue — · ")


def test_latencies_over_one_and_five_minutes_side_by_side() -> None:
    rows = view.latency_rows(fed())
    assert rows is not None
    assert [r.name for r in rows] == ["TTFT", "ITL", "end-to-end", "queue"]
    ttft = rows[0].cells
    assert ttft == ("1.3 s", "2.0 s", "3.8 s", "72", "658 ms", "1.7 s", "3.4 s", "216")
    # The burst of the last minute is slower than the five minutes around it.
    assert rows[2].cells[1] == "36.2 s" and rows[2].cells[5] == "28.6 s"


def test_a_window_without_requests_reads_dashes_not_zero_seconds() -> None:
    feed = fed(count=2)  # 5 s of polls: the first round is the window's start
    rows = view.latency_rows(feed)
    assert rows is not None
    assert all(cell != "0 ms" for row in rows for cell in row.cells)
    assert view.latency_cells(None) == ("—", "—", "—", "0")


def test_the_rank_rows_are_the_serving_command_s_cells() -> None:
    feed = fed()
    assert feed.figures is not None
    assert view.rank_rows(feed.figures) == (
        ("0", "34/48", "6", "42%", "58%", "mamba", "1070.0", "61%", "2.89", "2", "0"),
        ("1", "37/48", "1", "44%", "61%", "mamba", "1163.0", "58%", "2.92", "—", "1"),
    )
    assert view.status_line(feed) == "SGLang 0.5.23 · from /metrics · 2 DP ranks · 1.2 s old"


def test_histories_leave_out_points_not_collected() -> None:
    assert view.known([1.0, None, 3.0]) == [1.0, 3.0]
    feed = fed(count=5)
    assert view.known(feed.running) == [float(sum(load_at(i).running)) for i in range(5)]


def test_tune_s_best_when_the_profile_has_no_speculative_flags(tmp_path: Path) -> None:
    tuned_store(tmp_path, "ct129", PROFILE)
    tuned = view.tuned_accept(TuneStore("ct129", tmp_path).sweeps(), PROFILE, "python3")
    assert tuned is not None and tuned.which == "best"
    assert (
        tuned.words
        == f"{tuned.accept_length:.2f} measured by tune (tune's best: {tuned.combo.label}, batch 1)"
    )


def test_the_profile_s_own_combination_first(tmp_path: Path) -> None:
    tuned_store(tmp_path, "ct129", PROFILE)
    spec = Speculative(algorithm="NEXTN", num_steps=3, eagle_topk=1, num_draft_tokens=4)
    crashed = dataclasses.replace(PROFILE, speculative=spec)  # s3 k1 d4 crashed in that sweep
    ours = dataclasses.replace(
        PROFILE, speculative=dataclasses.replace(spec, num_steps=1, num_draft_tokens=2)
    )
    sweeps = TuneStore("ct129", tmp_path).sweeps()
    tuned = view.tuned_accept(sweeps, ours, "python3")
    assert tuned is not None and (tuned.which, tuned.combo) == ("these flags", Combo(1, 1, 2))
    best = view.tuned_accept(sweeps, crashed, "python3")
    assert best is not None and best.which == "best"


def test_a_sweep_of_the_profile_before_an_edit_is_not_its_figure(tmp_path: Path) -> None:
    """Same name, other flags (here the memory split): tune measured another server."""
    tuned_store(tmp_path, "ct129", PROFILE)
    edited = dataclasses.replace(PROFILE, mem_fraction=0.8)
    assert view.tuned_accept(TuneStore("ct129", tmp_path).sweeps(), edited, "python3") is None
    other_model = dataclasses.replace(PROFILE, model="Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert view.tuned_accept(TuneStore("ct129", tmp_path).sweeps(), other_model, "python3") is None


def test_no_sweep_of_this_profile_says_so(tmp_path: Path) -> None:
    tuned_store(tmp_path, "ct129", dataclasses.replace(PROFILE, name="another"))
    assert view.tuned_accept(TuneStore("ct129", tmp_path).sweeps(), PROFILE, "python3") is None
    feed = fed()
    assert view.accept_words(feed.figures, None) == ("2.91 live", "no tune sweep of this profile as it is")
    assert view.accept_words(None, None)[0].startswith("— live")


def test_the_rounds_are_deterministic() -> None:
    assert [r.replies[0].body for r in rounds(3)] == [r.replies[0].body for r in rounds(3)]


def test_when_polls_fail_the_log_stands_in_and_says_so() -> None:

    point = decodepoints.parse(
        "[2026-07-14 10:40:24] Decode batch, #running-req: 2, #full token: 21312, full token usage: 0.01, "
        "mamba num: 8, mamba usage: 0.05, accept len: 3.36, accept rate: 0.79, cuda graph: True, "
        "gen throughput (token/s): 551.63, #queue-req: 0"
    )
    assert point is not None
    feed = ServingFeed(version="0.5.23")
    feed.take(
        ServingRound(
            1.0, "127.0.0.1", 30000, (EndpointReply("/metrics", None, "timed out", 1.0, None, False),)
        )
    )
    feed.take_log(point)
    assert feed.figures is not None and feed.figures.source == "log"
    line = view.strip_line(feed, True)
    assert line is not None
    text = view.plain(line)
    assert "log" in text and "552 tok/s" in text
    assert view.stale_text(feed) == "polls fail (/metrics: timed out): the log's last Decode line"
