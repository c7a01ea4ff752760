"""parse_argv against the real thing: Python's argparse, built here from the same flag table the way SGLang
builds its parser (allow_abbrev on), must read each argv to the same values or stop with the same text."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import pytest

from gdnconsole.sglang.flags import flag_table, parse_argv

MODEL = ["--model-path", "Qwen/Qwen3.6-27B"]


TYPES: dict[str | None, Callable[[str], object]] = {
    "int": int,
    "float": float,
    "loads": json.loads,
    "str": str,
}


class Refused(Exception):
    """argparse's error text, raised instead of printing it and exiting."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise Refused(message)


def real_parser(sglang: str) -> Parser:
    parser = Parser(add_help=False, argument_default=argparse.SUPPRESS)
    for flag in flag_table(sglang).flags:
        if flag.kind == "bool":
            positive = [o for o in flag.options if not o.startswith("--no-")]
            parser.add_argument(*positive, dest=flag.dest, action=argparse.BooleanOptionalAction)
        elif flag.kind == "flag":
            parser.add_argument(*flag.options, dest=flag.dest, action="store_true")
        else:
            convert = TYPES.get(flag.type)
            choices = None if flag.choices is None else [convert(c) if convert else c for c in flag.choices]
            options = {"type": convert} if convert else {}
            parser.add_argument(
                *flag.options,
                dest=flag.dest,
                nargs=flag.nargs,
                choices=choices,
                required=flag.required,
                **options,
            )
    return parser


def argparse_reads(argv: list[str], sglang: str) -> tuple[str, object]:
    try:
        return "values", vars(real_parser(sglang).parse_args(argv))
    except Refused as refused:
        return "error", str(refused)


def gdnconsole_reads(argv: list[str], sglang: str) -> tuple[str, object]:
    parsed = parse_argv(argv, sglang)
    return ("error", parsed.errors[0].sglang_text) if parsed.errors else ("values", parsed.values)


AGREED = [
    [*MODEL, "--speculative-num-step", "3", "--speculative-eagle-topk=1"],
    [*MODEL, "--lora-paths", "a", "--frobnicate=a b"],
    [*MODEL, "--port", "--x y"],
    [*MODEL, "--model-checksum", "--tp-size", "2"],
    [*MODEL, "--cuda-graph-bs", "1", "x"],
    [*MODEL, "--frobnicate", "1", "--portt=2", "x"],
    ["--frobnicate", "1"],
    [*MODEL, "-x", "-"],
    [*MODEL, "--port", "-1"],
    [*MODEL, "--port", "-1."],
    [*MODEL, "--disable-radix-cache=", "--port", "1"],
    [*MODEL, "--mod", "x"],
]


@pytest.mark.parametrize("argv", AGREED, ids=" ".join)
def test_argparse_and_parse_argv_read_the_same(argv: list[str]) -> None:
    assert gdnconsole_reads(argv, "0.5.11") == argparse_reads(argv, "0.5.11")


@pytest.mark.parametrize(
    "argv",
    [
        [*MODEL, '--json-model-override-args={"rope_theta": 1000000}'],
        [*MODEL, '--json-model-override={"rope_theta": 1000000}'],
        [*MODEL, "--lora-paths", "a", "--port=80 80"],
    ],
    ids=" ".join,
)
def test_a_value_given_with_equals_may_hold_spaces(argv: list[str]) -> None:
    assert gdnconsole_reads(argv, "0.5.11") == argparse_reads(argv, "0.5.11")
    if "--port=80 80" not in argv:
        assert parse_argv(argv, "0.5.11").values["json_model_override_args"] == '{"rope_theta": 1000000}'


@pytest.mark.parametrize(
    ("argv", "value"),
    [
        (["--cuda-graph-bs=4"], {"cuda_graph_bs": [4]}),
        (["--lora-paths=a"], {"lora_paths": ["a"]}),
        (["--lora-paths=a", "b"], None),
        (["--model-checksum=abc"], {"model_checksum": "abc"}),
    ],
    ids=str,
)
def test_a_list_flag_given_with_equals_holds_a_list_of_that_one_value(
    argv: list[str], value: dict[str, object] | None
) -> None:
    assert gdnconsole_reads([*MODEL, *argv], "0.5.11") == argparse_reads([*MODEL, *argv], "0.5.11")
    if value is not None:
        assert parse_argv([*MODEL, *argv], "0.5.11").values == {"model_path": MODEL[1], **value}


def test_an_integer_choice_is_refused_with_the_numbers_argparse_lists() -> None:
    argv = [*MODEL, "--log-requests-level", "5"]
    assert gdnconsole_reads(argv, "0.5.23") == argparse_reads(argv, "0.5.23")
    assert gdnconsole_reads(argv, "0.5.23") == (
        "error",
        "argument --log-requests-level: invalid choice: 5 (choose from 0, 1, 2, 3)",
    )


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        ([*MODEL, "--", "x"], "unrecognized arguments: -- x"),
        ([*MODEL, "--lora-paths", "a", "--", "--port", "1"], "unrecognized arguments: -- --port 1"),
        ([*MODEL, "--port", "--", "1"], "argument --port: expected one argument"),
        (["--", *MODEL], "the following arguments are required: --model-path/--model"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_a_bare_double_dash_ends_the_flags_and_is_left_over_with_all_after_it(
    argv: list[str], text: str
) -> None:
    """The texts of Python 3.11's argparse."""
    assert gdnconsole_reads(argv, "0.5.11") == ("error", text)


def test_flags_after_a_bare_double_dash_are_left_over_as_values_not_marked_as_unknown() -> None:
    parsed = parse_argv([*MODEL, "--frobnicate", "--", "--port", "1", "--mamba-scheduler-strategy"], "0.5.14")
    assert parsed.unknown == ["--frobnicate", "--"]
    assert [(e.flag, e.sglang_text) for e in parsed.errors] == [
        ("--frobnicate", "unrecognized arguments: --frobnicate -- --port 1 --mamba-scheduler-strategy"),
        ("--", "unrecognized arguments: --"),
    ]
