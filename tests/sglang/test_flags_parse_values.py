"""What an accepted argv holds, flag kind by flag kind: values, lists, booleans, the spelling typed, the
deprecated aliases, and which table and version each SGLang release is read with (FACTS §0, §2.3)."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.flags import Flag, flag_table, parse_argv, parse_version

MODEL = ["--model-path", "Qwen/Qwen3.6-27B"]


def values(argv: list[str], sglang: str = "0.5.11") -> dict[str, object]:
    parsed = parse_argv([*MODEL, *argv], sglang)
    assert not parsed.errors, parsed.errors
    return {dest: value for dest, value in parsed.values.items() if dest != "model_path"}


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("0.5.11", (0, 5, 11)),
        ("0.5.11.post1", (0, 5, 11)),
        ("0.5.23rc2", (0, 5, 23)),
        ("v0.6", (0, 6, 0)),
        ("1", (1, 0, 0)),
        ("", (0, 0, 0)),
    ],
)
def test_a_version_reads_as_three_numbers_missing_ones_zero(text: str, version: tuple[int, int, int]) -> None:
    assert parse_version(text) == version


def test_the_0_5_23_table_starts_at_0_5_14_and_the_0_5_11_table_covers_0_5_13() -> None:
    assert "--cuda-graph-bs-decode" not in flag_table("0.5.13").by_option
    assert "--cuda-graph-bs-decode" in flag_table("0.5.14").by_option
    assert values(["--cuda-graph-bs-decode", "8"], "0.5.14") == {"cuda_graph_bs_decode": [8]}


def test_the_speculative_algorithm_is_a_choice_on_0_5_11_and_free_form_from_0_5_12() -> None:
    assert flag_table("0.5.11").by_option["--speculative-algorithm"].choices == (
        "DFLASH",
        "EAGLE",
        "EAGLE3",
        "NEXTN",
        "STANDALONE",
        "NGRAM",
    )
    assert flag_table("0.5.12").by_option["--speculative-algorithm"].choices is None
    # other flags keep their choices on the same versions
    assert flag_table("0.5.12").by_option["--tokenizer-mode"].choices == ("auto", "slow")
    assert values(["--speculative-algorithm", "MY_DRAFTER"], "0.5.12") == {
        "speculative_algorithm": "MY_DRAFTER"
    }


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("--mamba-scheduler-strategy", "--mamba-radix-cache-strategy"),
        ("--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"),
    ],
)
def test_a_deprecated_alias_reads_exactly_like_the_flag_it_stands_for(old: str, new: str) -> None:
    table = flag_table("0.5.17")
    alias, flag = table.by_option[old], table.by_option[new]
    assert alias == Flag(
        (old,), flag.dest, flag.kind, flag.type, flag.nargs, flag.choices, flag.required, new
    )
    assert flag.alias_of is None
    assert table.flags[-2:] == (
        table.by_option["--mamba-scheduler-strategy"],
        table.by_option["--cuda-graph-max-bs"],
    )


@pytest.mark.parametrize("strategy", ["auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"])
def test_every_mamba_strategy_is_accepted_through_the_old_spelling(strategy: str) -> None:
    parsed = parse_argv([*MODEL, "--mamba-scheduler-strategy", strategy], "0.5.19")
    assert not parsed.errors and parsed.values["mamba_radix_cache_strategy"] == strategy


def test_the_old_cuda_graph_max_bs_is_an_integer_alias_through_0_5_19() -> None:
    parsed = parse_argv([*MODEL, "--cuda-graph-max-bs", "16"], "0.5.14")
    assert not parsed.errors and parsed.values["cuda_graph_max_bs_decode"] == 16
    assert parsed.aliases == {"--cuda-graph-max-bs": "--cuda-graph-max-bs-decode"}
    [refused] = parse_argv([*MODEL, "--cuda-graph-max-bs", "many"], "0.5.14").errors
    assert refused.sglang_text == "argument --cuda-graph-max-bs: invalid int value: 'many'"


def test_an_alias_typed_as_a_prefix_is_reported_under_that_prefix() -> None:
    parsed = parse_argv([*MODEL, "--mamba-scheduler", "auto"], "0.5.19")
    assert parsed.aliases == {"--mamba-scheduler": "--mamba-radix-cache-strategy"}
    assert parsed.given["mamba_radix_cache_strategy"] == "--mamba-scheduler"


def test_the_table_is_built_once_per_version() -> None:
    assert flag_table("0.5.11") is flag_table("0.5.11")
    assert flag_table("0.5.11").sglang == "0.5.11" and flag_table("0.5.23").sglang == "0.5.23"


def test_boolean_optional_flags_take_both_spellings_and_their_prefixes() -> None:
    assert values(["--enable-tf32-matmul"], "0.5.23") == {"enable_tf32_matmul": True}
    assert values(["--no-enable-tf32-matmul"], "0.5.23") == {"enable_tf32_matmul": False}
    assert values(["--no-enable-tf32"], "0.5.23") == {"enable_tf32_matmul": False}
    assert values(["--enable-tf32"], "0.5.23") == {"enable_tf32_matmul": True}


def test_a_flag_given_twice_keeps_the_last_value_and_spelling() -> None:
    parsed = parse_argv([*MODEL, "--port", "1", "--por", "2"], "0.5.11")
    assert parsed.values["port"] == 2 and parsed.given["port"] == "--por"


def test_the_spelling_typed_is_kept_per_flag() -> None:
    parsed = parse_argv(["--model", "m", "--speculative-num-st=2", "--disable-radix"], "0.5.11")
    assert parsed.given == {
        "model_path": "--model",
        "speculative_num_steps": "--speculative-num-st",
        "disable_radix_cache": "--disable-radix",
    }
    assert parsed.values == {"model_path": "m", "speculative_num_steps": 2, "disable_radix_cache": True}
    assert parsed.aliases == {} and parsed.unknown == []


def test_values_are_converted_by_the_flags_type() -> None:
    assert values(["--mem-fraction-static", "0.8"]) == {"mem_fraction_static": 0.8}
    assert values(["--mem-fraction-static", "-.5"]) == {"mem_fraction_static": -0.5}
    assert values(["--extra-metric-labels", '{"team": "a"}']) == {"extra_metric_labels": {"team": "a"}}
    assert values(["--port=8000"]) == {"port": 8000}
    # a flag without a type keeps the text as typed
    assert values(["--quantization-param-path", "4096"]) == {"quantization_param_path": "4096"}
    # SGLang reads the context length with human_readable_int (issue 26)
    assert values(["--context-length", "4096"]) == {"context_length": 4096}
    assert values(["--context-length", "32k"], "0.5.23") == {"context_length": 32000}
    assert values(["--tokenizer-path="]) == {"tokenizer_path": ""}


def test_an_integer_choice_is_checked_as_the_number() -> None:
    assert values(["--log-requests-level", "2"], "0.5.23") == {"log_requests_level": 2}


def test_negative_numbers_and_a_lone_dash_are_values_not_flags() -> None:
    assert values(["--random-seed", "-7"]) == {"random_seed": -7}
    assert values(["--schedule-conservativeness", "-1.5"]) == {"schedule_conservativeness": -1.5}
    assert values(["--tokenizer-path", "-"]) == {"tokenizer_path": "-"}


def test_a_dashed_token_with_a_space_is_a_value() -> None:
    assert values(["--served-model-name", "--my model"]) == {"served_model_name": "--my model"}


def test_an_optional_value_may_be_left_out() -> None:
    assert values(["--model-checksum"], "0.5.23") == {"model_checksum": None}
    assert values(["--model-checksum", "--port", "1"], "0.5.23") == {"model_checksum": None, "port": 1}
    assert values(["--model-checksum", "abc", "--port", "1"], "0.5.23") == {
        "model_checksum": "abc",
        "port": 1,
    }


def test_list_flags_read_up_to_the_next_flag() -> None:
    assert values(["--lora-paths"]) == {"lora_paths": []}
    assert values(["--lora-paths", "a", "b", "--port", "1"]) == {"lora_paths": ["a", "b"], "port": 1}
    assert values(["--cuda-graph-bs", "1", "2", "4"]) == {"cuda_graph_bs": [1, 2, 4]}
    assert values(["--cuda-graph-bs", "8", "--port", "1"]) == {"cuda_graph_bs": [8], "port": 1}


def test_a_list_flags_values_stop_at_an_unknown_flag_too() -> None:
    parsed = parse_argv([*MODEL, "--lora-paths", "a", "--frobnicate", "b"], "0.5.11")
    assert parsed.values["lora_paths"] == ["a"]
    assert parsed.unknown == ["--frobnicate"]
    assert parsed.errors[0].sglang_text == "unrecognized arguments: --frobnicate b"


def test_an_optional_value_takes_one_value_at_most() -> None:
    parsed = parse_argv([*MODEL, "--model-checksum", "abc", "stray"], "0.5.23")
    assert parsed.values["model_checksum"] == "abc"
    assert [e.sglang_text for e in parsed.errors] == ["unrecognized arguments: stray"]
