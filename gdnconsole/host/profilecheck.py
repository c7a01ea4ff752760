"""The host's side of a profile's check (issue 27): the one pure check (sglang/profilerules) on the host's
facts, and the first rule it breaks as a journal records it (``RuleBreak``), built in one place for the
launcher, its relaunch pre-check and `tune`'s plan. Also the model's config.json as the host last showed
it (seenmodels), for checks made without reading it again."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gdnconsole.host import modelconfig, seenmodels
from gdnconsole.host.journal import RuleBreak
from gdnconsole.sglang.hostfacts import HostFacts
from gdnconsole.sglang.launch import LaunchSpec
from gdnconsole.sglang.profilerules import check_launch
from gdnconsole.sglang.rules import CheckResult


def rule_break(result: CheckResult, *, count_rest: bool = True) -> RuleBreak | None:
    """The first error of ``result`` (the one SGLang stops at) as the rule that rejects a launch, or None
    when there is none; its flag tells the UI which field to open. ``count_rest``: its message counts the
    errors that come after it (the launcher's; `tune` lists each combination's first rule alone)."""
    if result.ok or not result.errors:
        return None
    first, rest = result.errors[0], result.errors[1:]
    message = first.message
    if rest and count_rest:
        ids = ", ".join(f.id for f in rest)
        message += f" (and {len(rest)} more once that is fixed: {ids}; `gdnconsole check` says each)"
    return RuleBreak(first.id, message, first.flag, first.source)


def no_sglang(python: str) -> RuleBreak:
    return RuleBreak("no-sglang", f"SGLang is not installed for {python} on this host")


def check_rules(
    facts: HostFacts, spec: LaunchSpec, model_config: Mapping[str, Any] | None = None
) -> RuleBreak | None:
    """The first rule ``spec`` breaks on the host's SGLang, or None; a host without SGLang breaks one."""
    result = check_launch(spec.args, spec.env, facts, model_config)
    return no_sglang(spec.python) if result is None else rule_break(result)


def kept_model_config(host: str, model: str) -> seenmodels.SeenConfig | None:
    """The config.json ``host`` last showed for ``model``, read back as untrusted: None when none was
    kept, or a kept one is damaged (NaN or nesting written in by hand): its checks are then not run."""
    seen = seenmodels.recall(host, model)
    if seen is None:
        return None
    try:
        config = modelconfig.parse(json.dumps(seen.config), model).config
    except (ValueError, RecursionError):
        return None
    return seenmodels.SeenConfig(config, seen.time) if config is not None else None
