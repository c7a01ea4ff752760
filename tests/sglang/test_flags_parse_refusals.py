"""What the console says when SGLang's argument parser would refuse an argv: argparse's own text after
``error:``, the flag marked, and the fix offered (FACTS §0, §2.3)."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.flags import ARGPARSE_SOURCE, closest, parse_argv

MODEL = ["--model-path", "Qwen/Qwen3.6-27B"]


def refusal(argv: list[str], sglang: str = "0.5.11") -> Finding:
    [finding] = parse_argv(argv, sglang).errors
    return finding


def said(text: str, fix: str) -> str:
    return f"SGLang's argument parser would stop with: error: {text}. Fix: {fix}"


def test_a_refusal_is_a_systemexit_error_from_argparse() -> None:
    finding = refusal([*MODEL, "--port", "x"])
    assert finding == Finding(
        id="argv.invalid_value",
        flag="--port",
        message=said("argument --port: invalid int value: 'x'", "--port takes an integer."),
        source=ARGPARSE_SOURCE,
        severity="error",
        raises="SystemExit",
        sglang_text="argument --port: invalid int value: 'x'",
    )


def test_a_float_or_json_value_that_does_not_read_names_its_type() -> None:
    floats = refusal([*MODEL, "--mem-fraction-static", "most"])
    assert floats.sglang_text == "argument --mem-fraction-static: invalid float value: 'most'"
    assert floats.message.endswith("Fix: --mem-fraction-static takes a float.")
    assert refusal([*MODEL, "--extra-metric-labels", "{team"]).sglang_text == (
        "argument --extra-metric-labels: invalid loads value: '{team'"
    )
    assert refusal([*MODEL, "--port="]).sglang_text == "argument --port: invalid int value: ''"


def test_a_flag_with_several_spellings_is_named_with_all_of_them() -> None:
    finding = refusal([*MODEL, "--tp-size", "two"], "0.5.23")
    assert finding.sglang_text == "argument --tp-size/--tensor-parallel-size: invalid int value: 'two'"


def test_every_value_of_a_list_flag_is_converted() -> None:
    finding = refusal([*MODEL, "--cuda-graph-bs", "1", "x"])
    assert (finding.id, finding.sglang_text) == (
        "argv.invalid_value",
        "argument --cuda-graph-bs: invalid int value: 'x'",
    )


def test_an_invalid_choice_lists_the_choices_and_suggests_the_nearest() -> None:
    finding = refusal([*MODEL, "--speculative-algorithm", "EAGEL"])
    text = (
        "argument --speculative-algorithm: invalid choice: 'EAGEL' "
        "(choose from 'DFLASH', 'EAGLE', 'EAGLE3', 'NEXTN', 'STANDALONE', 'NGRAM')"
    )
    assert (finding.id, finding.flag, finding.sglang_text) == (
        "argv.invalid_choice",
        "--speculative-algorithm",
        text,
    )
    assert finding.message == said(
        text,
        "did you mean EAGLE? --speculative-algorithm takes one of DFLASH, EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM "
        "on SGLang 0.5.11.",
    )


def test_an_invalid_choice_with_nothing_near_only_lists_the_choices() -> None:
    finding = refusal([*MODEL, "--tokenizer-mode", "fast"], "0.5.23")
    assert finding.message.endswith("Fix: --tokenizer-mode takes one of auto, slow on SGLang 0.5.23.")


def test_a_flag_without_a_value_refuses_one_given_with_equals() -> None:
    finding = refusal([*MODEL, "--disable-radix-cache="])
    assert (finding.id, finding.flag) == ("argv.invalid_value", "--disable-radix-cache")
    assert finding.message == said(
        "argument --disable-radix-cache: ignored explicit argument ''",
        "--disable-radix-cache takes no value.",
    )
    boolean = refusal([*MODEL, "--no-enable-tf32-matmul=1"], "0.5.23")
    assert boolean.sglang_text == (
        "argument --enable-tf32-matmul/--no-enable-tf32-matmul: ignored explicit argument '1'"
    )


def test_a_missing_value_says_how_many_the_flag_takes() -> None:
    one = refusal([*MODEL, "--port", "--tp-size", "2"])
    assert (one.id, one.flag) == ("argv.missing_value", "--port")
    assert one.message == said("argument --port: expected one argument", "give --port a value.")
    some = refusal([*MODEL, "--cuda-graph-bs"])
    assert (some.id, some.flag) == ("argv.missing_value", "--cuda-graph-bs")
    assert some.message == said(
        "argument --cuda-graph-bs: expected at least one argument", "give --cuda-graph-bs one or more values."
    )


def test_a_number_that_argparse_does_not_read_as_negative_ends_the_value() -> None:
    finding = parse_argv([*MODEL, "--port", "-1."], "0.5.11").errors[0]
    assert finding.sglang_text == "argument --port: expected one argument"


def test_an_ambiguous_prefix_names_every_flag_it_starts() -> None:
    finding = refusal([*MODEL, "--cuda-graph-max-bs=8"], "0.5.23")
    text = "ambiguous option: --cuda-graph-max-bs=8 could match --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill"
    assert (finding.id, finding.flag, finding.sglang_text) == ("argv.ambiguous", "--cuda-graph-max-bs", text)
    assert finding.message == said(
        text, "write the whole flag name; --cuda-graph-max-bs is the start of 2 flags."
    )


def test_the_missing_model_names_the_flag_to_add_and_every_unknown_flag_after_it() -> None:
    parsed = parse_argv(["--frobnicate", "1", "--portt=2"], "0.5.11")
    required, *unknown = parsed.errors
    assert (required.id, required.flag) == ("argv.required", "--model-path")
    assert required.message == said(
        "the following arguments are required: --model-path/--model", "add --model-path."
    )
    assert [(e.id, e.flag, e.sglang_text) for e in unknown] == [
        ("argv.unrecognized", "--frobnicate", "unrecognized arguments: --frobnicate"),
        ("argv.unrecognized", "--portt", "unrecognized arguments: --portt"),
    ]
    assert unknown[1] == Finding(
        id="argv.unrecognized",
        flag="--portt",
        message="SGLang 0.5.11 has no --portt: did you mean --port?",
        source=ARGPARSE_SOURCE,
        severity="error",
        raises="SystemExit",
        sglang_text="unrecognized arguments: --portt",
    )
    assert parsed.complete


def test_unknown_flags_are_refused_in_one_message_and_each_marked() -> None:
    parsed = parse_argv([*MODEL, "--frobnicate", "1", "--spec-algo=EAGLE", "x"], "0.5.11")
    first, second = parsed.errors
    assert parsed.unknown == ["--frobnicate", "--spec-algo"]
    assert (first.id, first.flag) == ("argv.unrecognized", "--frobnicate")
    assert first.message == said(
        "unrecognized arguments: --frobnicate 1 --spec-algo=EAGLE x",
        "SGLang 0.5.11 has no such flag: remove it, or check its spelling in `sglang serve --help`.",
    )
    assert (second.flag, second.sglang_text) == ("--spec-algo", "unrecognized arguments: --spec-algo")
    assert second.message == (
        "SGLang 0.5.11 has no such flag: remove it, or check its spelling in `sglang serve --help`."
    )
    assert parsed.complete and parsed.values["model_path"] == "Qwen/Qwen3.6-27B"


def test_a_stray_value_is_marked_only_when_no_unknown_flag_is_there() -> None:
    stray = refusal(["stray", *MODEL, "--port", "1", "2"])
    assert (stray.id, stray.flag) == ("argv.unrecognized", None)
    assert stray.message == said(
        "unrecognized arguments: stray 2", "'stray' belongs to no flag: quote it as one value or remove it."
    )
    both = refusal(["stray", *MODEL, "--portt", "2"])
    assert both.flag == "--portt" and both.sglang_text == "unrecognized arguments: stray --portt 2"
    assert both.message.endswith("Fix: SGLang 0.5.11 has no --portt: did you mean --port?")


@pytest.mark.parametrize(
    ("option", "sglang", "hint"),
    [
        (
            "--cuda-graph-max-bs-decode",
            "0.5.11",
            "SGLang 0.5.11 has no --cuda-graph-max-bs-decode: write --cuda-graph-max-bs instead.",
        ),
        (
            "--mamba-radix-cache-strategy",
            "0.5.13",
            "SGLang 0.5.13 has no --mamba-radix-cache-strategy: write --mamba-scheduler-strategy instead.",
        ),
        (
            "--mamba-scheduler-strategy",
            "0.5.20",
            "SGLang 0.5.20 has no --mamba-scheduler-strategy: write --mamba-radix-cache-strategy instead.",
        ),
        (
            "--speculative-algoritm",
            "0.5.23",
            "SGLang 0.5.23 has no --speculative-algoritm: did you mean --speculative-algorithm?",
        ),
        ("--hostname", "0.5.11", "SGLang 0.5.11 has no --hostname: did you mean --host?"),
    ],
)
def test_an_unknown_flag_is_answered_with_its_new_name_or_the_nearest(
    option: str, sglang: str, hint: str
) -> None:
    finding = refusal([*MODEL, f"{option}=1"], sglang)
    assert (finding.flag, finding.sglang_text) == (option, f"unrecognized arguments: {option}=1")
    assert finding.message == said(f"unrecognized arguments: {option}=1", hint)


def test_only_a_close_match_is_suggested() -> None:
    assert closest("EAGEL", ("EAGLE", "EAGLE3")) == "EAGLE"
    assert closest("--hostname", ("--host",)) == "--host"  # a ratio of exactly 0.75
    assert closest("--spec-algo", ("--speculative-algorithm",)) is None  # 0.65: too far
    assert closest("--portt", ()) is None


def test_an_argv_that_argparse_refuses_while_reading_is_not_complete() -> None:
    assert parse_argv(MODEL, "0.5.11").complete
    assert not parse_argv([*MODEL, "--port", "x"], "0.5.11").complete
    assert not parse_argv([*MODEL, "--cuda-graph-max-bs", "8"], "0.5.23").complete
    assert parse_argv(["--frobnicate"], "0.5.11").complete


def test_a_lone_dash_left_over_is_a_stray_value_not_a_flag() -> None:
    parsed = parse_argv([*MODEL, "-"], "0.5.11")
    assert parsed.unknown == [] and parsed.errors[0].flag is None
    assert parsed.errors[0].sglang_text == "unrecognized arguments: -"


def test_a_renamed_flag_after_another_unknown_one_still_gets_its_new_name() -> None:
    parsed = parse_argv([*MODEL, "--frobnicate", "--mamba-scheduler-strategy", "auto"], "0.5.23")
    assert [e.message for e in parsed.errors[1:]] == [
        "SGLang 0.5.23 has no --mamba-scheduler-strategy: write --mamba-radix-cache-strategy instead."
    ]


def test_a_fix_ends_with_one_full_stop_even_when_the_version_typed_ends_with_one() -> None:
    finding = refusal([*MODEL, "--tokenizer-mode", "fast"], "0.5.23.")
    assert finding.message.endswith("Fix: --tokenizer-mode takes one of auto, slow on SGLang 0.5.23.")
