"""The rule tables, rule by rule and in SGLang's order (FACTS §0, §3, §4), and the seed's journey."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.models import architecture_of, is_hybrid_gdn
from gdnconsole.sglang.rules import CheckResult, check
from gdnconsole.sglang.ruletables import DIALECTS, table_for

HYBRID = ["--model-path", "Qwen/Qwen3.6-27B", "--tp", "2"]
DENSE = ["--model-path", "meta-llama/Llama-3.1-8B"]
QWEN3 = ["--model-path", "Qwen/Qwen3-8B"]
NEXTN = ["--speculative-algorithm", "NEXTN"]
EXTRA_511 = ["--mamba-scheduler-strategy", "extra_buffer"]


def run(argv: list[str], sglang: str, cc: str = "8.6", **kw: object) -> CheckResult:
    return check(argv, sglang=sglang, compute_capability=cc, **kw)  # type: ignore[arg-type]


def first(argv: list[str], sglang: str, cc: str = "8.6", **kw: object) -> tuple[str, str | None, str | None]:
    result = run(argv, sglang, cc, **kw)
    assert not result.ok and result.errors, result
    error = result.errors[0]
    assert error.sglang_first and not any(e.sglang_first for e in result.errors[1:])
    return error.id, error.flag, error.raises


def notice_ids(result: CheckResult) -> list[str]:
    return [n.id for n in result.notices]


# -- the seed's journey (ARCHITECTURE.md) ------------------------------------------------------------------------

FINAL = [*HYBRID, *NEXTN, "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "2", *EXTRA_511]  # fmt: skip


def test_journey_topk_without_steps_names_the_fix() -> None:
    argv = [
        *HYBRID,
        *NEXTN,
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "2",
        *EXTRA_511,
    ]
    result = run(argv, "0.5.11")
    error = result.errors[0]
    assert (error.id, error.flag, error.raises, error.sglang_text) == (
        "spec.topk_without_steps",
        "--speculative-eagle-topk",
        "AssertionError",
        "",
    )
    assert "bare AssertionError in _handle_speculative_decoding" in error.message
    assert "set --speculative-num-steps (e.g. 1)" in error.message
    assert error.source == "srt/server_args.py:3518-3523 (0.5.11)"


def test_journey_final_flags_pass_with_notices() -> None:
    result = run(FINAL, "0.5.11", env={"SGLANG_ENABLE_SPEC_V2": "1"})
    assert result.ok and result.errors == []
    assert notice_ids(result) == ["spec.nextn_is_eagle", "spec.max_running_requests_48", "spec.v2"]
    assert result.to_json()["argv"] == FINAL


# -- order ----------------------------------------------------------------------------------------------


def test_order_0_5_11_hybrid_mamba_error_before_assertion() -> None:
    argv = [*HYBRID, *NEXTN, "--speculative-eagle-topk", "1"]
    assert first(argv, "0.5.11") == (
        "mamba.speculative_needs_extra_buffer",
        "--mamba-scheduler-strategy",
        "ValueError",
    )
    assert first([*argv, "--disable-radix-cache"], "0.5.11")[0] == "spec.topk_without_steps"
    assert first([*argv, *EXTRA_511], "0.5.11")[0] == "spec.topk_without_steps"


def test_order_0_5_11_dense_assertion() -> None:
    assert first([*QWEN3, "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "2"], "0.5.11")[
        0
    ] == ("spec.topk_without_steps")


def test_order_0_5_23_assertion_first() -> None:
    argv = [*HYBRID, *NEXTN, "--speculative-eagle-topk", "1"]
    error = run(argv, "0.5.23").errors[0]
    assert error.id == "spec.topk_without_steps"
    assert error.source == "srt/arg_groups/speculative_hook.py:1159-1163 (0.5.23)"
    assert "_handle_eagle_family" in error.message


def test_trtllm_hardware_before_topk_rule() -> None:
    argv = [*DENSE, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
            "--speculative-num-draft-tokens", "8", "--attention-backend", "trtllm_mha"]  # fmt: skip
    assert first(argv, "0.5.11", "8.6")[:2] == (
        "attention.trtllm_mha_prefill_hardware",
        "--attention-backend",
    )
    assert (
        first(argv, "0.5.11", "9.0")[0] == "attention.trtllm_mha_prefill_hardware"
    )  # H100 refused on 0.5.11
    assert first(argv, "0.5.11", "10.0")[0] == "spec.trtllm_mha_topk"
    assert first(argv, "0.5.23", "8.6")[0] == "attention.trtllm_mha_prefill_hardware"
    assert first(argv, "0.5.23", "9.0")[0] == "spec.trtllm_mha_topk"  # >= SM90 on 0.5.23


# -- rule by rule -----------------------------------------------------------------------------------------


def test_steps_alone_is_a_type_error() -> None:
    argv = [*QWEN3, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2"]
    for sglang in ("0.5.11", "0.5.23"):
        error = run(argv, sglang).errors[0]
        assert (error.id, error.flag, error.raises) == (
            "spec.steps_without_topk",
            "--speculative-num-steps",
            "TypeError",
        )
        assert error.sglang_text == "'>' not supported between instances of 'NoneType' and 'int'"


def test_draft_tokens_without_steps() -> None:
    argv = [*QWEN3, "--speculative-algorithm", "EAGLE", "--speculative-num-draft-tokens", "4"]
    assert first(argv, "0.5.23")[:2] == ("spec.topk_without_steps", "--speculative-num-draft-tokens")


def test_auto_params_and_draft_adjust_notices() -> None:
    auto = run([*QWEN3, "--speculative-algorithm", "EAGLE"], "0.5.23")
    assert auto.ok and "spec.auto_params" in notice_ids(auto)
    adjusted = run([*QWEN3, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2",
                    "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "5"], "0.5.11")  # fmt: skip
    notice = next(n for n in adjusted.notices if n.id == "spec.draft_tokens_adjusted")
    assert notice.flag == "--speculative-num-draft-tokens" and "to 3" in notice.message


@pytest.mark.parametrize(("sglang", "backend", "fails"), [
    ("0.5.11", "triton", True), ("0.5.11", "flashinfer", False), ("0.5.11", "fa3", False),
    ("0.5.23", "triton", False), ("0.5.23", "torch_native", True), ("0.5.23", "flashinfer", False),
])  # fmt: skip
def test_topk_page_size_backend(sglang: str, backend: str, fails: bool) -> None:
    argv = [*QWEN3, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk",
            "4", "--speculative-num-draft-tokens", "8", "--page-size", "16", "--attention-backend", backend]  # fmt: skip
    result = run(argv, sglang)
    assert result.ok is not fails
    if fails:
        assert result.errors[0].id == "spec.topk_page_size_backend"
        assert result.errors[0].source.endswith(f"({sglang})")
    assert run([*argv[:-4], "--page-size", "1", "--attention-backend", backend], sglang).ok


def test_extra_buffer_with_disable_radix_cache() -> None:
    argv = [*HYBRID, *EXTRA_511, "--disable-radix-cache"]
    assert first(argv, "0.5.11")[:2] == (
        "mamba.extra_buffer_with_disable_radix_cache",
        "--disable-radix-cache",
    )
    new = [*HYBRID, "--mamba-radix-cache-strategy", "extra_buffer", "--disable-radix-cache"]
    assert run(new, "0.5.23").ok  # 0.5.23 skips the mamba checks without a radix cache


def test_track_interval_vs_draft_tokens() -> None:
    argv = [*HYBRID, *NEXTN, "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
            "--speculative-num-draft-tokens", "300"]  # fmt: skip
    assert first([*argv, *EXTRA_511], "0.5.11")[0] == "mamba.track_interval_below_draft_tokens"
    assert run([*argv, *EXTRA_511, "--mamba-track-interval", "512"], "0.5.11").ok
    error = run(argv, "0.5.23").errors[0]
    assert error.id == "mamba.track_interval_below_draft_tokens" and error.sglang_text == ""


def test_page_size_rules_for_extra_buffer() -> None:
    assert first([*HYBRID, *EXTRA_511, "--page-size", "3"], "0.5.11")[0] == "mamba.track_interval_page_size"
    result = run([*HYBRID, "--page-size", "16"], "0.5.11")
    assert "mamba.no_buffer_page_size_1" in notice_ids(result)


def test_0_5_23_no_buffer_rules() -> None:
    argv = [*HYBRID, "--mamba-radix-cache-strategy", "no_buffer"]
    assert first(argv, "0.5.23")[0] == "mamba.no_buffer_overlap"
    assert run([*argv, "--disable-overlap-schedule"], "0.5.23").ok
    assert (
        first([*argv, "--disable-overlap-schedule", "--page-size", "16"], "0.5.23")[0]
        == "mamba.no_buffer_page_size"
    )
    assert first([*QWEN3, "--mamba-radix-cache-strategy", "extra_buffer"], "0.5.23")[0] == (
        "mamba.strategy_needs_mamba_model"
    )


def test_ngram_rules() -> None:
    argv = [*QWEN3, "--speculative-algorithm", "NGRAM", "--page-size", "16", "--attention-backend", "triton"]
    for sglang in ("0.5.11", "0.5.23"):
        assert first(argv, sglang)[0] == "spec.ngram_topk_page_size"
        ok = run([*argv[:-2], "--attention-backend", "flashinfer"], sglang)
        assert ok.ok and "spec.ngram_draft_tokens_12" in notice_ids(ok)
    dp = [*QWEN3, "--speculative-algorithm", "NGRAM", "--enable-dp-attention", "--dp-size", "2"]
    assert first(dp, "0.5.11")[0] == "parallel.tp_not_divisible_by_dp"  # the default tp is 1
    assert first([*dp, "--tp", "2"], "0.5.11")[0] == "spec.ngram_dp_attention"


def test_standalone_and_dflash_rules() -> None:
    dp = ["--enable-dp-attention", "--dp-size", "2", "--tp", "2"]
    assert (
        first([*QWEN3, "--speculative-algorithm", "STANDALONE", *dp], "0.5.11")[0]
        == "spec.standalone_dp_attention"
    )
    for sglang in ("0.5.11", "0.5.23"):
        assert (
            first([*QWEN3, "--speculative-algorithm", "DFLASH"], sglang)[0] == "spec.dflash_needs_draft_model"
        )
        assert run(
            [*QWEN3, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d"], sglang
        ).ok
    mismatch = [*QWEN3, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d",
                "--speculative-num-draft-tokens", "8", "--speculative-dflash-block-size", "16"]  # fmt: skip
    assert first(mismatch, "0.5.11")[0] == "spec.dflash_block_size_mismatch"


def test_spec_v1_notices_follow_env_and_topk() -> None:
    argv = [
        *QWEN3,
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
    ]
    off = run(argv, "0.5.11", env={"SGLANG_ENABLE_SPEC_V2": "0"})
    assert "spec.v1" in notice_ids(off) and "SGLANG_ENABLE_SPEC_V2=False" in off.notices[-2].message
    topk = run([*argv[:-1], "2", "--speculative-num-draft-tokens", "4"], "0.5.11")
    assert any(n.id == "spec.v1" and "topk = 1" in n.message for n in topk.notices)


def test_unknown_algorithm_on_0_5_23_and_lowercase() -> None:
    assert first([*QWEN3, "--speculative-algorithm", "FOO"], "0.5.23")[0] == "spec.unknown_algorithm"
    assert run([*QWEN3, "--speculative-algorithm", "eagle"], "0.5.23").ok


def test_every_rule_cites_a_source_and_has_a_unique_place() -> None:
    for version in DIALECTS:
        for step in table_for(version):
            assert (
                step.source.endswith(f"({version})") or "spec_info" in step.source or "FACTS" in step.source
            )


def test_architecture_from_config_and_name() -> None:
    assert architecture_of("x", {"architectures": ["Qwen3NextForCausalLM"]}) == "Qwen3NextForCausalLM"
    assert is_hybrid_gdn(architecture_of("Qwen/Qwen3.6-27B"))
    assert is_hybrid_gdn(architecture_of("/models/Qwen3-Next-80B-A3B-Instruct"))
    assert architecture_of("Qwen/Qwen3.5-35B-A3B") == "Qwen3_5MoeForConditionalGeneration"
    assert architecture_of("meta-llama/Llama-3.1-8B") == "LlamaForCausalLM"
    assert architecture_of("some/unknown") is None and not is_hybrid_gdn(None)


# -- rules that are not about speculation (issue 17), each measured against the wheels ----------------------


def test_dp_attention_needs_tp_divisible_by_dp_default_tp_included() -> None:
    for sglang, dp in (
        ("0.5.11", ["--dp", "2", "--enable-dp-attention"]),
        ("0.5.23", ["--attn-dp-size", "2"]),
    ):
        error = run([*QWEN3, *dp], sglang).errors[0]
        assert (error.id, error.raises, error.sglang_text) == (
            "parallel.tp_not_divisible_by_dp",
            "AssertionError",
            "",
        )
        assert "(1, the default)" in error.message
        assert run([*QWEN3, *dp, "--tp", "4"], sglang).ok
    assert run([*QWEN3, "--dp", "2", "--enable-dp-attention", "--tp", "3"], "0.5.23").errors[0].flag == "--dp"
    assert run([*QWEN3, "--enable-dp-attention"], "0.5.11").ok  # --dp 1: SGLang turns it off


def test_page_size_must_divide_the_chunk_sglang_picks_for_the_gpu() -> None:
    argv = [*QWEN3, "--page-size", "48"]
    error = run(argv, "0.5.11", gpu_memory_mb=49140).errors[0]  # 48 GB: 4096
    assert (error.id, error.sglang_text) == (
        "memory.chunked_prefill_page_size",
        "chunked_prefill_size must be divisible by page_size",
    )
    assert "4096, which SGLang picks from the GPU's memory" in error.message
    assert run([*argv, "--chunked-prefill-size", "4800"], "0.5.11", gpu_memory_mb=49140).ok
    # dp attention divides the chunk: 8192 // 3 = 2730 is no multiple of 64
    dp = [*QWEN3, "--tp", "3", "--dp", "3", "--enable-dp-attention", "--page-size", "64"]
    assert first(dp, "0.5.11", "9.0", gpu_memory_mb=81559)[0] == "memory.chunked_prefill_page_size"


def test_unknown_gpu_memory_is_an_error_only_when_every_size_fails() -> None:
    every = run([*QWEN3, "--page-size", "48"], "0.5.11")
    assert every.errors[0].id == "memory.chunked_prefill_page_size"
    assert "2048 or 4096 or 8192 or 16384" in every.errors[0].message
    some = run([*QWEN3, "--page-size", "4096"], "0.5.23")  # 2048 fails, 4096 and more pass
    assert some.ok and "memory.chunked_prefill_page_size_maybe" in notice_ids(some)


def test_page_sizes_forced_by_backends_meet_the_topk_rules() -> None:
    eagle = [*QWEN3, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2",
             "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"]  # fmt: skip
    result = run([*eagle, "--attention-backend", "flashmla"], "0.5.11")
    assert "attention.flashmla_page_size" in notice_ids(result)
    assert result.errors[0].id == "spec.topk_page_size_backend"
    ngram = [*QWEN3, "--speculative-algorithm", "NGRAM"]  # NGRAM's topk is its BFS breadth, 10
    assert (
        first([*ngram, "--attention-backend", "cutlass_mla"], "0.5.11", "10.0")[0]
        == "spec.ngram_topk_page_size"
    )
    assert first([*ngram, "--attention-backend", "fa4"], "0.5.23", "10.0")[0] == "spec.ngram_topk_page_size"
    # A given topk of 1 lets Blackwell pick trtllm_mha, whose pages are 64; NGRAM then drafts 10 wide.
    assert (
        first([*ngram, "--speculative-eagle-topk", "1"], "0.5.23", "10.0")[0] == "spec.ngram_topk_page_size"
    )
    assert run(ngram, "0.5.23", "10.0").ok  # no topk given: flashinfer, which takes the tree


def test_trtllm_mla_needs_blackwell_on_both_versions() -> None:
    argv = [*QWEN3, "--attention-backend", "trtllm_mla"]
    for sglang in ("0.5.11", "0.5.23"):
        for cc in ("8.6", "9.0"):
            assert first(argv, sglang, cc)[:3] == (
                "attention.trtllm_mla_hardware",
                "--attention-backend",
                "ValueError",
            )
        assert run(argv, sglang, "10.0").ok
    assert (
        first([*argv, "--kv-cache-dtype", "fp8_e5m2"], "0.5.23", "10.0")[0]
        == "attention.trtllm_mla_kv_cache_dtype"
    )


def test_pipeline_parallelism_with_speculative_decoding() -> None:
    argv = [*QWEN3, "--pp-size", "2", "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "1",
            "--speculative-eagle-topk", "1"]  # fmt: skip
    assert first(argv, "0.5.11")[0] == "parallel.pp_with_speculative"
    assert first(argv, "0.5.23")[0] == "parallel.pp_speculative_needs_prefill_node"
    assert run(argv, "0.5.23", env={"SGLANG_ENABLE_PP_SPEC": "1"}).ok
    ngram = [*QWEN3, "--pp-size", "2", "--speculative-algorithm", "NGRAM"]
    assert first(ngram, "0.5.23")[0] == "parallel.pp_with_speculative"
    assert run([*QWEN3, "--pp-size", "2"], "0.5.11").ok  # SGLang turns the overlap schedule off itself


def test_hybrid_on_blackwell_0_5_23_sets_the_page_size_itself() -> None:
    """The Qwen3.5 override runs before the mamba strategy resolves: triton and page 1 (measured)."""
    argv = [*HYBRID, "--tp", "1", "--page-size", "128", "--chunked-prefill-size", "3000"]
    assert run(argv, "0.5.23", "10.0").ok
    assert first(argv, "0.5.23", "8.6")[0] == "memory.chunked_prefill_page_size"


def test_every_error_at_once_in_sglangs_order() -> None:
    argv = [*QWEN3, "--dp", "3", "--enable-dp-attention", "--page-size", "48", "--pp-size", "2",
            "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "2"]  # fmt: skip
    errors = run(argv, "0.5.11", gpu_memory_mb=49140).errors
    assert [e.id for e in errors] == [
        "parallel.tp_not_divisible_by_dp",
        "spec.topk_without_steps",
        "parallel.pp_with_speculative",
        "memory.chunked_prefill_page_size",
    ]
    assert [e.sglang_first for e in errors] == [True, False, False, False]


def test_typos_name_the_closest_flag_and_the_rules_still_run() -> None:
    result = run([*QWEN3, "--speculative-num-stpes", "2", "--dp", "2", "--enable-dp-attention"], "0.5.23")
    assert [e.id for e in result.errors] == ["argv.unrecognized", "parallel.tp_not_divisible_by_dp"]
    assert "did you mean --speculative-num-steps?" in result.errors[0].message
    choice = run([*QWEN3, "--mamba-radix-cache-strategy", "extra_bufer"], "0.5.23").errors
    assert [e.id for e in choice] == ["argv.invalid_choice"] and "did you mean extra_buffer?" in choice[
        0
    ].message


def test_versions_outside_the_rule_sets_say_so() -> None:
    older = run(QWEN3, "0.5.9")
    assert older.rule_set == "0.5.11" and older.warnings[0].startswith(
        "SGLang 0.5.9 is older than the oldest"
    )
    assert run(QWEN3, "0.5.15").warnings == () and run(QWEN3, "0.5.22").rule_set == "0.5.23"


def test_flashinfer_gdn_decode_on_blackwell_needs_a_bf16_ssm_state() -> None:
    argv = [*QWEN3, "--linear-attn-backend", "flashinfer"]
    for sglang in ("0.5.11", "0.5.23"):
        error = run(argv, sglang, "10.0").errors[0]
        assert (error.id, error.raises) == ("attention.linear_flashinfer_needs_bf16_ssm", "ValueError")
        assert error.sglang_text == (
            "--linear-attn-decode-backend flashinfer on SM100+ requires --mamba-ssm-dtype bfloat16, got None"
        )
        assert run([*argv, "--mamba-ssm-dtype", "bfloat16"], sglang, "10.0").ok
        assert run(argv, sglang, "9.0").ok


def test_mla_models_get_sglangs_default_backends() -> None:
    dsv3 = ["--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8"]
    tree = [*dsv3, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2",
            "--speculative-eagle-topk", "4", "--page-size", "32"]  # fmt: skip
    assert first(tree, "0.5.11", "8.6")[0] == "spec.topk_page_size_backend"  # triton: not a tree backend
    assert run(tree, "0.5.11", "9.0").ok  # fa3 on Hopper takes the tree
    # SM100: the model step picks trtllm_mla (pages of 64), whose tree the topk rule refuses
    blackwell = run([*dsv3, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2",
                     "--speculative-eagle-topk", "4"], "0.5.23", "10.0")  # fmt: skip
    assert "attention.trtllm_mla_page_size" in notice_ids(blackwell)
    assert blackwell.errors[0].id == "spec.topk_page_size_backend"


def test_dflash_counts_as_topk_one_on_blackwell_in_0_5_23() -> None:
    argv = [*HYBRID, "--tp", "1", "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d",
            "--mamba-radix-cache-strategy", "no_buffer", "--disable-overlap-schedule"]  # fmt: skip
    assert first(argv, "0.5.23", "10.0")[0] == "mamba.no_buffer_page_size"  # trtllm_mha's 64-token pages


# -- expert parallelism and MoE kernels, memory and scheduling (issue 17, measured with --moe) ---------------

MOE = ["--model-path", "Qwen/Qwen3-30B-A3B", "--tp", "4"]


def test_moe_runners_take_only_their_quantizations_and_ep_sizes() -> None:
    for sglang, line in (("0.5.11", "2962-2968"), ("0.5.23", "80-88")):
        error = run(
            [*MOE, "--moe-runner-backend", "flashinfer_cutlass", "--quantization", "awq"], sglang
        ).errors[0]
        assert (error.id, error.flag, error.raises) == (
            "moe.flashinfer_cutlass_quantization",
            "--moe-runner-backend",
            "AssertionError",
        )
        assert error.sglang_text.startswith("Invalid quantization 'awq'. \nFlashInfer Cutlass MOE")
        assert line in error.source
        ep = run([*MOE, "--moe-runner-backend", "flashinfer_cutlass", "--ep", "2"], sglang).errors[0]
        assert ep.id == "moe.flashinfer_cutlass_ep_size" and ep.flag == "--ep"
        assert run([*MOE, "--moe-runner-backend", "flashinfer_cutlass", "--ep-size", "4"], sglang).ok
    # cutedsl: 0.5.11 takes only modelopt_fp4; bf16 (no --quantization) is refused on both
    assert first([*MOE, "--moe-runner-backend", "flashinfer_cutedsl"], "0.5.11")[0] == (
        "moe.flashinfer_cutedsl_quantization"
    )
    fp8 = [*MOE, "--moe-runner-backend", "cutlass", "--quantization", "fp8", "--ep-size", "2"]
    assert first(fp8, "0.5.23")[0] == "moe.cutlass_fp8_ep_size"
    # mxfp8 moves an unsuitable runner to flashinfer_trtllm, which takes mxfp8
    assert run([*MOE, "--moe-runner-backend", "triton", "--quantization", "mxfp8"], "0.5.11").ok


def test_a2a_backends_set_ep_to_tp_and_flashinfer_a2a_needs_its_runner() -> None:
    deepep = run([*MOE, "--moe-a2a-backend", "deepep", "--ep-size", "2", "--enable-eplb"], "0.5.11")
    assert deepep.ok and "moe.a2a_sets_ep_size" in notice_ids(deepep)
    flashinfer = [*MOE, "--moe-a2a-backend", "flashinfer"]
    error = run(flashinfer, "0.5.11").errors[0]
    assert (error.id, error.sglang_text) == (
        "moe.flashinfer_a2a_runner",
        "Flashinfer MoE A2A is only supported with flashinfer_cutlass moe runner backend",
    )
    assert run([*flashinfer, "--moe-runner-backend", "flashinfer_cutlass"], "0.5.11").ok
    # 0.5.23 first asks for attention DP over the whole TP group, then widens the runners
    assert first(flashinfer, "0.5.23")[0] == "moe.flashinfer_a2a_attn_dp"
    dp = [*flashinfer, "--attn-dp-size", "4"]
    assert first(dp, "0.5.23")[0] == "moe.flashinfer_a2a_runner"
    assert run([*dp, "--moe-runner-backend", "deep_gemm"], "0.5.23").ok


def test_eplb_needs_expert_parallelism() -> None:
    for sglang in ("0.5.11", "0.5.23"):
        assert first([*MOE, "--enable-eplb"], sglang) == (
            "moe.eplb_needs_ep",
            "--enable-eplb",
            "AssertionError",
        )
        assert run([*MOE, "--enable-eplb", "--ep-size", "2"], sglang).ok


def test_scheduling_checks_of_check_server_args() -> None:
    for sglang in ("0.5.11", "0.5.23"):
        error = run([*QWEN3, "--schedule-conservativeness", "-0.5"], sglang).errors[0]
        assert (error.id, error.sglang_text) == (
            "schedule.conservativeness_negative",
            "schedule_conservativeness must be non-negative",
        )
        priority = [*QWEN3, "--enable-priority-scheduling", "--schedule-policy", "lpm"]
        assert first(priority, sglang)[0] == "schedule.priority_policy"
        assert run([*QWEN3, "--enable-priority-scheduling", "--schedule-policy", "lof"], sglang).ok
        # memory flags out of range pass SGLang's argument processing (they fail later, if at all)
        assert run([*QWEN3, "--mem-fraction-static", "1.2", "--max-running-requests", "0"], sglang).ok
    # moe_dense_tp_size: 0.5.23 also takes the TP size
    assert first([*MOE, "--moe-dense-tp-size", "4"], "0.5.11")[0] == "moe.dense_tp_size"
    assert run([*MOE, "--moe-dense-tp-size", "4"], "0.5.23").ok
    assert first([*MOE, "--moe-dense-tp-size", "2"], "0.5.23")[0] == "moe.dense_tp_size"


def test_mori_dispatch_budget_holds_the_chunk_after_dp_division() -> None:
    mori = [*MOE, "--moe-a2a-backend", "mori", "--chunked-prefill-size", "8192"]
    for sglang in ("0.5.11", "0.5.23"):
        error = run(mori, sglang).errors[0]
        assert (error.id, error.raises) == ("moe.mori_dispatch_tokens", "AssertionError")
        assert error.sglang_text.startswith("SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 4096)")
        limit = {"SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "8192"}
        assert run(mori, sglang, env=limit).ok
        assert run([*mori, "--chunked-prefill-size", "-1"], sglang).ok  # chunked prefill off
    # the DP division comes first: 8192 // 2 fits
    assert run([*mori, "--dp", "2", "--enable-dp-attention"], "0.5.11").ok
    # the size picked from the GPU's memory: 8192 on an 80 GB card
    assert not run([*MOE, "--moe-a2a-backend", "mori"], "0.5.11", "9.0", gpu_memory_mb=81559).ok


def test_pplx_on_0_5_23_low_latency_attention_dp_deep_gemm_and_a_budget() -> None:
    pplx = [*MOE, "--moe-a2a-backend", "pplx"]
    assert first([*pplx, "--deepep-mode", "normal"], "0.5.23")[0] == "moe.pplx_low_latency_only"
    assert first(pplx, "0.5.23")[0] == "moe.pplx_needs_attn_dp"
    dp = [*pplx, "--attn-dp-size", "4"]
    assert first([*dp, "--moe-runner-backend", "triton"], "0.5.23")[0] == "moe.pplx_runner"
    # 8192 // 4 = 2048 tokens a rank: over the 128 of SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK
    error = run([*dp, "--chunked-prefill-size", "8192"], "0.5.23").errors[0]
    assert (error.id, error.raises) == ("moe.pplx_dispatch_tokens", "AssertionError")
    assert run([*dp, "--chunked-prefill-size", "-1"], "0.5.23").ok
    assert run(pplx, "0.5.11").errors[0].id == "argv.invalid_choice"  # 0.5.11 has no pplx
