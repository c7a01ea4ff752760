"""The flag form's checks, rendered: our rule tables' verdict on a profile, the host's own verdict, and
where the two disagree. Pure functions of their inputs (the host's facts come from its HostSession; the
colours, from the caller's theme as ``Tones``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

from gdnconsole.host.state import HostFacts
from gdnconsole.sglang import rules
from gdnconsole.sglang.findings import Finding
from gdnconsole.timefmt import span
from gdnconsole.ui.models.formmodel import field_of

if TYPE_CHECKING:
    from gdnconsole.host.hostcheck import HostVerdict
    from gdnconsole.ui.tones import Tones

DIM = Style(dim=True)


def findings_by_field(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """Each finding under the form field it concerns ("" for one that names no flag)."""
    out: dict[str, list[Finding]] = {}
    for finding in findings:
        out.setdefault(field_of(finding.flag), []).append(finding)
    return out


def finding_text(finding: Finding, tones: Tones) -> Text:
    """``✖ message`` and, dimmed, the rule's id and the SGLang source line it cites."""
    error = finding.severity == "error"
    out = Text("✖ " if error else "• ", tones.bad if error else tones.warning)
    out.append(finding.message)  # data, never markup
    out.append(f"  [{finding.id} · {finding.source}]", DIM)
    return out


def our_verdict(
    result: rules.CheckResult | None, facts: HostFacts, tones: Tones, *, invalid: bool = False
) -> Text:
    """``result`` None: not checked yet (typing), not checkable (a field is invalid), or the host's SGLang
    version is still unknown."""
    if result is None:
        if facts.sglang is None:
            return Text(f"our rules: not checked ({facts.describe()}: wait for the host's agent)", DIM)
        return Text("our rules: " + ("fix the marked fields first" if invalid else "checking…"), DIM)
    head = Text(f"our rules ({facts.describe()}): ")
    if result.ok:
        head.append("✔ accepted", tones.good)
    else:
        head.append(f"✖ {len(result.errors)} error{'s' if len(result.errors) != 1 else ''}", tones.bad)
    if result.notices:
        head.append(
            f" · {len(result.notices)} notice{'s' if len(result.notices) != 1 else ''}", tones.warning
        )
    return head


def host_verdict_text(verdict: HostVerdict | None, running: bool, stale: bool, tones: Tones) -> Text:
    if running:
        return Text("host's SGLang: running its argument checks…", tones.warning)
    if verdict is None:
        return Text("host's SGLang: not asked (ctrl+t)", DIM)
    out = Text("host's SGLang: ")
    if verdict.ok:
        out.append("✔ accepted", tones.good)
    else:
        out.append(f"✖ {verdict.exception or 'failed'}", tones.bad)
        if verdict.message:
            out.append(f": {verdict.message}")
    out.append(f" ({span(verdict.elapsed_s)})", DIM)
    if stale:
        out.append(" — for an earlier version of this form", tones.warning)
    return out


def disagreement(result: rules.CheckResult | None, verdict: HostVerdict | None, tones: Tones) -> Text | None:
    """Said plainly when our rules and the host's SGLang reach different verdicts on the same argv."""
    if result is None or verdict is None or result.ok == verdict.ok:
        return None
    if result.ok:
        what = "our rules accept these flags but the host's SGLang rejects them"
    else:
        what = "our rules reject these flags but the host's SGLang accepts them"
    return Text(f"⚠ They disagree: {what}. That is a bug in our rules; please report it.", tones.bad)
