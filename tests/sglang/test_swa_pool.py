"""A sliding-window model's pool: the SWAKVPool line tells the console the pool exists, so its usage is
shown, never SGLang's 0 for a pool the model lacks; the Decode line's SWA words are read the same way in
both versions (0511 managers/scheduler_runtime_checker_mixin.py:70-95, 0523 managers/
scheduler_components/pool_stats_observer.py:104-135)."""

from __future__ import annotations

import pytest

from gdnconsole.host.servingwatch import pools_of
from gdnconsole.sglang import decodepoints, events
from gdnconsole.sglang.servingfigures import from_decode
from gdnconsole.sglang.tracker import StageTracker

# 0511 mem_cache/swa_memory_pool.py:97 and 0523 :132 (after graph capture 0.5.23 says "VA upper bound")
SWA_LINES = [
    "SWAKVPool mem usage: 3.21 GB, swa size: 65536, full size: 262144",
    "SWAKVPool VA upper bound: 3.21 GB, swa size: 65536, full size: 262144",
]
DECODE = (
    "[2026-12-02 10:00:05 TP0] Decode batch, #running-req: 7, #full token: 5120, full token usage: 0.02, "
    "#swa token: 4096, swa token usage: 0.06, cuda graph: True, gen throughput (token/s): 812.40, "
    "#queue-req: 2"
)


@pytest.mark.parametrize("text", SWA_LINES)
def test_the_pool_line_is_a_memory_event_with_the_window_s_size(text: str) -> None:
    assert events.numbers_of("swa_alloc", text)["swa_tokens"] == 65536
    [event] = [e for e in StageTracker().feed(f"[2026-12-02 10:00:01 TP0] {text}") if e.kind == "swa_alloc"]
    assert event.numbers["swa_tokens"] == 65536


def test_a_startup_that_sized_the_window_pool_has_it() -> None:
    tracker = StageTracker()
    tracker.feed(f"[2026-12-02 10:00:01 TP0] {SWA_LINES[0]}")
    assert pools_of(tracker.current) == frozenset({"swa"})
    assert pools_of(StageTracker().current) == frozenset()


def test_the_decode_line_s_window_usage_reaches_the_figures() -> None:
    point = decodepoints.parse(DECODE)
    assert point is not None
    assert (point.token_usage, point.swa_usage, point.running, point.queued) == (0.02, 0.06, 7, 2)
    figures = from_decode(point, "0.5.23")
    [rank] = figures.ranks
    assert (rank.token_usage, rank.swa_usage, rank.mamba_usage) == (0.02, 0.06, None)
    [shown] = figures.to_json()["ranks"]  # type: ignore[index]
    assert shown["swa_usage"] == 0.06 and "mamba_usage" not in shown
