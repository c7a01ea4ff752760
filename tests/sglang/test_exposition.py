"""A /metrics page through Prometheus' own parser: the wheels' pages read, hostile pages refused."""

from __future__ import annotations

import math

import pytest

from gdnconsole.sglang import exposition
from gdnconsole.sglang.exposition import Exposition, ExpositionError, finite, only, parse
from gdnconsole.sglang.metricfacts import read_names
from gdnconsole.sglang.servingfigures import from_metrics
from tests.sglang.servingdata import page


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_the_wheels_pages_read(version: str) -> None:
    expo = parse(page(version))
    assert isinstance(expo, Exposition)
    running = list(expo.named("sglang:num_running_reqs"))
    assert len(running) == 4  # two DP ranks, each logged by TP ranks 0 and 1
    assert ("sglang:num_running_reqs", "gauge") in expo.types
    sample = next(s for s in running if s.label("tp_rank") == "0" and s.label("dp_rank") == "1")
    assert sample.value == 2.0 and sample.label("nope") is None
    assert list(sample.labels) == sorted(sample.labels)
    assert expo.has("sglang:time_to_first_token_seconds_bucket")
    assert not expo.has("sglang:no_such_family")


HOSTILE = [
    'sglang:x{a="b} 1\n',  # unterminated label value
    'sglang:x{a="b",a="c"} 1\n',  # a label twice
    "{} 1\n",
    'sglang:x{le="1"} one\n',
    '# TYPE sglang:x histogram\nsglang:x_bucket{le="+Inf"} 1\nsglang:x_bucket{le="+Inf"} nope\n',
    "\x00\x01\x02 garbage \x1b[31m\n",
    "sglang:x{" + "a" * 10000 + "\n",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_pages_are_one_error_value(text: str) -> None:
    result = parse(text)
    assert isinstance(result, ExpositionError)
    assert result.message.startswith("/metrics page not readable:") and len(result.message) <= 400
    assert "\x1b" not in result.message and "\x00" not in result.message  # escaped, not sent on


def test_a_page_too_large_is_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exposition, "MAX_TEXT", 10)
    result = parse("sglang:x 1\nsglang:y 2\n")
    assert isinstance(result, ExpositionError) and "too large" in result.message


def test_control_characters_in_label_values_stay_data() -> None:
    expo = parse('sglang:x{model_name="a\\nb\x1b[2J"} 1\n')
    assert isinstance(expo, Exposition)
    assert next(expo.named("sglang:x")).label("model_name") == "a\nb\x1b[2J"  # shown via textsafe


def test_non_finite_values_are_no_reading() -> None:
    assert finite(1.5) == 1.5
    assert finite(math.nan) is None and finite(math.inf) is None


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_reading_only_the_families_read_gives_the_same_figures(version: str) -> None:
    full, kept = parse(page(version)), parse(page(version), read_names(version))
    assert isinstance(full, Exposition) and isinstance(kept, Exposition)
    assert len(kept.samples) < len(full.samples) / 2
    assert from_metrics(kept, version=version) == from_metrics(full, version=version)
    assert {s.name for s in kept.samples} <= {s.name for s in full.samples}


def test_only_keeps_a_familys_metadata_and_suffixed_samples() -> None:
    text = (
        '# HELP a_seconds h\n# TYPE a_seconds histogram\na_seconds_bucket{le="+Inf"} 1\na_seconds_count 1\n'
        'a_seconds_sum 0.5\nb_total 3\nb_totally 4\n# TYPE c gauge\nc{x="1"} 2\nc\t5\n#\n'
    )
    assert only(text, frozenset({"a_seconds", "c"})).splitlines() == [
        "# HELP a_seconds h", "# TYPE a_seconds histogram", 'a_seconds_bucket{le="+Inf"} 1', "a_seconds_count 1",
        "a_seconds_sum 0.5", "# TYPE c gauge", 'c{x="1"} 2', "c\t5",
    ]  # fmt: skip
    assert only(text, frozenset({"b_total"})).splitlines() == ["b_total 3"]


def test_a_hostile_line_counts_only_in_a_family_read() -> None:
    text = 'other{a="b} 1\nsglang:x 2\n'
    assert isinstance(parse(text, frozenset({"sglang:x"})), Exposition)
    assert isinstance(parse(text), ExpositionError)
