"""The flag checker: SGLang's own argument rules, applied to an argv without SGLang. Pure: no I/O.

The rules are data (``ruletables``): one ordered table per version dialect, each entry either a rule
(an error SGLang would raise, or a notice for what it silently changes) or a resolution (a default SGLang
fills in, which later rules read). They run in SGLang's order and stop at the first error, so the error
reported is the one SGLang would raise first (FACTS §0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gdnconsole.sglang import flags as flagmod
from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.models import architecture_of
from gdnconsole.sglang.rulekit import context, run_steps
from gdnconsole.sglang.ruletables import alias_notices, table_for


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    sglang: str
    errors: list[Finding]
    notices: list[Finding]
    argv: list[str]

    def to_json(self) -> dict[str, Any]:
        """The `gdnconsole check --json` object (issue 5 §4)."""
        return {
            "ok": self.ok,
            "sglang": self.sglang,
            "errors": [
                {"id": f.id, "flag": f.flag, "message": f.message, "source": f.source} for f in self.errors
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
) -> CheckResult:
    """What SGLang ``sglang`` would make of ``argv`` (server flags, without the interpreter or module)."""
    parsed = flagmod.parse_argv(argv, sglang)
    notices = alias_notices(parsed, sglang)
    if parsed.errors:
        return CheckResult(False, sglang, list(parsed.errors), notices, list(argv))
    if architecture is None:
        architecture = architecture_of(str(parsed.values.get("model_path", "")))
    ctx = context(
        parsed, sglang, compute_capability=compute_capability, gpus=gpus, architecture=architecture, env=env
    )
    errors, more = run_steps(table_for(sglang), ctx)
    return CheckResult(not errors, sglang, errors, notices + more, list(argv))
