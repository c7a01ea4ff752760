"""exposition.only: the families the console reads, cut from a page a family at a time where the page is
laid out as prometheus_client writes it, else a line at a time; both give the same lines."""

from __future__ import annotations

import pytest

from gdnconsole.sglang import exposition
from gdnconsole.sglang.metricfacts import read_names
from tests.sglang.servingdata import page


def by_line(text: str, keep: frozenset[str]) -> str:
    kept = [line for line in text.splitlines() if exposition._wanted(exposition._line_name(line), keep)]
    return "\n".join(kept) + "\n"


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_a_family_at_a_time_keeps_the_same_lines(version: str) -> None:
    text, keep = page(version), read_names(version)
    assert exposition._one_help_per_type(text)
    assert exposition.only(text, keep) == by_line(text, keep)
    assert "sglang:num_running_reqs" in exposition.only(text, keep)


def test_a_page_without_help_lines_is_cut_a_line_at_a_time() -> None:
    text = "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 3.0\nother_metric 1.0\n"
    kept = exposition.only(text, read_names("0.5.23"))
    assert kept == "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 3.0\n"


def test_lines_before_the_first_family_are_not_kept() -> None:
    text = "sglang:num_running_reqs 9.0\n# HELP sglang:num_running_reqs r\n# TYPE sglang:num_running_reqs gauge\n"
    text += "sglang:num_running_reqs 3.0\n"
    parsed = exposition.parse(text, read_names("0.5.23"))
    assert isinstance(parsed, exposition.Exposition)
    assert [s.value for s in parsed.samples] == [3.0]
