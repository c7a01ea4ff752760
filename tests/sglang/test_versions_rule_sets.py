"""Which rule set checks which SGLang, and what a `--sglang` or capability value must look like."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.versions import RuleSet, VersionError, rule_set_for, validate, validate_capability


@pytest.mark.parametrize(
    ("text", "value"),
    [(" 0.5.11 ", "0.5.11"), ("0.5.11.post1", "0.5.11.post1"), ("0.5.23rc2", "0.5.23rc2"), ("v0.6", "v0.6")],
)
def test_a_version_is_accepted_stripped(text: str, value: str) -> None:
    assert validate(text) == value


@pytest.mark.parametrize("text", ["latest", "5", " ", "0 5 11"])
def test_a_version_that_is_no_number_is_refused_with_an_example(text: str) -> None:
    with pytest.raises(VersionError) as refused:
        validate(text)
    assert (
        str(refused.value) == f"{text!r} is not an SGLang version: write it as MAJOR.MINOR.PATCH, e.g. 0.5.11"
    )
    assert isinstance(refused.value, ValueError)


def test_a_compute_capability_is_major_dot_minor() -> None:
    assert validate_capability(" 8.6 ") == "8.6"
    assert validate_capability("10.0") == "10.0"
    for text in ("8", "sm86", "8.6.1", " "):
        with pytest.raises(VersionError) as refused:
            validate_capability(text)
        assert (
            str(refused.value) == f"{text!r} is not a compute capability: write it as MAJOR.MINOR, e.g. 8.6"
        )


@pytest.mark.parametrize(
    ("sglang", "rule_set"),
    [
        ("0.5.11", "0.5.11"),
        ("0.5.21", "0.5.11"),
        ("0.5.22", "0.5.23"),
        ("0.5.23", "0.5.23"),
        ("0.5.23.post1", "0.5.23"),
    ],
)
def test_versions_the_rule_sets_span_are_checked_without_a_warning(sglang: str, rule_set: str) -> None:
    assert rule_set_for(sglang) == RuleSet(rule_set, None)


def test_an_older_version_is_checked_with_the_oldest_rules_and_says_so() -> None:
    assert rule_set_for("0.5.10") == RuleSet(
        "0.5.11",
        "SGLang 0.5.10 is older than the oldest rule set (0.5.11): checked with 0.5.11's rules, which may not "
        "match what 0.5.10 does.",
    )


def test_a_newer_version_is_checked_with_the_newest_rules_and_says_so() -> None:
    assert rule_set_for("0.5.24") == RuleSet(
        "0.5.23",
        "SGLang 0.5.24 is newer than the newest rule set (0.5.23): checked with 0.5.23's rules, which may not "
        "match what 0.5.24 does.",
    )
    assert rule_set_for("0.6").warning == (
        "SGLang 0.6 is newer than the newest rule set (0.5.23): checked with 0.5.23's rules, which may not "
        "match what 0.6 does."
    )
