"""The plan: SGLang's rules over each combination, and the combinations SGLang would run identically
once it has made its adjustments, found before anything is launched."""

from __future__ import annotations

from gdnconsole.config.hosts import Profile, Speculative
from gdnconsole.host.state import HostFacts
from gdnconsole.tune.grid import Combo, parse_grid
from gdnconsole.tune.plan import plan

FACTS = HostFacts("0.5.11", "8.6", 2)
PROFILE = Profile(
    name="final",
    model="Qwen/Qwen3.6-27B",
    tp=2,
    args=("--mamba-scheduler-strategy", "extra_buffer"),
    speculative=Speculative(algorithm="NEXTN", num_steps=3, eagle_topk=1, num_draft_tokens=4),
)


def test_combinations_sglang_runs_identically_are_planned_once() -> None:
    planned = plan(FACTS, PROFILE, parse_grid("num_steps=1,2 eagle_topk=1,4 num_draft_tokens=2,3"))
    order = [
        (p.combo.label if p.combo else "baseline", p.same_as.label if p.same_as else None) for p in planned
    ]
    assert order == [
        ("baseline", None),
        ("s1 k1 d2", None),  # what SGLang runs for s1 k1 d3 too (topk 1: num steps + 1 draft tokens)
        ("s1 k1 d3", "s1 k1 d2"),
        ("s1 k4 d2", None),  # topk 4: the draft tokens are kept, two servers
        ("s1 k4 d3", None),
        ("s2 k1 d3", None),  # the one whose flags are SGLang's comes first, where s2 k1 d2 was
        ("s2 k1 d2", "s2 k1 d3"),
        ("s2 k4 d2", None),
        ("s2 k4 d3", None),
    ]
    adjusted = next(p for p in planned if p.combo == Combo(2, 1, 2))
    assert adjusted.runs_as == Combo(2, 1, 3)
    assert any("--speculative-num-draft-tokens to 3" in n for n in adjusted.notices)


def test_rejected_combinations_are_not_merged_and_an_unknown_version_merges_nothing() -> None:
    grid = parse_grid("num_steps=2 eagle_topk=2 num_draft_tokens=300,400")
    planned = plan(FACTS, PROFILE, grid)
    assert [p.rejected for p in planned[1:]] == [True, True] and not any(p.same_as for p in planned)
    unknown = plan(HostFacts(None), PROFILE, parse_grid("num_steps=2 eagle_topk=1 num_draft_tokens=2,3"))
    assert not any(p.same_as for p in unknown)  # no rules known: the launches will tell
