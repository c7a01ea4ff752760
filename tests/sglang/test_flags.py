"""SGLang's argument parser as data: prefixes, ambiguity, `=`, types, choices, renamed flags (FACTS §0, §2.3, §5)."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.flags import dialect, flag_table, parse_argv

MODEL = ["--model-path", "Qwen/Qwen3.6-27B"]


def error(argv: list[str], sglang: str) -> tuple[str, str | None, str]:
    parsed = parse_argv(argv, sglang)
    assert len(parsed.errors) == 1, parsed
    finding = parsed.errors[0]
    assert finding.raises == "SystemExit" and finding.severity == "error"
    return finding.id, finding.flag, finding.sglang_text or ""


@pytest.mark.parametrize("sglang", ["0.5.11", "0.5.23"])
def test_exact_prefix_and_equals_forms(sglang: str) -> None:
    parsed = parse_argv(
        [*MODEL, "--speculative-num-step", "3", "--speculative-eagle-topk=1", "--tp", "2"], sglang
    )
    assert not parsed.errors
    assert parsed.values["speculative_num_steps"] == 3 and parsed.values["speculative_eagle_topk"] == 1
    assert 2 in (parsed.values.get("tp_size"), parsed.values.get("tensor_parallel_size"))  # dest per wheel
    assert parsed.given["speculative_num_steps"] == "--speculative-num-step"


def test_store_true_flag_and_its_explicit_value_refused() -> None:
    assert parse_argv([*MODEL, "--disable-radix-cache"], "0.5.11").values["disable_radix_cache"] is True
    kind, _, text = error([*MODEL, "--disable-radix-cache=yes"], "0.5.11")
    assert kind == "argv.invalid_value" and "ignored explicit argument 'yes'" in text


def test_ambiguous_prefix_lists_the_candidates() -> None:
    kind, flag, text = error([*MODEL, "--cuda-graph-max-bs", "8"], "0.5.23")
    assert kind == "argv.ambiguous" and flag == "--cuda-graph-max-bs"
    assert text == (
        "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill"
    )
    assert not parse_argv([*MODEL, "--cuda-graph-max-bs", "8"], "0.5.11").errors


def test_ambiguity_is_found_before_any_other_error() -> None:
    kind, _, _ = error(["--port", "x", *MODEL, "--speculative-draft", "m"], "0.5.23")
    assert kind == "argv.ambiguous"


def test_renamed_mamba_flag_per_version() -> None:
    argv = [*MODEL, "--mamba-scheduler-strategy", "extra_buffer"]
    assert parse_argv(argv, "0.5.11").values["mamba_scheduler_strategy"] == "extra_buffer"
    alias = parse_argv(argv, "0.5.17")
    assert not alias.errors and alias.values["mamba_radix_cache_strategy"] == "extra_buffer"
    assert alias.aliases == {"--mamba-scheduler-strategy": "--mamba-radix-cache-strategy"}
    kind, flag, text = error(argv, "0.5.20")
    assert kind == "argv.unrecognized" and flag == "--mamba-scheduler-strategy"
    assert text == "unrecognized arguments: --mamba-scheduler-strategy extra_buffer"
    assert "--mamba-radix-cache-strategy" in parse_argv(argv, "0.5.23").errors[0].message
    kind, flag, _ = error([*MODEL, "--mamba-radix-cache-strategy", "extra_buffer"], "0.5.11")
    assert kind == "argv.unrecognized" and flag == "--mamba-radix-cache-strategy"


def test_invalid_int_and_choice() -> None:
    kind, flag, text = error([*MODEL, "--speculative-num-steps", "two"], "0.5.11")
    assert (kind, flag) == ("argv.invalid_value", "--speculative-num-steps")
    assert text == "argument --speculative-num-steps: invalid int value: 'two'"
    kind, _, text = error([*MODEL, "--speculative-algorithm", "eagle"], "0.5.11")
    assert kind == "argv.invalid_choice" and text.startswith(
        "argument --speculative-algorithm: invalid choice: 'eagle'"
    )
    assert not parse_argv(
        [*MODEL, "--speculative-algorithm", "eagle"], "0.5.12"
    ).errors  # free-form from 0.5.12
    kind, _, text = error([*MODEL, "--mamba-radix-cache-strategy", "v2"], "0.5.23")
    assert kind == "argv.invalid_choice"


def test_missing_value_required_model_and_stray_value() -> None:
    assert error([*MODEL, "--port"], "0.5.11")[0] == "argv.missing_value"
    kind, flag, text = error(["--tp", "2"], "0.5.11")
    assert kind == "argv.required" and text == "the following arguments are required: --model-path/--model"
    kind, flag, text = error([*MODEL, "stray"], "0.5.23")
    assert kind == "argv.unrecognized" and flag is None and text == "unrecognized arguments: stray"


def test_negative_numbers_are_values() -> None:
    assert parse_argv([*MODEL, "--random-seed", "-1"], "0.5.11").values["random_seed"] == -1


def test_tables_and_dialects() -> None:
    assert len(flag_table("0.5.11").flags) > 300 and len(flag_table("0.5.23").flags) > 500
    assert dialect("0.5.11") == dialect("0.5.21") == "0.5.11"
    assert dialect("0.5.22") == dialect("0.5.23.post1") == "0.5.23"
