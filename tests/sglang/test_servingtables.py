"""The rules beyond speculation (servingtables, issue 26), at their boundaries, each as real SGLang decided
it on the wheels (tests/tools/sglang_agreement.py's worker, H100 persona, both versions): the log level, the
checkpoint's context length and quantization, GPT-OSS's attention backends, data parallelism without
attention DP, the hierarchical cache on a decode server, deterministic inference, LoRA and two-batch
overlap. A fact of the model that is not known gives no finding."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from gdnconsole.sglang import flags as flagmod
from gdnconsole.sglang.models import context_length_of, quant_method_of
from gdnconsole.sglang.rules import CheckResult, check

BOTH = ("0.5.11", "0.5.23")
QWEN3: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "max_position_embeddings": 40960,
}
QWEN3_FP8: dict[str, Any] = {**QWEN3, "quantization_config": {"quant_method": "fp8"}}
LLAMA_AWQ: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "max_position_embeddings": 8192,
    "quantization_config": {"quant_method": "awq", "bits": 4},
}
GPT_OSS: dict[str, Any] = {
    "architectures": ["GptOssForCausalLM"],
    "max_position_embeddings": 131072,
    "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096},
    "quantization_config": {"quant_method": "mxfp4"},
}


def run(
    sglang: str,
    *flags: str,
    config: Mapping[str, Any] | None = QWEN3,
    cc: str = "9.0",
    env: Mapping[str, str] | None = None,
) -> CheckResult:
    return check(
        ["--model-path", "/models/m", *flags],
        sglang=sglang,
        compute_capability=cc,
        gpus=8,
        model_config=config,
        env=env,
        architecture=None if config is None else str(config["architectures"][0]),
    )


def first(sglang: str, *flags: str, **facts: Any) -> tuple[str, str | None, str | None] | None:
    """The error SGLang raises: (id, exception, SGLang's own text); None when it accepts."""
    result = run(sglang, *flags, **facts)
    if result.ok:
        return None
    e = result.errors[0]
    return e.id, e.raises, e.sglang_text


# -- the log level -------------------------------------------------------------------------------------


@pytest.mark.parametrize("sglang", BOTH)
@pytest.mark.parametrize("level", ["info", "WARN", "fatal", "notset", "critical", "Warning"])
def test_every_level_python_logging_names_is_taken(sglang: str, level: str) -> None:
    assert run(sglang, "--log-level", level).ok


@pytest.mark.parametrize("sglang", BOTH)
def test_a_level_logging_lacks_is_sglangs_attribute_error(sglang: str) -> None:
    assert first(sglang, "--log-level", "verbose") == (
        "logging.unknown_level",
        "AttributeError",
        "module 'logging' has no attribute 'VERBOSE'",
    )
    result = run(sglang, "--log-level", "trace")
    assert result.errors[0].flag == "--log-level" and "Fix: one of debug, info" in result.errors[0].message


@pytest.mark.parametrize("sglang", BOTH)
def test_basic_format_is_a_string_in_logging_and_basicconfig_refuses_it(sglang: str) -> None:
    assert first(sglang, "--log-level", "basic_format") == (
        "logging.level_is_a_format",
        "ValueError",
        "Unknown level: '%(levelname)s:%(name)s:%(message)s'",
    )


@pytest.mark.parametrize("sglang", BOTH)
def test_the_http_log_level_is_not_read_at_startup(sglang: str) -> None:
    assert run(sglang, "--log-level-http", "verbose").ok


# -- the checkpoint's context length -----------------------------------------------------------------


@pytest.mark.parametrize("sglang", BOTH)
def test_context_length_up_to_the_models_is_taken_one_more_is_refused(sglang: str) -> None:
    assert run(sglang, "--context-length", "40960").ok
    error = run(sglang, "--context-length", "40961").errors[0]
    assert (error.id, error.raises, error.flag) == (
        "model.context_length_above_model",
        "ValueError",
        "--context-length",
    )
    assert error.sglang_text == (
        "Warning: User-specified context_length (40961) is greater than the derived context_length (40960). "
        "This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length may "
        "differ from max_position_embeddings in the model's config. To allow overriding this maximum, set the "
        "env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
    )
    assert "(40960, from its config.json)" in error.message


@pytest.mark.parametrize("sglang", BOTH)
def test_context_length_takes_sglangs_suffixes(sglang: str) -> None:
    assert run(sglang, "--context-length", "8k", config=LLAMA_AWQ).ok  # 8000 <= 8192
    text = run(sglang, "--context-length", "9k", config=LLAMA_AWQ).errors[0].sglang_text or ""
    assert text.startswith("Warning: User-specified context_length (9000) is greater than the derived ")
    assert run(sglang, "--context-length", "8Ki", config=LLAMA_AWQ).ok  # 8192
    assert not run(sglang, "--context-length", "9Ki", config=LLAMA_AWQ).ok


@pytest.mark.parametrize("sglang", BOTH)
def test_a_longer_context_is_allowed_by_sglangs_variable(sglang: str) -> None:
    allowed = {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"}
    assert run(sglang, "--context-length", "100000", env=allowed).ok


@pytest.mark.parametrize("sglang", BOTH)
def test_no_config_or_no_context_key_gives_no_finding(sglang: str) -> None:
    assert run(sglang, "--context-length", "10000000", config=None).ok
    assert run(sglang, "--context-length", "10000000", config={"architectures": ["LlamaForCausalLM"]}).ok


def test_the_derived_context_length_is_sglangs() -> None:
    assert context_length_of(GPT_OSS) == 131072  # yarn keeping its original length: no factor
    assert context_length_of({"max_position_embeddings": 4096, "rope_scaling": {"factor": 4.0}}) == 16384
    llama3 = {"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}
    assert context_length_of(llama3) == 131072
    assert context_length_of({"seq_length": 2048, "max_position_embeddings": 4096}) == 2048  # first key wins
    assert context_length_of({"text_config": {"max_position_embeddings": 262144}}) == 262144
    assert context_length_of({"max_position_embeddings": "many"}) is None
    assert context_length_of({"max_position_embeddings": True}) is None


def test_human_readable_ints_are_sglangs() -> None:
    assert [flagmod.human_readable_int(t) for t in ("32k", "1M", "25.6k", "1Ki", "2Mi", " 7 ")] == [
        32000, 1000000, 25600, 1024, 2097152, 7,
    ]  # fmt: skip
    for bad in ("1.5Ki", "abc", "1m", "-"):
        with pytest.raises(ValueError):
            flagmod.human_readable_int(bad)


@pytest.mark.parametrize("sglang", BOTH)
def test_a_context_length_sglang_cannot_read_is_argparses_refusal(sglang: str) -> None:
    assert [e.id for e in run(sglang, "--context-length", "lots").errors] == ["argv.invalid_value"]


# -- the checkpoint's quantization -------------------------------------------------------------------


@pytest.mark.parametrize("sglang", BOTH)
def test_another_quantization_than_the_checkpoints_is_refused(sglang: str) -> None:
    assert first(sglang, "--quantization", "awq", config=QWEN3_FP8) == (
        "model.quantization_mismatch",
        "ValueError",
        "Quantization method specified in the model config (fp8) does not match the quantization method "
        "specified in the `quantization` argument (awq).",
    )
    assert run(sglang, "--quantization", "fp8", config=QWEN3_FP8).ok
    assert run(sglang, "--quantization", "fp8", config=QWEN3).ok  # online quantization of a bf16 checkpoint
    assert not run(sglang, "--quantization", "fp8", config=GPT_OSS).ok


def test_fp8_checkpoints_take_modelopt_fp4_from_0_5_23() -> None:
    assert first("0.5.11", "--quantization", "modelopt_fp4", config=QWEN3_FP8) is not None
    assert run("0.5.23", "--quantization", "modelopt_fp4", config=QWEN3_FP8).ok
    assert run("0.5.23", "--quantization", "quark_mxfp4", config=QWEN3_FP8).ok  # online requantization


@pytest.mark.parametrize("sglang", BOTH)
def test_compressed_tensors_checkpoints_take_w8a8(sglang: str) -> None:
    ct = {**QWEN3, "quantization_config": {"quant_method": "compressed-tensors"}}
    assert run(sglang, "--quantization", "w8a8_int8", config=ct).ok
    assert run(sglang, "--quantization", "w8a8_fp8", config=ct).ok
    assert not run(sglang, "--quantization", "fp8", config=ct).ok


@pytest.mark.parametrize("sglang", BOTH)
@pytest.mark.parametrize("user", ["awq_marlin", "marlin", "moe_wna16", "modelopt"])
def test_what_an_override_may_accept_gives_no_finding(sglang: str, user: str) -> None:
    ids = [e.id for e in run(sglang, "--quantization", user, config=LLAMA_AWQ).errors]
    assert "model.quantization_mismatch" not in ids


@pytest.mark.parametrize("sglang", BOTH)
def test_unquant_and_unread_checkpoints_give_no_mismatch(sglang: str) -> None:
    assert "model.quantization_mismatch" not in [
        e.id for e in run(sglang, "--quantization", "unquant", config=QWEN3_FP8).errors
    ]
    gptq = {**QWEN3, "quantization_config": {"quant_method": "gptq"}}
    assert run(sglang, "--quantization", "awq", config=gptq).ok  # gptq's overrides are not modelled
    assert run(sglang, "--quantization", "awq", config={**QWEN3, "quantization_config": {"bits": 4}}).ok


@pytest.mark.parametrize("sglang", BOTH)
def test_the_checkpoints_method_is_what_sglang_then_holds(sglang: str) -> None:
    assert run(sglang, config=QWEN3_FP8).values["quantization"] == "fp8"
    assert run(sglang, config=LLAMA_AWQ).values["quantization"] is None  # may become awq_marlin on the GPU
    assert run(sglang, config=QWEN3).values["quantization"] is None


def test_quant_method_is_read_lowercased_from_either_config() -> None:
    assert quant_method_of({"quantization_config": {"quant_method": "FP8"}}) == "fp8"
    assert (
        quant_method_of({"compression_config": {"quant_method": "compressed-tensors"}})
        == "compressed-tensors"
    )
    assert quant_method_of({"text_config": {"quantization_config": {"quant_method": "awq"}}}) == "awq"
    assert quant_method_of({"quantization_config": "fp8"}) is None
    assert quant_method_of({}) is None


def test_methods_0_5_23_lists_but_lacks_on_nvidia_gpus() -> None:
    for method in ("gptq", "mlx_q4", "mlx_q8"):
        found = first("0.5.23", "--quantization", method)
        assert found is not None and found[:2] == ("model.unknown_quantization", "ValueError")
        assert (found[2] or "").startswith(f"Unknown quantization method: {method}. Must be one of ['fp8', ")
    assert run("0.5.23", "--quantization", "gptq_marlin").ok
    assert first("0.5.11", "--quantization", "gptq") is None  # 0.5.11 registers gptq on CUDA


def test_a_mismatch_comes_before_the_unknown_method() -> None:
    found = first("0.5.23", "--quantization", "gptq", config=QWEN3_FP8)
    assert found is not None and found[0] == "model.quantization_mismatch"


# -- GPT-OSS's attention backends --------------------------------------------------------------------


@pytest.mark.parametrize("sglang", BOTH)
def test_gpt_oss_runs_on_its_backends_only(sglang: str) -> None:
    assert run(sglang, "--attention-backend", "triton", config=GPT_OSS).ok
    assert run(
        sglang, "--prefill-attention-backend", "fa3", "--decode-attention-backend", "triton", config=GPT_OSS
    ).ok
    error = run(sglang, "--attention-backend", "flashinfer", config=GPT_OSS).errors[0]
    assert (error.id, error.raises, error.flag) == (
        "model.gpt_oss_attention_backend",
        "AssertionError",
        "--attention-backend",
    )
    assert (error.sglang_text or "").endswith(
        "attention backend, but got the following backends\n- Prefill: flashinfer\n- Decode: flashinfer\n"
    )


@pytest.mark.parametrize("sglang", BOTH)
def test_gpt_oss_with_only_one_phase_set_has_none_for_the_other(sglang: str) -> None:
    text = run(sglang, "--prefill-attention-backend", "fa3", config=GPT_OSS).errors[0].sglang_text or ""
    assert text.endswith("- Prefill: fa3\n- Decode: None\n")


@pytest.mark.parametrize(("cc", "backend"), [("10.0", "trtllm_mha"), ("9.0", "fa3"), ("8.6", "triton")])
@pytest.mark.parametrize("sglang", BOTH)
def test_gpt_oss_picks_its_backend_for_the_gpu(sglang: str, cc: str, backend: str) -> None:
    result = run(sglang, config=GPT_OSS, cc=cc)
    assert result.ok and result.values["attention_backend"] == backend


def test_other_models_take_any_backend() -> None:
    assert run("0.5.23", "--attention-backend", "flashinfer").ok


# -- data parallelism ----------------------------------------------------------------------------------


def test_0_5_23_refuses_dp_replicas_with_attention_dp_before_the_tp_assert() -> None:
    assert first("0.5.23", "--dp", "2", "--attn-dp-size", "2") == (
        "parallel.dp_with_attn_dp",
        "ValueError",
        "--dp-size 2 with --attn-dp-size 2: data-parallel replicas combined with attention data parallelism "
        "are not supported.",
    )
    # --dp N --enable-dp-attention is read as --attn-dp-size N first, unless --attn-dp-size is given
    assert run("0.5.23", "--tp", "2", "--dp", "2", "--enable-dp-attention").ok
    found = first("0.5.23", "--tp", "4", "--dp", "2", "--enable-dp-attention", "--attn-dp-size", "4")
    assert found is not None and found[0] == "parallel.dp_with_attn_dp"
    assert run("0.5.23", "--dp", "2").ok  # replicas alone


@pytest.mark.parametrize("sglang", BOTH)
def test_the_dp_lm_head_needs_attention_dp(sglang: str) -> None:
    text = (
        "Please enable dp attention when setting enable_dp_lm_head. "
        if sglang == "0.5.11"
        else "--enable-dp-lm-head requires attention DP (--attn-dp-size)."
    )
    assert first(sglang, "--dp", "4", "--enable-dp-lm-head") == (
        "parallel.dp_lm_head_without_dp_attention",
        "AssertionError",
        text,
    )
    assert run(sglang, "--enable-dp-lm-head").ok  # one DP rank: SGLang turns it off
    assert run(sglang, "--tp", "2", "--dp", "2", "--enable-dp-attention", "--enable-dp-lm-head").ok


def test_0_5_23_takes_the_dp_lm_head_with_attn_dp_size() -> None:
    assert run("0.5.23", "--tp", "2", "--attn-dp-size", "2", "--enable-dp-lm-head").ok


def test_two_batch_overlap_needs_an_all_to_all_backend_or_0_5_23s_attention_dp() -> None:
    assert first("0.5.11", "--enable-two-batch-overlap") == (
        "parallel.two_batch_overlap_needs_a2a",
        "ValueError",
        "When enabling two batch overlap, moe_a2a_backend cannot be 'none'.",
    )
    found = first("0.5.23", "--enable-two-batch-overlap")
    assert found is not None and found[:2] == ("parallel.two_batch_overlap_needs_a2a", "ValueError")
    assert (found[2] or "").startswith("When enabling two batch overlap without an EP a2a backend")
    for sglang in BOTH:
        assert run(sglang, "--enable-two-batch-overlap", "--moe-a2a-backend", "deepep").ok
    assert run("0.5.23", "--tp", "2", "--attn-dp-size", "2", "--enable-two-batch-overlap").ok
    assert not run(
        "0.5.11", "--tp", "2", "--dp", "2", "--enable-dp-attention", "--enable-two-batch-overlap"
    ).ok


# -- caches, disaggregation, deterministic inference ---------------------------------------------------


@pytest.mark.parametrize("sglang", BOTH)
def test_the_hierarchical_cache_needs_the_radix_cache(sglang: str) -> None:
    found = first(sglang, "--enable-hierarchical-cache", "--disable-radix-cache")
    assert found is not None and found[:2] == ("cache.hicache_without_radix", "ValueError")
    assert run(sglang, "--enable-hierarchical-cache").ok


@pytest.mark.parametrize("sglang", BOTH)
def test_a_decode_server_has_no_radix_cache_for_the_hierarchical_cache(sglang: str) -> None:
    decode = ("--disaggregation-mode", "decode", "--enable-hierarchical-cache")
    found = first(sglang, *decode)
    assert found is not None and found[0] == "cache.hicache_without_radix"
    radix = ("--disaggregation-decode-enable-radix-cache", "--disaggregation-transfer-backend", "nixl")
    assert run(sglang, *decode, *radix).ok
    assert run(sglang, "--disaggregation-mode", "prefill", "--enable-hierarchical-cache").ok


@pytest.mark.parametrize(
    ("sglang", "backend", "ok"),
    [("0.5.11", "fa3", True), ("0.5.11", "fa4", False), ("0.5.11", "flashmla", False),
     ("0.5.23", "fa4", True), ("0.5.23", "triton", True), ("0.5.23", "trtllm_mha", False)],
)  # fmt: skip
def test_deterministic_inference_takes_a_few_attention_backends(sglang: str, backend: str, ok: bool) -> None:
    result = run(sglang, "--enable-deterministic-inference", "--attention-backend", backend)
    ids = [e.id for e in result.errors]
    assert ("deterministic.attention_backend" not in ids) is ok
    if not ok:
        text = next(e.sglang_text for e in result.errors if e.id == "deterministic.attention_backend")
        assert (text or "").endswith(f"but you explicitly specified '{backend}'.")
    without = [e.id for e in run(sglang, "--attention-backend", backend).errors]
    assert "deterministic.attention_backend" not in without


def test_deterministic_inference_meets_gpt_oss_default_on_blackwell() -> None:
    found = first("0.5.23", "--enable-deterministic-inference", config=GPT_OSS, cc="10.0")
    assert found is not None and found[0] == "deterministic.attention_backend"
    assert run("0.5.23", "--enable-deterministic-inference", config=GPT_OSS, cc="9.0").ok


# -- LoRA ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sglang", BOTH)
def test_lora_needs_adapters_or_their_shape(sglang: str) -> None:
    found = first(sglang, "--enable-lora")
    assert found == (
        "lora.needs_paths_or_shape",
        "AssertionError",
        "When no initial --lora-paths is provided, you need to specify both --max-lora-rank and "
        "--lora-target-modules for LoRA initialization.",
    )
    assert not run(sglang, "--enable-lora", "--max-lora-rank", "8").ok
    assert run(sglang, "--enable-lora", "--max-lora-rank", "8", "--lora-target-modules", "q_proj").ok
    assert run(sglang, "--lora-paths", "a=/x").ok  # paths turn LoRA on and are enough
    assert run(sglang, "--max-lora-rank", "8").ok  # LoRA off: nothing checked


@pytest.mark.parametrize("sglang", BOTH)
def test_lora_all_modules_stands_alone(sglang: str) -> None:
    shape = ("--enable-lora", "--max-lora-rank", "8", "--lora-target-modules")
    assert run(sglang, *shape, "all").ok
    found = first(sglang, *shape, "all", "q_proj")
    assert found is not None and found[0] == "lora.all_with_other_modules"


@pytest.mark.parametrize("sglang", BOTH)
def test_lora_batch_and_loaded_counts(sglang: str) -> None:
    found = first(sglang, "--lora-paths", "a=/x", "--max-loras-per-batch", "0")
    assert found == (
        "lora.max_loras_per_batch_positive",
        "AssertionError",
        "max_loras_per_batch must be positive",
    )
    assert first(sglang, "--max-loras-per-batch", "0") is not None  # checked with LoRA off too
    assert run(sglang, "--lora-paths", "a=/x", "--max-loras-per-batch", "1").ok
    below = first(sglang, "--lora-paths", "a=/x", "--max-loaded-loras", "7")
    assert below == (
        "lora.max_loaded_below_per_batch",
        "AssertionError",
        "max_loaded_loras should be greater than or equal to max_loras_per_batch. "
        "max_loaded_loras=7, max_loras_per_batch=8",
    )
    assert run(sglang, "--lora-paths", "a=/x", "--max-loaded-loras", "8").ok
    more = first(
        sglang, "--lora-paths", "a=/x", "b=/y", "--max-loaded-loras", "1", "--max-loras-per-batch", "1"
    )
    assert more == (
        "lora.more_paths_than_loaded",
        "AssertionError",
        "The number of LoRA paths should not exceed max_loaded_loras. max_loaded_loras=1, lora_paths=2",
    )
    assert run(
        sglang, "--lora-paths", "a=/x", "b=/y", "--max-loaded-loras", "2", "--max-loras-per-batch", "2"
    ).ok


@pytest.mark.parametrize("sglang", BOTH)
def test_lora_overlap_loading_pins_at_most_twice_the_batch(sglang: str) -> None:
    shape = (
        "--enable-lora",
        "--max-lora-rank",
        "8",
        "--lora-target-modules",
        "q_proj",
        "--enable-lora-overlap-loading",
    )
    assert run(sglang, *shape, "--max-loaded-loras", "16").ok
    found = first(sglang, *shape, "--max-loaded-loras", "17")
    assert found is not None and found[:2] == ("lora.overlap_loading_limit", "AssertionError")
    assert (found[2] or "").endswith("must be less than or equal to double --max-loras-per-batch: 16")
    assert first(sglang, *shape) is not None  # no --max-loaded-loras at all
    assert run(sglang, *shape, "--max-loras-per-batch", "4", "--max-loaded-loras", "8").ok
    assert not run(sglang, *shape, "--max-loras-per-batch", "4", "--max-loaded-loras", "9").ok


# -- parser names: argparse choices from SGLang's registries ----------------------------------------


@pytest.mark.parametrize("sglang", BOTH)
@pytest.mark.parametrize(
    ("flag", "name"),
    [("--tool-call-parser", "qwen"), ("--tool-call-parser", "llama3"), ("--tool-call-parser", "gpt-oss"),
     ("--reasoning-parser", "qwen3"), ("--reasoning-parser", "deepseek-r1"), ("--reasoning-parser", "gpt-oss")],
)  # fmt: skip
def test_real_parser_names_are_taken(sglang: str, flag: str, name: str) -> None:
    assert run(sglang, flag, name).ok


@pytest.mark.parametrize("sglang", BOTH)
@pytest.mark.parametrize(
    ("flag", "name"),
    [("--tool-call-parser", "json"), ("--reasoning-parser", "deepseek"), ("--tool-call-parser", "qwen3")],
)
def test_names_no_registry_holds_are_argparses_refusal(sglang: str, flag: str, name: str) -> None:
    result = run(sglang, flag, name)
    assert [(e.id, e.raises) for e in result.errors] == [("argv.invalid_choice", "SystemExit")]


def test_auto_is_a_parser_name_from_0_5_14_only() -> None:
    assert run("0.5.23", "--tool-call-parser", "auto", "--reasoning-parser", "auto").ok
    assert run("0.5.14", "--tool-call-parser", "auto").ok
    assert not run("0.5.11", "--tool-call-parser", "auto").ok


# -- deterministic inference on absorbed-MLA models and newer GPUs ------------------------------------

DEEPSEEK: dict[str, Any] = {"architectures": ["DeepseekV3ForCausalLM"], "max_position_embeddings": 163840}


def test_0_5_23_runs_absorbed_mla_deterministically_on_fa4_only_on_sm100() -> None:
    flags = ("--enable-deterministic-inference", "--attention-backend", "fa4")
    found = first("0.5.23", *flags, config=DEEPSEEK, cc="9.0")
    assert found is not None and found[:2] == ("deterministic.mla_fa4_needs_sm100", "ValueError")
    assert (found[2] or "").startswith(
        "Deterministic inference with absorbed-MLA models on the fa4 attention"
    )
    assert "deterministic.mla_fa4_needs_sm100" not in [
        e.id for e in run("0.5.23", *flags, config=DEEPSEEK, cc="10.0").errors
    ]
    assert run("0.5.23", *flags, cc="9.0").ok  # a model without absorbed MLA


@pytest.mark.parametrize(("sglang", "backend"), [("0.5.11", "flashinfer"), ("0.5.23", "flashinfer")])
def test_absorbed_mla_models_take_the_radix_deterministic_backends_only(sglang: str, backend: str) -> None:
    found = first(sglang, "--enable-deterministic-inference", "--attention-backend", backend, config=DEEPSEEK)
    which = "absorbed-MLA models" if sglang == "0.5.23" else "DeepSeek models"
    assert found is not None and found[:2] == ("deterministic.mla_backend", "ValueError")
    assert (found[2] or "").endswith(f"with {which}. But you're using {backend}.")
    assert (
        first(sglang, "--enable-deterministic-inference", "--attention-backend", "triton", config=DEEPSEEK)
        is None
    )


@pytest.mark.parametrize(
    ("cc", "backend"), [("10.0", "flashinfer"), ("12.0", "flashinfer"), ("9.0", "fa3"), ("8.6", "fa3")]
)
def test_deterministic_inference_picks_a_backend_for_the_gpu(cc: str, backend: str) -> None:
    """0.5.23 checks deterministic inference before its attention hook picks a backend (measured)."""
    result = run("0.5.23", "--enable-deterministic-inference", cc=cc)
    assert result.ok and result.values["attention_backend"] == backend


def test_0_5_11_on_blackwell_refuses_its_own_default_backend_for_deterministic_inference() -> None:
    """0.5.11 picks trtllm_mha on SM100 before it checks deterministic inference, then refuses it as if
    the operator had named it (measured on the wheel, B200 persona); 0.5.23 checks first."""
    found = first("0.5.11", "--enable-deterministic-inference", cc="10.0")
    assert found is not None and found[0] == "deterministic.attention_backend"
    assert (found[2] or "").endswith("but you explicitly specified 'trtllm_mha'.")
    assert run("0.5.11", "--enable-deterministic-inference", cc="8.6").ok
    assert run("0.5.23", "--enable-deterministic-inference", cc="10.0").ok


def test_deterministic_inference_turns_the_radix_cache_off_on_flashinfer() -> None:
    flashinfer = run("0.5.23", "--enable-deterministic-inference", "--attention-backend", "flashinfer")
    assert flashinfer.ok and flashinfer.values["disable_radix_cache"] is True
    triton = run("0.5.23", "--enable-deterministic-inference", "--attention-backend", "triton")
    assert triton.values["disable_radix_cache"] is False
    # 0.5.23 checks the hierarchical cache after that, so the two meet; 0.5.11 checked it before
    hicache = (
        "--enable-deterministic-inference",
        "--attention-backend",
        "flashinfer",
        "--enable-hierarchical-cache",
    )
    assert first("0.5.23", *hicache) is not None and run("0.5.11", *hicache).ok
