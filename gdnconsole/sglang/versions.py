"""Which rule set checks which SGLang version, said honestly. Pure.

The rules were read from two wheels (0.5.11 and 0.5.23, FACTS §0); every other version is checked with the
nearer of the two sets. Between them that mapping is known (validation moved in 0.5.22, FACTS §2.3); older
than the oldest or newer than the newest it is a guess, and the result says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gdnconsole.sglang import flags as flagmod

RULE_SETS = ("0.5.11", "0.5.23")  # the wheels the rule tables were read from, oldest first
_VERSION = re.compile(r"^v?\d+\.\d+(\.\d+)?([.+-]?[A-Za-z0-9.]*)?$")


class VersionError(ValueError):
    """A ``--sglang`` value that is not a version number."""


def validate(text: str) -> str:
    """``text`` stripped, if it reads as a version (``0.5.11``, ``0.5.11.post1``, ``0.5.23rc2``)."""
    value = text.strip()
    if not _VERSION.match(value):
        raise VersionError(
            f"{text!r} is not an SGLang version: write it as MAJOR.MINOR.PATCH, e.g. {RULE_SETS[0]}"
        )
    return value


def validate_capability(text: str) -> str:
    """A GPU compute capability as ``MAJOR.MINOR`` (``8.6``), else a ``VersionError`` saying so."""
    value = text.strip()
    if not re.fullmatch(r"\d+\.\d+", value):
        raise VersionError(f"{text!r} is not a compute capability: write it as MAJOR.MINOR, e.g. 8.6")
    return value


@dataclass(frozen=True)
class RuleSet:
    name: str  # the rule set applied: one of RULE_SETS
    warning: str | None  # set when the version lies outside what the rule sets were read from


def rule_set_for(sglang: str) -> RuleSet:
    """The rule set that checks ``sglang``, with a warning when it is outside the sets' range."""
    version = flagmod.parse_version(sglang)
    name = flagmod.dialect(sglang)
    oldest, newest = (flagmod.parse_version(v) for v in (RULE_SETS[0], RULE_SETS[-1]))
    if version < oldest:
        return RuleSet(name, _outside(sglang, "older than the oldest", RULE_SETS[0]))
    if version > newest:
        return RuleSet(name, _outside(sglang, "newer than the newest", RULE_SETS[-1]))
    return RuleSet(name, None)


def _outside(sglang: str, where: str, nearest: str) -> str:
    return (
        f"SGLang {sglang} is {where} rule set ({nearest}): checked with {nearest}'s rules, which may not "
        f"match what {sglang} does."
    )
