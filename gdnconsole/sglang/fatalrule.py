"""A crash that a flag rule foretold: a startup that ends in a bare ``AssertionError`` while SGLang
processed its arguments says nothing of why (FACTS §3: the assert has no message). When the flags it
was started with break a rule the checker reports as that assertion, the rule is the explanation, and
its message says the fix. Pure: the flags come from the caller (the journal's attempt, the launch)."""

from __future__ import annotations

from collections.abc import Sequence

from gdnconsole.sglang import rules
from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.launch import SERVER_MODULE
from gdnconsole.sglang.stages import Stage

BARE_ASSERTION = "AssertionError"


def server_flags(argv: Sequence[str]) -> list[str]:
    """SGLang's flags in a command line: what follows ``-m sglang.launch_server`` or ``sglang serve``
    (an argv of flags alone is returned as it is)."""
    words = list(argv)
    for i, word in enumerate(words):
        if word == SERVER_MODULE and i > 0 and words[i - 1] == "-m":
            return words[i + 1 :]
        if word == "serve" and i > 0 and words[i - 1].rsplit("/", 1)[-1] == "sglang":
            return words[i + 1 :]
    return words


def is_bare_assertion(summary: str) -> bool:
    """The exception line of an ``assert`` without a message (or with SGLang's own short one)."""
    return summary.strip() == BARE_ASSERTION or summary.startswith(BARE_ASSERTION + ":")


def foretold(summary: str, stage: Stage, argv: Sequence[str], sglang: str | None) -> Finding | None:
    """The rule behind a bare AssertionError at argument processing: the first error the checker finds
    in ``argv`` that SGLang raises as an AssertionError. None when the crash is another, later, or the
    flags break no such rule (the assertion is then unexplained, and said so by the summary alone)."""
    if sglang is None or stage > Stage.STARTING or not is_bare_assertion(summary):
        return None
    errors = rules.check(server_flags(argv), sglang=sglang).errors
    return next((e for e in errors if e.raises == BARE_ASSERTION), None)


def explained(summary: str, stage: Stage, argv: Sequence[str], sglang: str | None) -> str:
    """The fatal summary, with the rule that foretold it (its id and message, the fix included)."""
    rule = foretold(summary, stage, argv, sglang)
    if rule is None:
        return summary
    return f"{summary} — the flags break rule {rule.id}: {rule.message}"
