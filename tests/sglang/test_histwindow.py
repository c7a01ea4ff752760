"""histwindow: Prometheus' histogram_quantile by hand-worked cases, and windows of scrapes (resets, new
series, memory). The same maths against a real Prometheus: test_histwindow_prometheus.py."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gdnconsole.sglang.histwindow import Buckets, HistogramError, HistogramHistory, count, quantile

INF = math.inf
A = (("is_streaming", "true"),)
B = (("is_streaming", "false"),)


def hist(*counts: float, bounds: tuple[float, ...] = (0.1, 1.0, 10.0)) -> Buckets:
    """Cumulative buckets over ``bounds`` and +Inf."""
    return tuple(zip((*bounds, INF), counts, strict=True))


# --- quantile: promql/quantile.go's cases ---------------------------------------------------------------


def test_interpolates_linearly_inside_the_bucket() -> None:
    # 10 observations: 2 in (0, 0.1], 6 in (0.1, 1], 2 in (1, 10]. Rank 5 is 3/6 into (0.1, 1].
    assert quantile(0.5, hist(2, 8, 10, 10)) == pytest.approx(0.1 + 0.9 * 3 / 6)
    assert quantile(0.9, hist(2, 8, 10, 10)) == pytest.approx(1 + 9 * 1 / 2)


def test_the_first_bucket_starts_at_zero_when_its_bound_is_positive() -> None:
    assert quantile(0.25, hist(4, 4, 4, 4)) == pytest.approx(0.025)
    assert quantile(0.0, hist(4, 4, 4, 4)) == 0.0


def test_a_first_bucket_at_or_below_zero_is_its_bound() -> None:
    assert quantile(0.1, hist(5, 10, 10, bounds=(-1.0, 1.0))) == -1.0
    assert quantile(0.1, hist(5, 10, 10, bounds=(0.0, 1.0))) == 0.0


def test_the_inf_bucket_answers_the_highest_finite_bound() -> None:
    assert quantile(0.99, hist(1, 1, 1, 10)) == 10.0
    assert quantile(1.0, hist(1, 2, 3, 4)) == 10.0


def test_q_out_of_range_and_nan() -> None:
    for buckets in (hist(1, 2, 3, 4), hist(0, 0, 0, 0), ()):
        assert quantile(-0.01, buckets) == -INF
        assert quantile(1.01, buckets) == INF
        assert math.isnan(quantile(math.nan, buckets) or 0.0)


def test_nothing_observed_is_none() -> None:
    assert quantile(0.5, hist(0, 0, 0, 0)) is None
    assert quantile(0.5, ()) is None


def test_under_two_buckets_or_no_inf_is_nan() -> None:
    assert math.isnan(quantile(0.5, ((INF, 3.0),)) or 0.0)
    assert math.isnan(quantile(0.5, ((0.1, 1.0), (1.0, 3.0))) or 0.0)
    # Two +Inf buckets coalesce into one: still under two.
    assert math.isnan(quantile(0.5, ((INF, 1.0), (INF, 2.0))) or 0.0)


def test_order_does_not_matter_and_equal_bounds_add_up() -> None:
    ordered = hist(2, 8, 10, 10)
    assert quantile(0.5, tuple(reversed(ordered))) == quantile(0.5, ordered)
    split = ((0.1, 1.0), (0.1, 1.0), (1.0, 8.0), (10.0, 10.0), (INF, 10.0))
    assert quantile(0.5, split) == quantile(0.5, ordered)


def test_non_monotonic_counts_are_raised_to_the_envelope() -> None:
    # ensureMonotonic: 8, 5 -> 8, 8.
    assert quantile(0.9, hist(2, 8, 5, 10)) == quantile(0.9, hist(2, 8, 8, 10))
    assert quantile(0.9, hist(2, 8, 5, 10)) == 10.0


def test_nan_counts_follow_go_binary_search() -> None:
    # A NaN +Inf count: observations is NaN, no bucket reaches the NaN rank, so the highest finite bound.
    assert quantile(0.5, hist(1, 2, 3, math.nan)) == 10.0


def test_q_zero_over_an_empty_first_bucket_is_nan_as_in_go() -> None:
    # rank 0 lands in the first bucket, whose count 0 makes 0/0: NaN in Prometheus, not an exception.
    assert math.isnan(quantile(0.0, hist(0, 1, 1, 1)) or 0.0)
    assert quantile(0.0, hist(1, 1, 1, 1)) == 0.0


def test_count_is_the_inf_bucket() -> None:
    assert count(hist(1, 2, 3, 7)) == 7
    assert count(()) == 0


monotonic = st.lists(st.integers(0, 50), min_size=4, max_size=4).map(
    lambda xs: hist(*[float(sum(xs[: i + 1])) for i in range(4)])
)


@given(monotonic, st.floats(0, 1), st.floats(0, 1))
def test_quantile_grows_with_q_and_stays_inside_the_bounds(buckets: Buckets, p: float, q: float) -> None:
    p, q = max(p, 1e-9), max(q, 1e-9)  # q = 0 can be NaN (the test above)
    low, high = quantile(min(p, q), buckets), quantile(max(p, q), buckets)
    if count(buckets) == 0:
        assert low is None and high is None
        return
    assert low is not None and high is not None
    assert 0 <= low <= high <= 10.0


# --- HistogramHistory: windows ---------------------------------------------------------------------------


def test_a_window_is_the_increase_between_its_first_and_last_scrape() -> None:
    history = HistogramHistory()
    history.add(0, A, hist(1, 1, 1, 1))
    history.add(30, A, hist(2, 4, 4, 4))
    history.add(60, A, hist(3, 6, 8, 9))
    assert history.window(60, 60) == hist(2, 5, 7, 8)
    assert history.window(60, 30) == hist(1, 2, 4, 5)
    # A window ending earlier does not see later scrapes.
    assert history.window(30, 30) == hist(1, 3, 3, 3)


def test_nothing_scraped_twice_in_the_window_is_none() -> None:
    history = HistogramHistory()
    assert history.window(0, 60) is None
    history.add(0, A, hist(1, 1, 1, 1))
    assert history.window(0, 60) is None
    history.add(100, A, hist(2, 2, 2, 2))
    assert history.window(100, 60) is None  # the scrape at 0 is outside


def test_scraped_but_nothing_observed_is_zero_counts_and_no_quantile() -> None:
    history = HistogramHistory()
    history.add(0, A, hist(1, 2, 3, 4))
    history.add(10, A, hist(1, 2, 3, 4))
    window = history.window(10, 60)
    assert window == hist(0, 0, 0, 0)
    assert window is not None and count(window) == 0 and quantile(0.5, window) is None


def test_a_drop_is_a_restart_and_what_follows_is_new() -> None:
    history = HistogramHistory()
    history.add(0, A, hist(5, 5, 9, 9))
    history.add(10, A, hist(6, 7, 11, 12))  # +1 +2 +2 +3
    history.add(20, A, hist(0, 1, 1, 2))  # restarted: 0 1 1 2 are new
    history.add(30, A, hist(1, 2, 2, 3))  # +1 +1 +1 +1
    assert history.window(30, 30) == hist(1 + 0 + 1, 2 + 1 + 1, 2 + 1 + 1, 3 + 2 + 1)


def test_a_restart_seen_by_some_buckets_only_is_counted_per_bucket_as_prometheus_does() -> None:
    history = HistogramHistory()
    history.add(0, A, hist(5, 5, 5, 5))
    history.add(10, A, hist(1, 1, 1, 20))  # the low buckets dropped (new: 1); +Inf grew (by 15)
    assert history.window(10, 10) == hist(1, 1, 1, 15)


def test_series_are_summed_by_bound_and_filtered() -> None:
    history = HistogramHistory()
    for at, n in ((0, 0), (10, 2)):
        history.add(at, A, hist(n, n, n, n))
        history.add(at, B, hist(0, n, 2 * n, 2 * n))
    assert history.window(10, 10) == hist(2, 4, 6, 6)
    assert history.window(10, 10, lambda key: dict(key)["is_streaming"] == "false") == hist(0, 2, 4, 4)
    assert history.window(10, 10, lambda key: False) is None


def test_series_with_other_bounds_sum_over_every_bound() -> None:
    history = HistogramHistory()
    for at, n in ((0, 0.0), (10, 2.0)):
        history.add(at, A, ((1.0, n), (INF, n)))
        history.add(at, B, ((2.0, n), (INF, n)))
    assert history.window(10, 10) == ((1.0, 2.0), (2.0, 2.0), (INF, 4.0))


def test_inf_only_series_count_but_have_no_quantile() -> None:
    history = HistogramHistory()
    history.add(0, A, ((INF, 1.0),))
    history.add(10, A, ((INF, 4.0),))
    window = history.window(10, 10)
    assert window == ((INF, 3.0),)
    assert count(window) == 3 and math.isnan(quantile(0.5, window) or 0.0)


# --- a series' first appearance ---------------------------------------------------------------------------


def test_a_series_appearing_after_a_scrape_counts_from_zero() -> None:
    # SGLang's labelled histograms have no series before their first request.
    history = HistogramHistory()
    history.scraped(0)
    history.add(10, A, hist(1, 2, 2, 2))
    assert history.window(10, 10) == hist(1, 2, 2, 2)
    history.add(20, A, hist(1, 3, 3, 3))
    assert history.window(20, 20) == hist(1, 3, 3, 3)
    assert history.window(20, 10) == hist(0, 1, 1, 1)  # its zero (at 0) is outside this window


def test_a_series_in_the_first_scrape_has_no_zero() -> None:
    history = HistogramHistory()
    history.add(0, A, hist(1, 2, 2, 2))
    history.add(10, B, hist(5, 5, 5, 5))  # appears after the scrape at 0: from zero
    history.add(10, A, hist(1, 2, 2, 3))
    assert history.window(10, 10) == hist(5, 5, 5, 6)


def test_new_bucket_bounds_start_the_series_again_from_zero() -> None:
    history = HistogramHistory()
    history.add(0, A, hist(4, 4, 4, 4))
    history.add(10, A, ((5.0, 1.0), (INF, 2.0)))  # another server: its counts are since it started
    assert history.window(10, 10) == ((5.0, 1.0), (INF, 2.0))


# --- resets never go negative (properties) --------------------------------------------------------------

scrape = st.tuples(st.booleans(), st.lists(st.integers(0, 20), min_size=4, max_size=4))


@given(st.lists(scrape, min_size=1, max_size=30), st.integers(1, 300))
def test_no_window_is_ever_negative(scrapes: list[tuple[bool, list[int]]], seconds: int) -> None:
    history = HistogramHistory()
    totals = [0, 0, 0, 0]
    for at, (restart, adds) in enumerate(scrapes):
        totals = [0, 0, 0, 0] if restart else totals
        per_bucket = [sum(adds[: i + 1]) for i in range(4)]
        totals = [t + a for t, a in zip(totals, per_bucket, strict=True)]
        history.add(float(at * 10), A, hist(*map(float, totals)))
        window = history.window(float(at * 10), float(seconds))
        if window is not None:
            assert all(value >= 0 for _, value in window)
            q = quantile(0.9, window)
            assert q is None or 0 <= q <= 10.0


@given(st.lists(st.lists(st.integers(0, 20), min_size=4, max_size=4), min_size=2, max_size=30))
def test_without_restarts_a_window_is_last_minus_first(adds: list[list[int]]) -> None:
    history = HistogramHistory()
    totals = [0.0] * 4
    first: list[float] = []
    for at, step in enumerate(adds):
        totals = [t + sum(step[: i + 1]) for i, t in enumerate(totals)]
        first = first or list(totals)
        history.add(float(at), A, hist(*totals))
    window = history.window(float(len(adds) - 1), float(len(adds) - 1))
    assert window == hist(*(t - f for t, f in zip(totals, first, strict=True)))


# --- memory ----------------------------------------------------------------------------------------------


def test_memory_holds_the_horizon_and_no_more() -> None:
    history = HistogramHistory(horizon=300)
    for at in range(10_000):
        history.add(float(at), A, hist(at, at, at, at))
        if at < 5_000:
            history.add(float(at), B, hist(at, at, at, at))
    assert len(history) == 301  # seconds 9699..9999; B's scrapes all gone
    assert history.series == {A}
    assert history.window(9999, 300) == hist(300, 300, 300, 300)


# --- bad input: one specific error each --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("buckets", "says"),
    [
        ((), r"no \+Inf bucket"),
        (((1.0, 1.0),), r"no \+Inf bucket"),
        (((1.0, 1.0), (0.5, 1.0), (INF, 1.0)), "not sorted"),
        (((1.0, 1.0), (1.0, 1.0), (INF, 1.0)), "not sorted"),
        (((math.nan, 1.0), (INF, 1.0)), "not sorted"),
        (((1.0, -1.0), (INF, 1.0)), "negative or not finite"),
        (((1.0, math.nan), (INF, 1.0)), "negative or not finite"),
        (((1.0, 1.0), (INF, INF)), "negative or not finite"),
    ],
)
def test_buckets_that_are_no_histogram_are_refused(buckets: Buckets, says: str) -> None:
    with pytest.raises(HistogramError, match=says):
        HistogramHistory().add(0, A, buckets)


def test_time_must_go_forward_and_be_finite() -> None:
    history = HistogramHistory()
    history.add(10, A, hist(1, 1, 1, 1))
    with pytest.raises(HistogramError, match="already read at 10"):
        history.add(10, A, hist(1, 1, 1, 1))
    with pytest.raises(HistogramError, match="older than the last one"):
        history.add(5, B, hist(1, 1, 1, 1))
    with pytest.raises(HistogramError, match="finite"):
        history.scraped(math.nan)


def test_windows_and_horizons_out_of_range_are_refused() -> None:
    with pytest.raises(HistogramError, match="horizon"):
        HistogramHistory(horizon=0)
    with pytest.raises(HistogramError, match="horizon"):
        HistogramHistory(horizon=math.nan)
    history = HistogramHistory(horizon=60)
    for seconds in (0.0, -1.0, 61.0, math.nan):
        with pytest.raises(HistogramError, match="window"):
            history.window(0, seconds)
    with pytest.raises(HistogramError, match="finite"):
        history.window(math.inf, 60)
