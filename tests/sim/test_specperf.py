"""The simulator's performance model (gdnsim/server/specperf.py): speculation pays, acceptance falls per
step, bigger trees and bigger batches erode the gain, and a sweep over the usual grid has its optimum
inside the grid. Pure arithmetic on the model; the measured side is in tests/tune."""

from __future__ import annotations

import itertools

from tests.simmodules import import_sim

specperf = import_sim("gdnsim.server.specperf")
Spec, SpecPerf = specperf.Spec, specperf.SpecPerf
BASE = SpecPerf(None, 40.0)


def speedup(steps: int, topk: int, draft: int, batch: int) -> float:
    model = SpecPerf(Spec(steps, topk, draft, overlap=topk == 1), 40.0)
    return float(model.expected_tokens_per_s(batch) / BASE.expected_tokens_per_s(batch))


def test_without_speculation_one_request_decodes_at_tokens_per_s() -> None:
    assert BASE.expected_accept_length() == 1.0
    assert abs(BASE.expected_tokens_per_s(1) - 40.0) < 1e-9


def test_acceptance_falls_per_extra_step() -> None:
    probs = SpecPerf(Spec(4, 1, 5), 40.0).accept_probs()
    assert len(probs) == 4 and all(a > b for a, b in itertools.pairwise(probs))


def test_the_optimum_of_the_usual_grid_is_inside_it() -> None:
    for batch in (1, 8):
        rates = {steps: speedup(steps, 1, steps + 1, batch) for steps in (1, 2, 3)}
        assert max(rates, key=rates.__getitem__) == 2, rates
        assert min(rates.values()) > 1.0


def test_batch_size_erodes_the_gain_and_trees_cost_more() -> None:
    assert speedup(2, 1, 3, 1) > speedup(2, 1, 3, 8) > speedup(2, 1, 3, 16)
    assert speedup(2, 4, 8, 8) < speedup(2, 1, 3, 8)


def test_draws_follow_the_model_and_the_seed() -> None:
    spec = Spec(2, 1, 3)
    a, b = SpecPerf(spec, 40.0), SpecPerf(spec, 40.0)
    draws = [a.draw_accepted() for _ in range(4000)]
    assert draws[:50] == [b.draw_accepted() for _ in range(50)]  # same flags, same noise
    mean = sum(draws) / len(draws)
    assert abs(mean - a.expected_accept_length()) < 0.05
    assert set(draws) <= {1, 2, 3}
