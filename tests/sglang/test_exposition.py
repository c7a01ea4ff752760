"""A /metrics page through Prometheus' own parser: the wheels' pages read, hostile pages refused."""

from __future__ import annotations

import math

import pytest

from gdnconsole.sglang import exposition
from gdnconsole.sglang.exposition import Exposition, ExpositionError, finite, parse
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
