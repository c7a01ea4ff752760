"""Expert parallelism and the MoE kernels (coretables: ``moe_rules``), as the operator reads them: each
error's exact words, the flag it marks, where SGLang raises it and the exception's own text, and the values
SGLang holds once it has resolved the runner and the expert-parallel size. Every expectation was checked
against the rule's code and the wheels it cites (0.5.11 server_args.py:2946-3140; 0.5.23
arg_groups/moe_hook.py, overrides.py, parallel_hook.py, validation_hook.py)."""

from __future__ import annotations

from collections.abc import Mapping

from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.rules import CheckResult, check

MOE = ["--model-path", "Qwen/Qwen3-30B-A3B", "--tp", "4"]
BOTH = ("0.5.11", "0.5.23")

Said = tuple[str, str | None, str | None, str, str, str | None]


def run(sglang: str, *flags: str, env: Mapping[str, str] | None = None, **facts: object) -> CheckResult:
    return check([*MOE, *flags], sglang=sglang, compute_capability="9.0", env=env, **facts)  # type: ignore[arg-type]


def said(error: Finding) -> Said:
    """An error as the operator meets it: id, marked flag, exception, source, message, SGLang's text."""
    return (error.id, error.flag, error.raises, error.source, error.message, error.sglang_text)


def errors(sglang: str, *flags: str, **facts: object) -> list[Said]:
    return [said(e) for e in run(sglang, *flags, **facts).errors]


def error_ids(sglang: str, *flags: str, **facts: object) -> list[str]:
    return [e.id for e in run(sglang, *flags, **facts).errors]


def notices(result: CheckResult) -> list[tuple[str, str | None, str, str]]:
    assert all(n.severity == "notice" and n.raises is None for n in result.notices)
    return [(n.id, n.flag, n.source, n.message) for n in result.notices]


def s11(lines: str) -> str:
    return f"srt/server_args.py:{lines} (0.5.11)"


def s23(lines: str, path: str = "moe_hook.py") -> str:
    return f"srt/arg_groups/{path}:{lines} (0.5.23)"


FIX_RUNNER = "Fix: another --moe-runner-backend (auto, triton), or a checkpoint in one of those formats."


# -- the runners' quantizations --------------------------------------------------------------------------


def test_flashinfer_cutlass_refuses_awq_with_sglangs_own_text_on_both_versions() -> None:
    text = (
        "Invalid quantization 'awq'. \nFlashInfer Cutlass MOE supports only: 'modelopt_fp4', 'modelopt_fp8', "
        "'modelopt_mixed', or bfloat16 (None)."
    )
    message = (
        "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_cutlass does not run awq "
        f"weights; it takes modelopt_fp4, modelopt_fp8, modelopt_mixed, bf16 (none). {FIX_RUNNER}"
    )
    for sglang, source in (("0.5.11", s11("2962-2968")), ("0.5.23", s23("80-88"))):
        assert errors(sglang, "--moe-runner-backend", "flashinfer_cutlass", "--quantization", "awq") == [
            ("moe.flashinfer_cutlass_quantization", "--moe-runner-backend", "AssertionError", source, message,
             text),
        ]  # fmt: skip


def test_flashinfer_cutlass_runs_its_quantizations_and_unquantized_weights() -> None:
    for sglang in BOTH:
        for quant in ("modelopt_fp4", "modelopt_fp8", "modelopt_mixed", "unquant"):
            assert run(sglang, "--moe-runner-backend", "flashinfer_cutlass", "--quantization", quant).ok
        assert run(sglang, "--moe-runner-backend", "flashinfer_cutlass").ok
        # another runner is not held to flashinfer_cutlass's list
        assert run(sglang, "--moe-runner-backend", "triton", "--quantization", "awq").ok


def test_unquant_is_read_as_no_quantization() -> None:
    for sglang in BOTH:
        assert run(sglang, "--quantization", "unquant").values["quantization"] is None
        assert run(sglang, "--quantization", "awq").values["quantization"] == "awq"


def test_flashinfer_cutlass_expert_parallel_size_is_one_or_tp() -> None:
    message = (
        "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_cutlass needs the "
        "expert-parallel size to be 1 or the tensor-parallel size (4), not 2. Fix: --ep-size 4 or 1."
    )
    text = "The expert parallel size must be 1 or the same as the tensor parallel size"
    for sglang, source in (("0.5.11", s11("2969-2972")), ("0.5.23", s23("89-92"))):
        assert errors(sglang, "--moe-runner-backend", "flashinfer_cutlass", "--ep", "2") == [
            ("moe.flashinfer_cutlass_ep_size", "--ep", "AssertionError", source, message, text),
        ]
        for ep in ("1", "4"):
            assert run(sglang, "--moe-runner-backend", "flashinfer_cutlass", "--ep-size", ep).ok
        assert run(sglang, "--moe-runner-backend", "triton", "--ep-size", "2").ok
    # the EP size is marked as the operator typed it: --ep above, --ep-size here
    assert (
        errors("0.5.23", "--moe-runner-backend", "flashinfer_cutlass", "--ep-size", "3")[0][1] == "--ep-size"
    )


def test_flashinfer_cutedsl_quantization_ep_and_a2a_all_reported_on_0_5_11() -> None:
    assert errors(
        "0.5.11", "--moe-runner-backend", "flashinfer_cutedsl", "--ep", "2", "--moe-a2a-backend", "mooncake"
    ) == [
        ("moe.flashinfer_cutedsl_quantization", "--moe-runner-backend", "AssertionError", s11("2974-2977"),
         "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_cutedsl does not run "
         f"unquantized (bf16) weights; it takes modelopt_fp4. {FIX_RUNNER}",
         "Invalid quantization 'None'. \nFlashInfer CuteDSL MOE currently supports only: 'modelopt_fp4'."),
        ("moe.flashinfer_cutedsl_ep_size", "--ep", "AssertionError", s11("2978-2981"),
         "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_cutedsl needs the "
         "expert-parallel size to be 1 or the tensor-parallel size (4), not 2. Fix: --ep-size 4 or 1.",
         "The expert parallel size must be 1 or the same as the tensor parallel size"),
        ("moe.flashinfer_cutedsl_a2a", "--moe-a2a-backend", "AssertionError", s11("2982-2988"),
         "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_cutedsl works with "
         "--moe-a2a-backend none or deepep, not mooncake. Fix: one of those.",
         "flashinfer_cutedsl supports moe_a2a_backend='none' (standard path) or 'deepep' (DeepEP "
         "low-latency path), got 'mooncake'."),
    ]  # fmt: skip


def test_flashinfer_cutedsl_quantization_ep_and_a2a_all_reported_on_0_5_23() -> None:
    assert errors(
        "0.5.23", "--moe-runner-backend", "flashinfer_cutedsl", "--ep", "2", "--moe-a2a-backend", "mooncake"
    ) == [
        ("moe.flashinfer_cutedsl_quantization", "--moe-runner-backend", "AssertionError", s23("94-101"),
         "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_cutedsl does not run "
         f"unquantized (bf16) weights; it takes modelopt_fp4, modelopt_mixed, nvfp4_online. {FIX_RUNNER}",
         "Invalid quantization 'None'. \nFlashInfer CuteDSL MOE currently supports only: 'modelopt_fp4', "
         "'modelopt_mixed' (with NVFP4 MoE layers), 'nvfp4_online', or hybrid NVFP4 models."),
        ("moe.flashinfer_cutedsl_ep_size", "--ep", "AssertionError", s23("102-105"),
         "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_cutedsl needs the "
         "expert-parallel size to be 1 or the tensor-parallel size (4), not 2. Fix: --ep-size 4 or 1.",
         "The expert parallel size must be 1 or the same as the tensor parallel size"),
        ("moe.flashinfer_cutedsl_a2a", "--moe-a2a-backend", "AssertionError", s23("106-113"),
         "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_cutedsl works with "
         "--moe-a2a-backend none or deepep or flashinfer, not mooncake. Fix: one of those.",
         "flashinfer_cutedsl supports moe_a2a_backend='none', 'deepep', or 'flashinfer', got 'mooncake'."),
    ]  # fmt: skip


def test_flashinfer_cutedsl_takes_modelopt_fp4_and_on_0_5_23_more() -> None:
    cutedsl = ["--moe-runner-backend", "flashinfer_cutedsl"]
    for sglang in BOTH:
        assert run(sglang, *cutedsl, "--quantization", "modelopt_fp4").ok
        assert run(sglang, *cutedsl, "--quantization", "modelopt_fp4", "--moe-a2a-backend", "deepep").ok
        assert run(sglang, *cutedsl, "--quantization", "modelopt_fp4", "--ep-size", "4").ok
    assert error_ids("0.5.11", *cutedsl, "--quantization", "modelopt_mixed") == [
        "moe.flashinfer_cutedsl_quantization"
    ]
    assert run("0.5.23", *cutedsl, "--quantization", "modelopt_mixed").ok
    assert run("0.5.23", *cutedsl, "--quantization", "nvfp4_online").ok
    # flashinfer all-to-all: 0.5.11's cutedsl refuses it; 0.5.23's takes it (with attention DP over TP)
    fi = [*cutedsl, "--quantization", "modelopt_fp4", "--moe-a2a-backend", "flashinfer"]
    assert "moe.flashinfer_cutedsl_a2a" in error_ids("0.5.11", *fi)
    assert run("0.5.23", *fi, "--attn-dp-size", "4").ok


def test_flashinfer_trtllm_refuses_awq_and_names_what_it_takes() -> None:
    old = (
        "Invalid quantization 'awq'. \nFlashInfer TRTLLM MOE supports only: 'modelopt_fp4', 'fp8', "
        "'modelopt_fp8', 'modelopt_mixed', 'compressed-tensors', or bfloat16 (None)."
    )
    new = (
        "Invalid quantization 'awq'. \nFlashInfer TRTLLM MOE supports only: 'modelopt_fp4', 'nvfp4_online', "
        "'fp8', 'modelopt_fp8', 'modelopt_mixed', 'compressed-tensors', or bfloat16 (None)."
    )
    assert errors("0.5.11", "--moe-runner-backend", "flashinfer_trtllm", "--quantization", "awq") == [
        ("moe.flashinfer_trtllm_quantization", "--moe-runner-backend", "AssertionError", s11("2994-3003"),
         "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_trtllm does not run awq "
         "weights; it takes modelopt_fp4, fp8, mxfp8, modelopt_fp8, modelopt_mixed, compressed-tensors, "
         f"bf16 (none). {FIX_RUNNER}", old),
    ]  # fmt: skip
    assert errors("0.5.23", "--moe-runner-backend", "flashinfer_trtllm", "--quantization", "awq") == [
        ("moe.flashinfer_trtllm_quantization", "--moe-runner-backend", "AssertionError", s23("123-136"),
         "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_trtllm does not run awq "
         "weights; it takes modelopt_fp4, nvfp4_online, fp8, mxfp8, modelopt_fp8, modelopt_mixed, "
         f"compressed-tensors, bf16 (none). {FIX_RUNNER}", new),
    ]  # fmt: skip
    # 0.5.23's experimental_sgl_trtllm runner is held to the same list
    assert errors("0.5.23", "--moe-runner-backend", "experimental_sgl_trtllm", "--quantization", "awq")[0][
        :2
    ] == ("moe.flashinfer_trtllm_quantization", "--moe-runner-backend")
    assert run("0.5.23", "--moe-runner-backend", "experimental_sgl_trtllm", "--quantization", "fp8").ok
    for sglang in BOTH:
        for quant in ("fp8", "modelopt_fp4", "compressed-tensors"):
            assert run(sglang, "--moe-runner-backend", "flashinfer_trtllm", "--quantization", quant).ok


def test_flashinfer_trtllm_routed_refuses_awq_and_0_5_11_also_modelopt_mixed() -> None:
    assert errors("0.5.11", "--moe-runner-backend", "flashinfer_trtllm_routed", "--quantization", "awq") == [
        ("moe.flashinfer_trtllm_routed_quantization", "--moe-runner-backend", "AssertionError",
         s11("3009-3015"),
         "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_trtllm_routed does not run "
         f"awq weights; it takes fp8, mxfp8, modelopt_fp4, bf16 (none). {FIX_RUNNER}",
         "Invalid quantization 'awq'. \nFlashInfer TRTLLM routed MOE supports only: 'fp8', 'mxfp8', "
         "'modelopt_fp4', or bfloat16 (None)."),
    ]  # fmt: skip
    assert errors("0.5.23", "--moe-runner-backend", "flashinfer_trtllm_routed", "--quantization", "awq") == [
        ("moe.flashinfer_trtllm_routed_quantization", "--moe-runner-backend", "AssertionError",
         s23("137-148"),
         "SGLang would stop with AssertionError: --moe-runner-backend flashinfer_trtllm_routed does not run "
         "awq weights; it takes fp8, mxfp8, modelopt_fp4, modelopt_mixed, nvfp4_online, minimax_m3_nvfp4, "
         f"bf16 (none). {FIX_RUNNER}",
         "Invalid quantization 'awq'. \nFlashInfer TRTLLM routed MOE supports only: 'fp8', 'mxfp8', "
         "'modelopt_fp4', 'modelopt_mixed', 'nvfp4_online', 'minimax_m3_nvfp4', or bfloat16 (None)."),
    ]  # fmt: skip
    routed_mixed = ["--moe-runner-backend", "flashinfer_trtllm_routed", "--quantization", "modelopt_mixed"]
    assert error_ids("0.5.11", *routed_mixed) == ["moe.flashinfer_trtllm_routed_quantization"]
    assert run("0.5.23", *routed_mixed).ok
    for sglang in BOTH:
        assert run(sglang, "--moe-runner-backend", "flashinfer_trtllm_routed", "--quantization", "fp8").ok


def test_cutlass_with_fp8_or_mxfp8_runs_without_expert_parallelism() -> None:
    for sglang, source in (("0.5.11", s11("3030-3036")), ("0.5.23", s23("155-163"))):
        for quant in ("fp8", "mxfp8"):
            assert errors(sglang, "--moe-runner-backend", "cutlass", "--quantization", quant, "--ep", "2") == [
                ("moe.cutlass_fp8_ep_size", "--ep", "AssertionError", source,
                 f"SGLang would stop with AssertionError: the cutlass MoE runner with {quant} weights runs "
                 "without expert parallelism (--ep-size 2). Fix: --ep-size 1, or another --moe-runner-backend.",
                 "FP8/MXFP8 Cutlass MoE is only supported with ep_size == 1"),
            ]  # fmt: skip
            assert run(sglang, "--moe-runner-backend", "cutlass", "--quantization", quant, "--ep", "1").ok
        assert run(sglang, "--moe-runner-backend", "cutlass", "--quantization", "awq", "--ep", "2").ok
        assert run(sglang, "--moe-runner-backend", "triton", "--quantization", "fp8", "--ep", "2").ok


def test_mxfp8_moves_a_runner_that_cannot_take_it_to_flashinfer_trtllm() -> None:
    def runner(sglang: str, given: str) -> str:
        result = run(sglang, "--quantization", "mxfp8", "--moe-runner-backend", given)
        assert result.ok, result.errors
        return str(result.values["moe_runner_backend"])

    for sglang in BOTH:
        assert runner(sglang, "auto") == "flashinfer_trtllm"
        assert runner(sglang, "triton") == "flashinfer_trtllm"
        for kept in ("cutlass", "flashinfer_trtllm", "flashinfer_trtllm_routed"):
            assert runner(sglang, kept) == kept
        assert (
            run(sglang, "--quantization", "fp8", "--moe-runner-backend", "triton").values[
                "moe_runner_backend"
            ]
            == "triton"
        )
    # deep_gemm takes mxfp8 from 0.5.23 on (MXFP8_MOE_RUNNER_BACKEND_CHOICES)
    assert runner("0.5.11", "deep_gemm") == "flashinfer_trtllm"
    assert runner("0.5.23", "deep_gemm") == "deep_gemm"


# -- all-to-all backends ------------------------------------------------------------------------------------


def test_spanning_a2a_backends_set_ep_to_tp_and_say_when_a_given_ep_is_overridden() -> None:
    for sglang, source in (("0.5.11", s11("3055-3111")), ("0.5.23", s23("1611-1620", "overrides.py"))):
        given = run(sglang, "--moe-a2a-backend", "deepep", "--ep", "2")
        assert given.ok and given.values["ep_size"] == 4
        assert notices(given) == [
            ("moe.a2a_sets_ep_size", "--ep", source,
             "SGLang would set the expert-parallel size to the tensor-parallel size (4): --moe-a2a-backend "
             "deepep spans the whole TP group (--ep-size 2 is overridden)."),
        ]  # fmt: skip
        default = run(sglang, "--moe-a2a-backend", "nixl")
        assert default.values["ep_size"] == 4
        assert notices(default) == [
            ("moe.a2a_sets_ep_size", "--moe-a2a-backend", source,
             "SGLang would set the expert-parallel size to the tensor-parallel size (4): --moe-a2a-backend "
             "nixl spans the whole TP group."),
        ]  # fmt: skip
        already = run(sglang, "--moe-a2a-backend", "deepep", "--ep", "4")
        assert already.notices == [] and already.values["ep_size"] == 4
        plain = run(sglang, "--ep", "2")
        assert plain.notices == [] and plain.values["ep_size"] == 2
    assert run("0.5.23", "--moe-a2a-backend", "megamoe").values["ep_size"] == 4  # spans on 0.5.23
    assert run("0.5.23", "--moe-a2a-backend", "ascend_tp", "--ep", "2").values["ep_size"] == 2  # does not


def test_flashinfer_a2a_on_0_5_11_needs_the_flashinfer_cutlass_runner() -> None:
    assert errors("0.5.11", "--moe-a2a-backend", "flashinfer") == [
        ("moe.flashinfer_a2a_runner", "--moe-a2a-backend", "AssertionError", s11("3106-3108"),
         "SGLang would stop with AssertionError: --moe-a2a-backend flashinfer runs with --moe-runner-backend "
         "flashinfer_cutlass, not auto. Fix: --moe-runner-backend flashinfer_cutlass.",
         "Flashinfer MoE A2A is only supported with flashinfer_cutlass moe runner backend"),
    ]  # fmt: skip
    assert run("0.5.11", "--moe-a2a-backend", "flashinfer", "--moe-runner-backend", "flashinfer_cutlass").ok
    assert run("0.5.11", "--moe-runner-backend", "deep_gemm").ok  # no all-to-all, no runner rule


def test_flashinfer_a2a_on_0_5_23_needs_attention_dp_over_tp_then_its_runners() -> None:
    assert errors("0.5.23", "--moe-a2a-backend", "flashinfer") == [
        ("moe.flashinfer_a2a_attn_dp", "--moe-a2a-backend", "AssertionError", s23("473-484"),
         "SGLang 0.5.23 would stop with AssertionError: --moe-a2a-backend flashinfer needs attention DP over "
         "the whole TP group (--attn-dp-size equal to --tp, 4). Fix: --attn-dp-size 4, or another "
         "--moe-a2a-backend.",
         "Flashinfer MoE A2A requires --attn-dp-size equal to --tp-size, except for Muse Spark TP4/EP4 or "
         "TP8/EP8 prefill sequence parallelism."),
        ("moe.flashinfer_a2a_runner", "--moe-a2a-backend", "AssertionError", s23("531-541"),
         "SGLang would stop with AssertionError: --moe-a2a-backend flashinfer runs with --moe-runner-backend "
         "flashinfer_cutlass or flashinfer_cutedsl or flashinfer_trtllm or flashinfer_trtllm_routed or "
         "deep_gemm, not auto. Fix: --moe-runner-backend flashinfer_cutlass.",
         "FlashInfer MoE A2A is supported with flashinfer_cutlass, flashinfer_cutedsl, flashinfer_trtllm, "
         "flashinfer_trtllm_routed, or deep_gemm."),
    ]  # fmt: skip
    runner = ["--moe-a2a-backend", "flashinfer", "--moe-runner-backend", "deep_gemm"]
    assert error_ids("0.5.23", *runner, "--attn-dp-size", "2") == ["moe.flashinfer_a2a_attn_dp"]
    assert run("0.5.23", *runner, "--attn-dp-size", "4").ok
    assert run("0.5.23", *runner, "--dp", "4", "--enable-dp-attention").ok  # the deprecated spelling
    for other in ("flashinfer_cutedsl", "flashinfer_trtllm", "flashinfer_trtllm_routed"):
        flags = ["--moe-a2a-backend", "flashinfer", "--moe-runner-backend", other, "--attn-dp-size", "4"]
        assert "moe.flashinfer_a2a_runner" not in error_ids("0.5.23", *flags)


# -- MoRI and pplx dispatch budgets ----------------------------------------------------------------------


def test_mori_budget_names_the_limit_the_sizes_and_the_dp_division() -> None:
    limit = {"SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "1000"}
    flags = ["--moe-a2a-backend", "mori", "--dp", "2", "--enable-dp-attention"]
    for sglang, source, text in (
        ("0.5.11", s11("3120-3125"),
         "SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 4096) must be larger or equal to "
         "chunked_prefill_size"),
        ("0.5.23", s23("563-573"),
         "SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 4096) must be >= the per-rank MoRI dispatch "
         "tokens (chunked_prefill_size by default)"),
    ):  # fmt: skip
        assert errors(sglang, *flags, env=limit) == [
            ("moe.mori_dispatch_tokens", "--moe-a2a-backend", "AssertionError", source,
             "SGLang would stop with AssertionError: --moe-a2a-backend mori dispatches at most 1000 tokens per "
             "rank (SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK), and the chunked prefill size is 1024 or "
             "2048 or 4096 or 8192, which SGLang picks from the GPU's memory, divided by the attention DP "
             "size. Fix: --chunked-prefill-size 1000 or less, or raise that variable.", text),
        ]  # fmt: skip
        # an unreadable limit is SGLang's default, 4096; a B200's 16384 is over it
        garbled = {"SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "lots"}
        error = run(sglang, "--moe-a2a-backend", "mori", env=garbled, gpu_memory_mb=200_000).errors[0]
        assert error.message == (
            "SGLang would stop with AssertionError: --moe-a2a-backend mori dispatches at most 4096 tokens per "
            "rank (SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK), and the chunked prefill size is 16384, which "
            "SGLang picks from the GPU's memory. Fix: --chunked-prefill-size 4096 or less, or raise that "
            "variable."
        )
        given = run(sglang, "--moe-a2a-backend", "mori", "--chunked-prefill-size", "4097").errors[0]
        assert "the chunked prefill size is 4097. Fix: --chunked-prefill-size 4096 or less" in given.message
        assert given.flag == "--moe-a2a-backend"  # the backend is always typed: it is the one marked
        assert run(sglang, "--moe-a2a-backend", "mori", "--chunked-prefill-size", "4096").ok  # at the limit
        assert run(sglang, "--moe-a2a-backend", "mori", "--chunked-prefill-size", "1000", env=limit).ok
        # a one-token chunk still counts; chunking off (0) is never checked, whatever the limit
        for zero in ("0", "-1"):
            nothing = {"SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK": zero}
            assert error_ids(
                sglang, "--moe-a2a-backend", "mori", "--chunked-prefill-size", "1", env=nothing
            ) == ["moe.mori_dispatch_tokens"]
            assert run(sglang, "--moe-a2a-backend", "mori", "--chunked-prefill-size", "0", env=nothing).ok
        # some GPUs' sizes fit: no error (the memory is unknown); decode nodes skip the check
        assert run(sglang, "--moe-a2a-backend", "mori").ok
        assert run(sglang, "--moe-a2a-backend", "mori", "--chunked-prefill-size", "8192",
                   "--disaggregation-mode", "decode").ok  # fmt: skip
        assert run(sglang, "--chunked-prefill-size", "8192").ok  # no mori, no budget


def test_pplx_rules_on_0_5_23_in_sglangs_order_with_their_texts() -> None:
    assert errors("0.5.23", "--moe-a2a-backend", "pplx", "--deepep-mode", "normal",
                  "--moe-runner-backend", "triton", "--chunked-prefill-size", "8192") == [
        ("moe.pplx_low_latency_only", "--deepep-mode", "ValueError", s23("576-580"),
         "SGLang 0.5.23 would stop with ValueError: --moe-a2a-backend pplx runs in low-latency mode only. "
         "Fix: --deepep-mode low_latency or auto.",
         "moe_a2a_backend='pplx' only supports low-latency mode; set --deepep-mode to 'low_latency' or "
         "'auto'."),
        ("moe.pplx_needs_attn_dp", "--moe-a2a-backend", "AssertionError", s23("591-594"),
         "SGLang 0.5.23 would stop with AssertionError: --moe-a2a-backend pplx needs attention DP with at "
         "least 2 groups. Fix: --attn-dp-size 2 or more (dividing --tp).",
         "moe_a2a_backend='pplx' requires attention DP with at least 2 groups (--attn-dp-size >= 2)."),
        ("moe.pplx_runner", "--moe-runner-backend", "AssertionError", s23("599-602"),
         "SGLang 0.5.23 would stop with AssertionError: --moe-a2a-backend pplx runs on the deep_gemm MoE "
         "runner, not triton. Fix: --moe-runner-backend deep_gemm (or auto).",
         "moe_a2a_backend='pplx' is only supported with --moe-runner-backend deep_gemm (or auto)."),
        ("moe.pplx_dispatch_tokens", "--moe-a2a-backend", "AssertionError", s23("612-620"),
         "SGLang 0.5.23 would stop with AssertionError: --moe-a2a-backend pplx dispatches at most 128 tokens "
         "per rank (SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK), and a forward needs 8192. Fix: a smaller "
         "--chunked-prefill-size (and --cuda-graph-max-bs-decode), or raise that variable.",
         "SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 128) must be >= the per-rank pplx dispatch "
         "tokens (chunked_prefill_size, or the decode cuda-graph batch size)"),
    ]  # fmt: skip


def test_pplx_budget_counts_the_dp_share_and_the_decode_graph_batch() -> None:
    pplx = ["--moe-a2a-backend", "pplx", "--attn-dp-size", "4"]
    assert run("0.5.23", *pplx, "--chunked-prefill-size", "512").ok  # 512 // 4 = 128: at the limit
    over = run("0.5.23", *pplx, "--chunked-prefill-size", "516").errors  # 129 a rank
    assert [e.id for e in over] == ["moe.pplx_dispatch_tokens"]
    assert "and a forward needs 129, divided by the attention DP size. Fix:" in over[0].message
    # the decode CUDA graph's largest batch counts when it is larger than the prefill share
    graph = run("0.5.23", *pplx, "--chunked-prefill-size", "256", "--cuda-graph-max-bs-decode", "200")
    assert "a forward needs 200, divided by the attention DP size" in graph.errors[0].message
    assert run("0.5.23", *pplx, "--chunked-prefill-size", "256", "--cuda-graph-max-bs-decode", "100").ok
    # a one-token share still counts; chunking off (0) does not, whatever the decode graph
    tiny = [*pplx, "--chunked-prefill-size", "4", "--cuda-graph-max-bs-decode", "200"]
    assert "a forward needs 200, divided by the attention DP size" in run("0.5.23", *tiny).errors[0].message
    assert run("0.5.23", *pplx, "--chunked-prefill-size", "0", "--cuda-graph-max-bs-decode", "200").ok
    # the limit comes from the environment; an unreadable one is SGLang's default, 128
    wide = {"SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "2048"}
    assert run("0.5.23", *pplx, "--chunked-prefill-size", "8192", env=wide).ok
    garbled = {"SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "many"}
    assert (
        "dispatches at most 128 tokens per rank"
        in run("0.5.23", *pplx, "--chunked-prefill-size", "8192", env=garbled).errors[0].message
    )
    # the memory unknown: an error only when every size SGLang may pick is over (2048 // 4 = 512 fits 1000)
    limit = {"SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "1000"}
    assert run("0.5.23", *pplx, env=limit).ok
    assert run("0.5.23", *pplx, env=limit, gpu_memory_mb=81_559).errors[0].id == "moe.pplx_dispatch_tokens"
    assert (
        "a forward needs 512 or 1024 or 2048 or 4096, which SGLang picks from the GPU's memory, divided"
        in (run("0.5.23", *pplx).errors[0].message)
    )
    # chunked prefill off, or a decode node: nothing to check
    assert run("0.5.23", *pplx, "--chunked-prefill-size", "-1").ok
    assert run("0.5.23", *pplx, "--chunked-prefill-size", "8192", "--disaggregation-mode", "decode").ok
    # two attention-DP groups are enough
    assert run("0.5.23", "--moe-a2a-backend", "pplx", "--attn-dp-size", "2", "--chunked-prefill-size", "8").ok
    assert error_ids("0.5.23", "--moe-a2a-backend", "pplx", "--attn-dp-size", "1",
                     "--chunked-prefill-size", "8") == ["moe.pplx_needs_attn_dp"]  # fmt: skip
    # low_latency and auto are both low-latency modes; deep_gemm and auto both run it
    for mode in ("low_latency", "auto"):
        for runner in ("deep_gemm", "auto"):
            flags = [
                *pplx,
                "--deepep-mode",
                mode,
                "--moe-runner-backend",
                runner,
                "--chunked-prefill-size",
                "8",
            ]
            assert run("0.5.23", *flags).ok
    assert run("0.5.23", "--deepep-mode", "normal").ok  # no pplx: the mode is deepep's own business
    # mxfp8 puts flashinfer_trtllm in place of auto, which pplx refuses: the typed flag is the backend's
    [runner] = run("0.5.23", *pplx, "--quantization", "mxfp8", "--chunked-prefill-size", "64").errors
    assert (runner.id, runner.flag) == ("moe.pplx_runner", "--moe-a2a-backend")
    assert "runs on the deep_gemm MoE runner, not flashinfer_trtllm." in runner.message


# -- EPLB, the dense TP size ----------------------------------------------------------------------------


def test_eplb_needs_more_than_one_expert_parallel_rank() -> None:
    for sglang, source in (("0.5.11", s11("3139-3140")), ("0.5.23", s23("790-791", "parallel_hook.py"))):
        expected = [
            ("moe.eplb_needs_ep", "--enable-eplb", "AssertionError", source,
             f"SGLang {sglang} would stop with a bare AssertionError: --enable-eplb balances experts across "
             "expert-parallel ranks, and the expert-parallel size is 1. Fix: --ep-size above 1 (e.g. equal to "
             "--tp), or no --enable-eplb.", ""),
        ]  # fmt: skip
        assert errors(sglang, "--enable-eplb") == expected
        assert errors(sglang, "--enable-eplb", "--ep", "1") == expected
        assert run(sglang, "--enable-eplb", "--ep", "2").ok
        assert run(sglang, "--ep", "1").ok


def test_moe_dense_tp_size_takes_one_and_on_0_5_23_the_tp_size() -> None:
    assert errors("0.5.11", "--moe-dense-tp-size", "2") == [
        ("moe.dense_tp_size", "--moe-dense-tp-size", "AssertionError", s11("6797-6801"),
         "SGLang would stop with AssertionError: --moe-dense-tp-size 2 is not supported; it takes 1. Fix: "
         "--moe-dense-tp-size 1, or leave it unset.",
         "moe_dense_tp_size only support 1 and None currently"),
    ]  # fmt: skip
    assert errors("0.5.23", "--moe-dense-tp-size", "2") == [
        ("moe.dense_tp_size", "--moe-dense-tp-size", "AssertionError", s23("207-211", "validation_hook.py"),
         "SGLang would stop with AssertionError: --moe-dense-tp-size 2 is not supported; it takes 1 or the "
         "tensor-parallel size (4). Fix: --moe-dense-tp-size 1, or leave it unset.",
         "moe_dense_tp_size only supports None, 1, or tp_size currently"),
    ]  # fmt: skip
    for sglang in BOTH:
        assert run(sglang, "--moe-dense-tp-size", "1").ok
        assert run(sglang).ok
    assert error_ids("0.5.11", "--moe-dense-tp-size", "4") == ["moe.dense_tp_size"]
    assert run("0.5.23", "--moe-dense-tp-size", "4").ok
