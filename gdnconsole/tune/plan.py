"""The grid checked first: every combination runs through the host version's rules. Those SGLang would
reject are kept with the rule and never launched; those it would adjust carry what it changes. Two
combinations that SGLang would run identically once it has made its adjustments (with ``eagle_topk`` 1
SGLang sets ``num_draft_tokens`` to ``num_steps + 1``: ``s2 k1 d2`` and ``s2 k1 d3`` are one server) are
launched once: the others are planned as the same as that one (``same_as``) and share its figures."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gdnconsole.config.hosts import Profile, Speculative
from gdnconsole.host.journal import RuleBreak
from gdnconsole.host.profilecheck import rule_break
from gdnconsole.sglang.hostfacts import HostFacts
from gdnconsole.sglang.launch import launch_spec
from gdnconsole.sglang.profilerules import check_launch
from gdnconsole.tune.grid import Combo

DEFAULT_ALGORITHM = "NEXTN"  # the profile's own algorithm when it has one


@dataclass(frozen=True)
class Planned:
    combo: Combo | None  # None: the baseline, without speculative decoding
    profile: Profile
    rule: RuleBreak | None = None  # the first rule SGLang would raise: never launched
    notices: tuple[str, ...] = ()  # what SGLang would change (NEXTN run as EAGLE, draft tokens adjusted…)
    runs_as: Combo | None = None  # the speculative settings SGLang runs with, after its adjustments
    same_as: Combo | None = None  # an earlier combination SGLang runs identically: not launched again
    server: str | None = None  # every value SGLang holds after its adjustments (what makes two the same)

    @property
    def rejected(self) -> bool:
        return self.rule is not None


def baseline_profile(profile: Profile) -> Profile:
    return dataclasses.replace(profile, speculative=Speculative())


def combo_profile(profile: Profile, combo: Combo) -> Profile:
    spec = profile.speculative
    return dataclasses.replace(
        profile,
        speculative=dataclasses.replace(
            spec,
            algorithm=spec.algorithm or DEFAULT_ALGORITHM,
            num_steps=combo.num_steps,
            eagle_topk=combo.eagle_topk,
            num_draft_tokens=combo.num_draft_tokens,
        ),
    )


def check(
    facts: HostFacts,
    profile: Profile,
    combo: Combo | None,
    python: str = "python3",
    model_config: Mapping[str, Any] | None = None,
) -> Planned:
    """One combination through the rules of the host's SGLang (nothing is known to reject it when the
    version is unknown: the launch will tell); ``model_config``: the model's config.json on the host."""
    candidate = combo_profile(profile, combo) if combo is not None else baseline_profile(profile)
    spec = launch_spec(candidate, python)  # exactly what the launcher would send for it
    result = check_launch(spec.args, spec.env, facts, model_config)
    if result is None:
        return Planned(combo, candidate)
    rule = rule_break(result, count_rest=False)
    values = result.values if rule is None and result.values else None
    return Planned(
        combo,
        candidate,
        rule,
        tuple(n.message for n in result.notices),
        runs_as=_runs_as(values) if combo is not None else None,
        server=json.dumps({k: values[k] for k in sorted(values)}, default=repr) if values else None,
    )


def _runs_as(values: dict[str, Any] | None) -> Combo | None:
    if values is None:
        return None
    try:
        return Combo(
            int(values["speculative_num_steps"]),
            int(values["speculative_eagle_topk"]),
            int(values["speculative_num_draft_tokens"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def plan(
    facts: HostFacts,
    profile: Profile,
    combos: Sequence[Combo],
    python: str = "python3",
    model_config: Mapping[str, Any] | None = None,
) -> list[Planned]:
    """The baseline first, then each combination in the grid's order; of the combinations SGLang would
    run identically, the one whose flags are what SGLang runs (else the first) comes where the first of
    them was, and the others keep their places, planned as the same as it."""
    checked = [check(facts, profile, c, python, model_config) for c in combos]
    groups: dict[str, list[int]] = {}
    for i, planned in enumerate(checked):
        if planned.server is not None and not planned.rejected:
            groups.setdefault(planned.server, []).append(i)
    lead: dict[str, int] = {}
    for key, members in groups.items():
        lead[key] = next((i for i in members if checked[i].combo == checked[i].runs_as), members[0])
    out = [check(facts, profile, None, python, model_config)]
    for i, planned in enumerate(checked):
        if planned.server is None or planned.server not in groups:
            out.append(planned)
            continue
        key = planned.server
        first = lead[key]
        if i == groups[key][0]:
            out.append(checked[first])
        if i != first:
            out.append(dataclasses.replace(planned, same_as=checked[first].combo))
    return out
