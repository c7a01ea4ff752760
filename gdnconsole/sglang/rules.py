"""The flag checker: SGLang's own argument rules, applied to an argv without SGLang. Pure: no I/O.

The rules are data (``ruletables``): one ordered table per version dialect, each entry either a rule
(an error SGLang would raise, or a notice for what it silently changes) or a resolution (a default SGLang
fills in, which later rules read). They run in SGLang's order, so the first error found is the one SGLang
would raise (FACTS §0), marked ``sglang_first``; the checker then goes on and reports every further error
it can still determine, so a profile is fixed in one pass.

Entry points: ``check`` (the whole verdict) and ``errors_of`` (just the errors, in order, first marked), for
callers that check many argvs (the speculative grid of `tune`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gdnconsole.sglang import flags as flagmod
from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.models import architecture_of
from gdnconsole.sglang.rulekit import context, mark_first, run_steps
from gdnconsole.sglang.ruletables import alias_notices, table_for
from gdnconsole.sglang.versions import rule_set_for


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    sglang: str
    errors: list[Finding]  # in SGLang's order; errors[0] (sglang_first) is the one SGLang raises
    notices: list[Finding]
    argv: list[str]
    rule_set: str = ""  # the rule set applied (versions.RULE_SETS)
    warnings: tuple[str, ...] = ()  # about the check itself: a version outside the rule sets' range
    # Every value SGLang holds once its argument processing has run (its defaults filled in, its
    # adjustments made), as the rule tables know them; empty when the argv could not be read.
    values: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The `gdnconsole check --json` object (issue 5 §4, issue 17)."""
        return {
            "ok": self.ok,
            "sglang": self.sglang,
            "rule_set": self.rule_set,
            "warnings": list(self.warnings),
            "errors": [
                {
                    "id": f.id,
                    "flag": f.flag,
                    "message": f.message,
                    "source": f.source,
                    "sglang_first": f.sglang_first,
                }
                for f in self.errors
            ],
            "notices": [{"id": f.id, "message": f.message} for f in self.notices],
            "argv": list(self.argv),
        }


def check(
    argv: Sequence[str],
    *,
    sglang: str,
    compute_capability: str | None = None,
    gpus: int | None = None,
    architecture: str | None = None,
    env: Mapping[str, str] | None = None,
    gpu_memory_mb: float | None = None,
    model_config: Mapping[str, Any] | None = None,
) -> CheckResult:
    """What SGLang ``sglang`` would make of ``argv`` (server flags, without the interpreter or module).

    ``gpu_memory_mb``: one GPU's memory, from which SGLang picks its chunked prefill size; None when not
    known (then only what holds for every GPU size is reported). ``model_config``: the checkpoint's
    config.json, where the host has it; the rules on its context length, quantization and attention
    backends apply only with it (a fact not known gives no finding, never a guess). ``gpus`` is not
    read: SGLang's argument processing never asks how many GPUs there are (no device count in 0.5.11's
    or 0.5.23's server_args.py); it is accepted for the callers that pass the host's facts whole."""
    chosen = rule_set_for(sglang)
    warnings = (chosen.warning,) if chosen.warning else ()
    parsed = flagmod.parse_argv(argv, sglang)
    notices = alias_notices(parsed, sglang)
    errors = list(parsed.errors)
    values: dict[str, Any] = {}
    if parsed.complete:
        if architecture is None:
            architecture = architecture_of(str(parsed.values.get("model_path", "")), model_config)
        ctx = context(
            parsed,
            sglang,
            compute_capability=compute_capability,
            architecture=architecture,
            env=env,
            gpu_memory_mb=gpu_memory_mb,
            model_config=model_config,
        )
        more_errors, more_notices = run_steps(table_for(sglang), ctx)
        errors += more_errors
        notices += more_notices
        values = dict(ctx.values)
    return CheckResult(
        not errors,
        sglang,
        mark_first(errors),
        notices,
        list(argv),
        rule_set=chosen.name,
        warnings=warnings,
        values=values,
    )


def errors_of(argv: Sequence[str], **facts: Any) -> list[Finding]:
    """Every error ``check`` finds, in SGLang's order; the first is marked ``sglang_first``."""
    return check(argv, **facts).errors
