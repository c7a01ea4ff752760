"""exposition.only: the families the console reads, cut from a page a family at a time where the page is
laid out as prometheus_client writes it, else a line at a time; both give the same lines."""

from __future__ import annotations

from pathlib import Path

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


PAGES = ["tests/sglang/data/metrics-0.5.11.txt", "tests/sglang/data/metrics-0.5.23.txt"]
PAGES.append("bench/data/metrics-0.5.23-dp4.txt")


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("keep", [None, "0.5.23"])
def test_the_line_reader_reads_what_prometheus_clients_parser_reads(path: str, keep: str | None) -> None:
    text = Path(path).read_text()
    if keep is not None:
        text = exposition.only(text, read_names(keep))
    fast = exposition._common_lines(text)
    assert fast is not None
    whole = exposition._parsed(text)

    def said(samples: tuple[exposition.Sample, ...]) -> list[tuple[str, exposition.Labels, str]]:
        return sorted((s.name, s.labels, repr(s.value)) for s in samples)  # NaN equals itself as text

    assert said(fast.samples) == said(whole.samples)
    assert sorted(fast.types) == sorted(whole.types)


@pytest.mark.parametrize(
    "line",
    [
        'sglang:x{a="1"',  # no closing brace
        "sglang:x 1 2 3",  # more than a value and a timestamp
        "9bad 1",  # not a metric name
        "# EOF",  # an OpenMetrics marker
    ],
)
def test_a_line_of_another_shape_goes_to_the_whole_parser(line: str) -> None:
    assert exposition._common_lines(line + "\n") is None


def test_label_escapes_are_the_libraries() -> None:
    parsed = exposition.parse('sglang:x{a="q\\"uote",b="back\\\\slash",c="new\\nline"} 1\n')
    assert isinstance(parsed, exposition.Exposition)
    (sample,) = parsed.samples
    assert dict(sample.labels) == {"a": 'q"uote', "b": "back\\slash", "c": "new\nline"}
