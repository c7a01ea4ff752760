"""check(): the whole verdict on an argv, from the argv parser, the deprecated-alias notices and the rule
tables, with the host's facts (GPU, environment, memory) and the model's architecture reaching the rules."""

from __future__ import annotations

from collections.abc import Sequence

from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.rules import check, errors_of

QWEN3 = ["--model-path", "Qwen/Qwen3-8B"]
HYBRID = ["--model-path", "Qwen/Qwen3.6-27B"]
NEXTN = ["--speculative-algorithm", "NEXTN"]


def ids(findings: Sequence[Finding]) -> list[str]:
    return [f.id for f in findings]


def test_a_clean_argv_is_ok_with_the_values_sglang_would_hold() -> None:
    argv = (*QWEN3, *NEXTN)
    result = check(argv, sglang="0.5.23", compute_capability="9.0")
    assert result.ok is True and result.errors == []
    assert (result.sglang, result.rule_set, result.warnings) == ("0.5.23", "0.5.23", ())
    assert result.argv == list(argv) and isinstance(result.argv, list)
    assert ids(result.notices) == ["spec.nextn_is_eagle", "spec.max_running_requests_48", "spec.auto_params"]
    values = result.values
    assert values["model_path"] == "Qwen/Qwen3-8B" and values["speculative_algorithm"] == "EAGLE"
    assert (values["speculative_num_steps"], values["speculative_eagle_topk"]) == (3, 1)
    assert (values["max_running_requests"], values["attention_backend"]) == (48, "fa3")


def test_a_version_outside_the_rule_sets_is_checked_with_the_nearest_and_warns() -> None:
    older = check(QWEN3, sglang="0.5.9")
    assert older.rule_set == "0.5.11" and len(older.warnings) == 1
    assert older.warnings[0].startswith("SGLang 0.5.9 is older than the oldest rule set (0.5.11)")
    newer = check(QWEN3, sglang="0.6.0")
    assert newer.rule_set == "0.5.23" and newer.warnings[0].startswith(
        "SGLang 0.6.0 is newer than the newest"
    )
    assert check(QWEN3, sglang="0.5.15").warnings == ()


def test_argv_errors_come_before_the_rules_errors_and_only_the_first_is_sglangs() -> None:
    argv = [*HYBRID, *NEXTN, "--speculative-eagle-topk", "1", "--bogus", "3"]
    result = check(argv, sglang="0.5.11", compute_capability="8.6")
    assert result.ok is False
    assert ids(result.errors) == [
        "argv.unrecognized",
        "mamba.speculative_needs_extra_buffer",
        "spec.topk_without_steps",
    ]
    assert [e.sglang_first for e in result.errors] == [True, False, False]
    assert result.values["model_path"] == "Qwen/Qwen3.6-27B"


def test_an_argv_that_cannot_be_read_runs_no_rules_and_holds_no_values() -> None:
    result = check([*HYBRID, *NEXTN, "--tp", "two"], sglang="0.5.11", compute_capability="8.6")
    assert ids(result.errors) == ["argv.invalid_value"] and result.errors[0].sglang_first is True
    assert result.notices == [] and result.values == {} and result.ok is False


def test_a_missing_model_is_reported_and_the_rules_still_run() -> None:
    result = check(["--tp", "2", *NEXTN, "--speculative-num-steps", "2"], sglang="0.5.23")
    assert ids(result.errors) == ["argv.required", "spec.steps_without_topk"]
    assert result.values["tp_size"] == 2


def test_deprecated_alias_notices_come_before_the_rules_notices() -> None:
    result = check([*QWEN3, "--mamba-scheduler-strategy", "auto", *NEXTN], sglang="0.5.15")
    assert ids(result.notices)[:2] == ["argv.deprecated_alias", "spec.nextn_is_eagle"]
    assert result.notices[0].message == (
        "SGLang 0.5.15 accepts --mamba-scheduler-strategy as a deprecated alias of --mamba-radix-cache-strategy;"
        " 0.5.20 removes it. Write --mamba-radix-cache-strategy."
    )
    assert result.ok


def test_deprecated_alias_notices_stay_when_the_argv_cannot_be_read() -> None:
    result = check([*QWEN3, "--mamba-scheduler-strategy", "auto", "--tp", "x"], sglang="0.5.15")
    assert ids(result.notices) == ["argv.deprecated_alias"] and ids(result.errors) == ["argv.invalid_value"]


def test_the_architecture_is_guessed_from_the_model_unless_given() -> None:
    argv = [*HYBRID, *NEXTN]
    guessed = check(argv, sglang="0.5.11", compute_capability="9.0")
    assert ids(guessed.errors) == ["mamba.speculative_needs_extra_buffer"]
    assert "Qwen3_5ForConditionalGeneration (hybrid GDN)" in guessed.errors[0].message
    assert check(argv, sglang="0.5.11", compute_capability="9.0", architecture="Qwen3ForCausalLM").ok
    given = check(
        [*QWEN3, *NEXTN], sglang="0.5.11", compute_capability="9.0", architecture="Qwen3NextForCausalLM"
    )
    assert ids(given.errors) == ["mamba.speculative_needs_extra_buffer"]
    assert "Qwen3NextForCausalLM (hybrid GDN)" in given.errors[0].message


def test_the_compute_capability_reaches_the_rules() -> None:
    assert check(QWEN3, sglang="0.5.23", compute_capability="9.0").values["attention_backend"] == "fa3"
    blackwell = check(QWEN3, sglang="0.5.23", compute_capability="10.0").values
    assert (blackwell["attention_backend"], blackwell["page_size"]) == ("trtllm_mha", 64)
    assert check(QWEN3, sglang="0.5.23").values["attention_backend"] == "flashinfer"


def test_the_environment_reaches_the_rules() -> None:
    argv = [
        *QWEN3,
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
    ]
    on = check(argv, sglang="0.5.11", compute_capability="8.6")
    off = check(argv, sglang="0.5.11", compute_capability="8.6", env={"SGLANG_ENABLE_SPEC_V2": "0"})
    assert "spec.v2" in ids(on.notices) and "spec.v1" not in ids(on.notices)
    assert "spec.v1" in ids(off.notices) and "spec.v2" not in ids(off.notices)


def test_the_gpus_memory_reaches_the_rules() -> None:
    argv = [*QWEN3, "--page-size", "48"]
    known = check(argv, sglang="0.5.11", compute_capability="8.6", gpu_memory_mb=49140)
    assert "4096, which SGLang picks from the GPU's memory" in known.errors[0].message
    assert known.values["chunked_prefill_candidates"] == (4096,)
    unknown = check(argv, sglang="0.5.11", compute_capability="8.6")
    assert "2048 or 4096 or 8192 or 16384" in unknown.errors[0].message


def test_errors_of_is_checks_errors_in_order_with_the_first_marked() -> None:
    argv = [*HYBRID, *NEXTN, "--speculative-eagle-topk", "1", "--bogus", "3"]
    facts = {"sglang": "0.5.11", "compute_capability": "8.6"}
    errors = errors_of(argv, **facts)
    assert errors == check(argv, sglang="0.5.11", compute_capability="8.6").errors
    assert ids(errors)[0] == "argv.unrecognized" and errors[0].sglang_first
    assert errors_of(QWEN3, sglang="0.5.23") == []
