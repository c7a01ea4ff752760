"""The one flag check of a launch profile (issue 27): the argv and environment the launcher sends, for a
host's facts (``hostfacts.HostFacts``). The launcher, `tune`'s plan (a profile with a combination laid
over it), the flag form and `config check` all call it, so they cannot disagree on a verdict.

The model's architecture is read from that argv as SGLang reads it: the last --model-path (or its alias
--model) wins, so one in the profile's args overrides the profile's model. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gdnconsole.config.hosts import Profile
from gdnconsole.sglang.hostfacts import HostFacts
from gdnconsole.sglang.launch import flag_value, server_args
from gdnconsole.sglang.rules import CheckResult, check


def check_launch(
    args: Sequence[str],
    env: Mapping[str, str],
    facts: HostFacts,
    model_config: Mapping[str, Any] | None = None,
) -> CheckResult | None:
    """What the host's SGLang would make of ``args`` (server flags) run with ``env``; None when the
    host's SGLang version is not known (there are no rules to apply). ``model_config``: the model's
    config.json as the host holds it, when read (its context length, quantization and attention backends
    are checked only then)."""
    if not facts.sglang:
        return None
    return check(
        list(args),
        sglang=facts.sglang,
        compute_capability=facts.compute_capability,
        gpus=facts.gpus,
        env=env,
        gpu_memory_mb=facts.gpu_memory_mb,
        model_config=model_config,
    )


def check_profile(
    profile: Profile, facts: HostFacts, model_config: Mapping[str, Any] | None = None
) -> CheckResult | None:
    """``check_launch`` on the argv and environment the launcher sends for ``profile``
    (launch.launch_spec: its server args and ``profile.env``)."""
    return check_launch(server_args(profile), profile.env, facts, model_config)


def model_of(args: Sequence[str]) -> str:
    """The model SGLang loads for ``args``: the last --model-path (or --model), as argparse keeps it;
    the one whose config.json the check wants. Empty when there is none."""
    return flag_value(args, ("--model-path", "--model")) or ""
