"""The facts about SGLang's serving endpoints: which version's apply, and each family as the wheels'
own collectors render it (the pages in tests/sglang/data) and as their source declares it (the cited
line, when the wheels are unpacked: tests/tools/README-agreement.md)."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.exposition import Exposition, parse
from gdnconsole.sglang.metricfacts import (
    FAMILIES,
    RETRACTED_GAUGE,
    SCHEDULER_LABELS,
    TOKENIZER_LABELS,
    facts_version,
    families,
)
from tests.sglang.servingdata import page
from tests.wheels import wheel_source

VERSIONS = ["0.5.11", "0.5.23"]


def test_which_facts_hold() -> None:
    assert facts_version("0.5.11") == "0.5.11"
    assert facts_version("0.5.20") == "0.5.11"  # not read: the older facts
    assert facts_version("0.5.23.post1") == "0.5.23" and facts_version("0.6.0") == "0.5.23"
    assert facts_version(None) == "0.5.23" and facts_version("0.4.0") == "0.5.11"
    assert families("0.5.23") is FAMILIES["0.5.23"]


def expo(version: str) -> Exposition:
    parsed = parse(page(version))
    assert isinstance(parsed, Exposition)
    return parsed


def _sample_name(kind: str, name: str) -> str:
    return f"{name}_bucket" if kind == "histogram" else name


@pytest.mark.parametrize("version", VERSIONS)
def test_each_family_renders_with_its_kind_and_labels(version: str) -> None:
    page_ = expo(version)
    declared = dict(page_.types)
    for family in [*FAMILIES[version].values(), RETRACTED_GAUGE[version]]:
        family_name = family.name.removesuffix("_total")  # the parser names a counter without it
        assert declared.get(family_name) == family.kind, family
        samples = list(page_.named(_sample_name(family.kind, family.name)))
        assert samples, family
        for s in samples:
            labels = {k for k, _ in s.labels}
            assert ("pid" in labels) == family.per_pid, family
            assert ("dp_rank" in labels) == (family.role == "scheduler"), family
            assert ("tp_rank" in labels) == (family.role == "scheduler"), family
            base = SCHEDULER_LABELS if family.role == "scheduler" else TOKENIZER_LABELS
            optional = {"pid", "dp_rank", "le", *family.extra_labels}
            assert labels - optional == set(base), family
            assert set(family.extra_labels) <= labels, family
            assert ("is_streaming" in labels) == ("is_streaming" in family.extra_labels), family


def test_is_streaming_only_on_0523_ttft_and_e2e() -> None:
    streaming = {f for v in VERSIONS for f, fam in FAMILIES[v].items() if fam.extra_labels and v == "0.5.23"}
    assert streaming == {"ttft", "e2e"}
    assert not any(fam.extra_labels for fam in FAMILIES["0.5.11"].values())


def _cited(version: str, cite: str) -> list[str]:
    path, line = cite.rsplit(":", 1)
    return wheel_source(version, path).read_text().splitlines()[int(line) - 1 :][:3]


@pytest.mark.parametrize("version", VERSIONS)
def test_each_cite_is_the_declaration(version: str) -> None:
    for family in [*FAMILIES[version].values(), RETRACTED_GAUGE[version]]:
        lines = "\n".join(_cited(version, family.cite))
        assert f'name="{family.name}"' in lines, (family, lines)
