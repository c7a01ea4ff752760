"""The context the rules read (rulekit.context and Ctx): SGLang's defaults under the argv's values, the long
parallel names and the mamba strategy under one name each, the GPU's compute capability read from text,
and the derived facts a rule asks for."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from gdnconsole.sglang.flags import parse_argv
from gdnconsole.sglang.rulekit import DEFAULTS, Ctx, context

QWEN3 = ["--model-path", "Qwen/Qwen3-8B"]


def ctx_of(
    argv: list[str],
    sglang: str = "0.5.23",
    *,
    cc: str | None = None,
    architecture: str | None = None,
    env: Mapping[str, str] | None = None,
    gpu_memory_mb: float | None = None,
) -> Ctx:
    return context(
        parse_argv(argv, sglang),
        sglang,
        compute_capability=cc,
        architecture=architecture,
        env=env,
        gpu_memory_mb=gpu_memory_mb,
    )


# -- context() -----------------------------------------------------------------------------------------------


def test_unset_values_hold_sglangs_defaults_and_set_ones_the_argv() -> None:
    ctx = ctx_of([*QWEN3, "--page-size", "16"])
    assert ctx.values == {**DEFAULTS, "model_path": "Qwen/Qwen3-8B", "page_size": 16}
    assert ctx.given == {"model_path": "--model-path", "page_size": "--page-size"}
    assert ctx.sglang == "0.5.23"


def test_the_context_does_not_share_the_defaults_table() -> None:
    ctx_of([*QWEN3, "--page-size", "16"]).set(tp_size=8)
    assert DEFAULTS["page_size"] is None and DEFAULTS["tp_size"] == 1


def test_0_5_11_long_parallel_names_are_read_under_the_short_ones_as_typed() -> None:
    ctx = ctx_of(
        [*QWEN3, "--tp", "2", "--dp-size", "4", "--pipeline-parallel-size", "3", "--ep", "5"], "0.5.11"
    )
    assert (ctx.tp_size, ctx.dp_size, ctx.pp_size, ctx.ep_size) == (2, 4, 3, 5)
    assert {d: ctx.given[d] for d in ("tp_size", "dp_size", "pp_size", "ep_size")} == {
        "tp_size": "--tp",
        "dp_size": "--dp-size",
        "pp_size": "--pipeline-parallel-size",
        "ep_size": "--ep",
    }
    assert ctx.tensor_parallel_size == 2 and ctx.given["tensor_parallel_size"] == "--tp"


def test_0_5_11_parallel_sizes_left_out_stay_at_one() -> None:
    ctx = ctx_of([*QWEN3, "--tp", "2"], "0.5.11")
    assert (ctx.tp_size, ctx.dp_size, ctx.pp_size, ctx.ep_size) == (2, 1, 1, 1)
    assert "dp_size" not in ctx.given


def test_0_5_23_short_parallel_names_are_read_directly() -> None:
    ctx = ctx_of([*QWEN3, "--tensor-parallel-size", "4"], "0.5.23")
    assert ctx.tp_size == 4 and ctx.given["tp_size"] == "--tensor-parallel-size"


@pytest.mark.parametrize(
    ("sglang", "flag"),
    [("0.5.11", "--mamba-scheduler-strategy"), ("0.5.23", "--mamba-radix-cache-strategy")],
)
def test_either_mamba_strategy_spelling_is_read_as_the_strategy(sglang: str, flag: str) -> None:
    ctx = ctx_of([*QWEN3, flag, "extra_buffer"], sglang)
    assert ctx.mamba_strategy == "extra_buffer" and ctx.given["mamba_strategy"] == flag


def test_without_a_mamba_strategy_it_is_auto_and_not_given() -> None:
    ctx = ctx_of(QWEN3)
    assert ctx.mamba_strategy == "auto" and "mamba_strategy" not in ctx.given


@pytest.mark.parametrize(
    ("text", "capability"),
    [
        ("8.6", (8, 6)),
        ("9.0", (9, 0)),
        ("10", (10, 0)),
        (" 12.1 \n", (12, 1)),
        ("9.", (9, 0)),
        ("", None),
        (None, None),
        ("sm90", None),
        ("8.x", None),
        (".5", None),
    ],
)
def test_compute_capability_is_read_from_its_text(
    text: str | None, capability: tuple[int, int] | None
) -> None:
    assert ctx_of(QWEN3, cc=text).compute_capability == capability


def test_host_facts_are_kept_as_given() -> None:
    ctx = ctx_of(QWEN3, architecture="LlamaForCausalLM", env={"A": "1"}, gpu_memory_mb=81559.0)
    assert (ctx.architecture, dict(ctx.env), ctx.gpu_memory_mb) == (
        "LlamaForCausalLM",
        {"A": "1"},
        81559.0,
    )


def test_no_environment_reads_as_an_empty_one() -> None:
    ctx = ctx_of(QWEN3, env=None)
    assert dict(ctx.env) == {} and ctx.env.get("SGLANG_ENABLE_SPEC_V2", "unset") == "unset"
    assert (ctx.architecture, ctx.gpu_memory_mb) == (None, None)


# -- Ctx -----------------------------------------------------------------------------------------------------


def test_values_read_as_attributes_and_unknown_names_are_attribute_errors() -> None:
    ctx = ctx_of([*QWEN3, "--page-size", "16"])
    assert ctx.page_size == 16 and ctx.model_path == "Qwen/Qwen3-8B"
    with pytest.raises(AttributeError, match=r"^no_such_value$"):
        _ = ctx.no_such_value
    assert not hasattr(ctx, "no_such_value")
    assert getattr(ctx, "no_such_value", "fallback") == "fallback"


def test_set_changes_what_later_reads_see() -> None:
    ctx = ctx_of(QWEN3)
    ctx.set(page_size=64, attention_backend="fa3")
    assert (ctx.page_size, ctx.attention_backend) == (64, "fa3")
    assert ctx.values["page_size"] == 64


def test_major_is_the_capabilitys_first_number_or_none() -> None:
    assert ctx_of(QWEN3, cc="9.0").major == 9
    assert ctx_of(QWEN3, cc="10.3").major == 10
    assert ctx_of(QWEN3, cc=None).major is None


def test_hybrid_is_true_only_for_hybrid_gated_deltanet_architectures() -> None:
    assert ctx_of(QWEN3, architecture="Qwen3NextForCausalLM").hybrid is True
    assert ctx_of(QWEN3, architecture="Qwen3_5ForConditionalGeneration").hybrid is True
    assert ctx_of(QWEN3, architecture="Qwen3ForCausalLM").hybrid is False
    assert ctx_of(QWEN3, architecture=None).hybrid is False


def test_arch_names_the_architecture_or_says_this_model() -> None:
    assert ctx_of(QWEN3, architecture="LlamaForCausalLM").arch == "LlamaForCausalLM"
    assert ctx_of(QWEN3, architecture=None).arch == "this model"


def test_spec_is_whether_a_speculative_algorithm_is_set() -> None:
    assert ctx_of(QWEN3).spec is False
    assert ctx_of([*QWEN3, "--speculative-algorithm", "EAGLE"]).spec is True


def test_backends_are_prefill_and_decode_each_falling_back_to_the_attention_backend() -> None:
    assert ctx_of(QWEN3).backends == (None, None)
    assert ctx_of([*QWEN3, "--attention-backend", "fa3"]).backends == ("fa3", "fa3")
    both = ctx_of([*QWEN3, "--attention-backend", "fa3", "--prefill-attention-backend", "flashinfer"])
    assert both.backends == ("flashinfer", "fa3")
    decode = ctx_of([*QWEN3, "--attention-backend", "fa3", "--decode-attention-backend", "triton"])
    assert decode.backends == ("fa3", "triton")
    alone = ctx_of([*QWEN3, "--prefill-attention-backend", "fa3", "--decode-attention-backend", "triton"])
    assert alone.backends == ("fa3", "triton")


def test_dp_attention_is_the_flag_or_an_attention_dp_size_above_one() -> None:
    assert ctx_of(QWEN3).dp_attention is False
    assert ctx_of([*QWEN3, "--enable-dp-attention"], "0.5.11").dp_attention is True
    assert ctx_of([*QWEN3, "--attn-dp-size", "2"]).dp_attention is True
    assert ctx_of([*QWEN3, "--attn-dp-size", "1"]).dp_attention is False
    unset = ctx_of(QWEN3)
    unset.set(attn_dp_size=None)
    assert unset.dp_attention is False
