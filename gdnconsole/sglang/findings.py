"""What the flag checker says about an argv: one finding per error SGLang would raise or change it
would make silently. A leaf module: the argv parser (``flags``) and the rules both produce findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "notice"]


@dataclass(frozen=True)
class Finding:
    id: str
    flag: str | None  # the flag the UI marks, as the operator typed it (else this version's spelling)
    message: str  # for an operator: what SGLang would do, and how to fix it
    source: str  # where SGLang does it: file:line (version)
    severity: Severity
    raises: str | None = None  # the exception SGLang raises ("AssertionError", "SystemExit", …)
    sglang_text: str | None = None  # the exception's own text ("" for a bare assert)
    sglang_first: bool = False  # the error SGLang itself stops at; the ones after it, it never reaches
