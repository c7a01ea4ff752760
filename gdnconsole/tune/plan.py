"""The grid checked first: every combination runs through the host version's rules. Those SGLang would
reject are kept with the rule and never launched; those it would adjust carry what it changes."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from gdnconsole.config.hosts import Profile, Speculative
from gdnconsole.host.journal import RuleBreak
from gdnconsole.host.state import HostFacts
from gdnconsole.sglang import models, rules
from gdnconsole.sglang.launch import launch_spec
from gdnconsole.tune.grid import Combo

DEFAULT_ALGORITHM = "NEXTN"  # the profile's own algorithm when it has one


@dataclass(frozen=True)
class Planned:
    combo: Combo | None  # None: the baseline, without speculative decoding
    profile: Profile
    rule: RuleBreak | None = None  # the first rule SGLang would raise: never launched
    notices: tuple[str, ...] = ()  # what SGLang would change (NEXTN run as EAGLE, draft tokens adjusted…)

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


def check(facts: HostFacts, profile: Profile, combo: Combo | None, python: str = "python3") -> Planned:
    """One combination through the rules of the host's SGLang (nothing is known to reject it when the
    version is unknown: the launch will tell)."""
    candidate = combo_profile(profile, combo) if combo is not None else baseline_profile(profile)
    if not facts.sglang:
        return Planned(combo, candidate)
    spec = launch_spec(candidate, python)
    result = rules.check(
        list(spec.args),
        sglang=facts.sglang,
        compute_capability=facts.compute_capability,
        gpus=facts.gpus,
        architecture=models.architecture_of(candidate.model),
        env=spec.env,
    )
    rule = None
    if result.errors:
        first = result.errors[0]
        rule = RuleBreak(first.id, first.message, first.flag, first.source)
    return Planned(combo, candidate, rule, tuple(n.message for n in result.notices))


def plan(
    facts: HostFacts, profile: Profile, combos: Sequence[Combo], python: str = "python3"
) -> list[Planned]:
    """The baseline first, then each combination in the grid's order."""
    return [check(facts, profile, None, python), *(check(facts, profile, c, python) for c in combos)]
