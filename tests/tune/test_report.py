"""The sweep's results for people, from a sweep built by hand (no server): the chart's baseline mark."""

from __future__ import annotations

from gdnconsole.tune import report
from gdnconsole.tune.grid import Combo
from gdnconsole.tune.results import BatchFigures, ComboResult, Identity, set_speedups
from gdnconsole.tune.sweep import Sweep

IDENTITY = Identity("simbox", "0.5.11", "Qwen/Qwen3.6-27B", ["NVIDIA RTX A6000"], "chat@abc", "f00", 64)


def figures(batch: int, tokens_per_s: float) -> BatchFigures:
    return BatchFigures(batch, 4, tokens_per_s, None, 6.0, 7.0, 8.0, None, None, None)


def result(combo: Combo | None, rates: dict[int, float], status: str = "measured") -> ComboResult:
    return ComboResult(combo, status, by_batch={b: figures(b, r) for b, r in rates.items()})  # type: ignore[arg-type]


def a_sweep() -> Sweep:
    sweep = Sweep(IDENTITY, (1, 4))
    sweep.results = [
        result(None, {1: 400.0, 4: 1400.0}),
        result(Combo(2, 1, 3), {1: 600.0, 4: 2000.0}),
        result(Combo(1, 1, 2), {1: 300.0, 4: 1000.0}),
        result(Combo(2, 2, 300), {}, "rejected"),
    ]
    set_speedups(sweep.baseline, sweep.results)
    return sweep


def test_the_chart_draws_the_baseline_mark_in_every_row_of_each_series() -> None:
    lines = report.chart_lines(a_sweep(), width=40)
    assert lines[0] == "batch 1 (█: tokens/s; | the baseline)" and lines[5].startswith("batch 4")
    for series, top in ((lines[1:5], 600.0), (lines[6:10], 2000.0)):
        base = 400.0 if top == 600.0 else 1400.0
        column = len("  ") + len("s2 k2 d300") + 1 + round(base / top * 40) - 1  # the longest label
        for line in series:
            assert line[column] == "|", line  # over a faster bar's fill, after a slower one, on an empty one
        assert series[0][column - 1] != "|" and series[1][column + 1] == series[1][column - 1]
