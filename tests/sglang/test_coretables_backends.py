"""Attention backends (coretables: the MLA, FA3/FA4 and linear-attention steps, DeepSeek's SM100 default):
the page sizes they force, said as notices and held in ``values``; the GPUs and KV-cache dtypes they
refuse, word for word. Checked against the rules' code and the wheels they cite (0.5.11
server_args.py:1765-1774, 2580-2668, 2855-2888; 0.5.23 arg_groups/overrides.py:1144-1297,
attention_hook.py:281-345, model_overrides/deepseek_v2.py:177-188)."""

from __future__ import annotations

from gdnconsole.sglang.rules import CheckResult, check

QWEN3 = ["--model-path", "Qwen/Qwen3-8B"]
DSV3 = ["--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8"]
BOTH = ("0.5.11", "0.5.23")


def run(sglang: str, cc: str | None, *flags: str, model: list[str] = QWEN3, **facts: object) -> CheckResult:
    return check([*model, *flags], sglang=sglang, compute_capability=cc, **facts)  # type: ignore[arg-type]


def notice(result: CheckResult, id: str) -> tuple[str | None, str, str] | None:
    """The notice ``id`` as the operator reads it (flag, source, message), or None."""
    found = [(n.flag, n.source, n.message) for n in result.notices if n.id == id]
    assert all(n.severity == "notice" and n.raises is None for n in result.notices)
    return found[0] if found else None


def page(sglang: str, cc: str | None, *flags: str, **facts: object) -> int:
    return int(run(sglang, cc, *flags, **facts).values["page_size"])


def s11(lines: str) -> str:
    return f"srt/server_args.py:{lines} (0.5.11)"


def s23(lines: str, path: str = "overrides.py") -> str:
    return f"srt/arg_groups/{path}:{lines} (0.5.23)"


# -- page sizes the backends force ------------------------------------------------------------------------


def test_flashmla_forces_64_token_pages() -> None:
    for sglang, source in (("0.5.11", s11("2580-2587")), ("0.5.23", s23("1147-1154"))):
        result = run(sglang, "9.0", "--attention-backend", "flashmla", "--page-size", "32")
        assert result.ok and result.values["page_size"] == 64
        assert notice(result, "attention.flashmla_page_size") == (
            "--page-size",
            source,
            "SGLang would set --page-size to 64: FlashMLA supports only 64.",
        )
        assert page(sglang, "9.0", "--decode-attention-backend", "flashmla") == 64
        kept = run(sglang, "9.0", "--attention-backend", "flashmla", "--page-size", "64")
        assert kept.notices == [] and kept.values["page_size"] == 64
        # a prefill-only FlashMLA does not set the page size
        assert page(sglang, "9.0", "--prefill-attention-backend", "flashmla") == 1


def test_cutlass_mla_forces_128_token_pages_on_0_5_11() -> None:
    result = run("0.5.11", "10.0", "--attention-backend", "cutlass_mla", "--page-size", "64")
    assert result.values["page_size"] == 128
    assert notice(result, "attention.cutlass_mla_page_size") == (
        "--page-size",
        s11("2589-2596"),
        "SGLang would set --page-size to 128: Cutlass MLA supports only 128.",
    )
    assert page("0.5.11", "9.0", "--decode-attention-backend", "cutlass_mla") == 128
    assert run("0.5.11", "10.0", "--attention-backend", "cutlass_mla", "--page-size", "128").notices == []


def test_trtllm_mla_keeps_32_or_64_and_forces_64_otherwise() -> None:
    for sglang, source in (("0.5.11", s11("2606-2610")), ("0.5.23", s23("1155-1163"))):
        result = run(sglang, "10.0", "--attention-backend", "trtllm_mla", "--page-size", "128")
        assert result.ok and result.values["page_size"] == 64
        assert notice(result, "attention.trtllm_mla_page_size") == (
            "--page-size",
            source,
            "SGLang would set --page-size to 64: TensorRT-LLM MLA supports 32 or 64.",
        )
        for kept in ("32", "64"):
            same = run(sglang, "10.0", "--attention-backend", "trtllm_mla", "--page-size", kept)
            assert same.notices == [] and same.values["page_size"] == int(kept)
        assert page(sglang, "10.0", "--decode-attention-backend", "trtllm_mla") == 64


def test_cutedsl_mla_on_0_5_23_keeps_32_or_64_whichever_field_names_it() -> None:
    result = run("0.5.23", "10.0", "--attention-backend", "cutedsl_mla")
    assert result.values["page_size"] == 64
    assert notice(result, "attention.cutedsl_mla_page_size") == (
        "--page-size",
        s23("1164-1173"),
        "SGLang would set --page-size to 64: CuteDSL MLA supports 32 or 64.",
    )
    for field in ("--decode-attention-backend", "--prefill-attention-backend"):
        assert page("0.5.23", "10.0", field, "cutedsl_mla", "--page-size", "128") == 64
        assert page("0.5.23", "10.0", field, "cutedsl_mla", "--page-size", "32") == 32
    for kept in ("32", "64"):
        same = run("0.5.23", "10.0", "--attention-backend", "cutedsl_mla", "--page-size", kept)
        assert same.notices == [] and same.values["page_size"] == int(kept)


def test_trtllm_mha_on_0_5_23_keeps_16_to_128_and_reads_every_backend_field() -> None:
    result = run("0.5.23", "10.0", "--attention-backend", "trtllm_mha", "--page-size", "256")
    assert result.values["page_size"] == 64
    assert notice(result, "attention.trtllm_mha_page_size") == (
        "--page-size",
        s23("1174-1187"),
        "SGLang would set --page-size to 64: TensorRT-LLM MHA supports 16, 32, 64 or 128.",
    )
    for kept in (16, 32, 64, 128):
        same = run("0.5.23", "10.0", "--attention-backend", "trtllm_mha", "--page-size", str(kept))
        assert same.notices == [] and same.values["page_size"] == kept
    for field in ("--decode-attention-backend", "--prefill-attention-backend"):
        assert page("0.5.23", "10.0", "--attention-backend", "triton", field, "trtllm_mha") == 64
    draft = ["--attention-backend", "triton", "--speculative-draft-attention-backend", "trtllm_mha"]
    assert page("0.5.23", "9.0", *draft) == 64
    assert page("0.5.23", "9.0", "--attention-backend", "triton") == 1


def test_fa4_forces_128_token_pages_for_non_mla_models_on_sm100() -> None:
    fa4 = (
        "SGLang would set --page-size to 128: FA4 supports only 128-token pages for non-MLA models on SM100."
    )
    # 0.5.11 reads only the prefill backend
    old = run("0.5.11", "10.0", "--attention-backend", "triton", "--prefill-attention-backend", "fa4")
    assert old.values["page_size"] == 128
    assert notice(old, "attention.fa4_page_size") == ("--page-size", s11("2660-2668"), fa4)
    assert page("0.5.11", "10.0", "--attention-backend", "fa4") == 1
    assert page("0.5.11", "9.0", "--attention-backend", "triton", "--prefill-attention-backend", "fa4") == 1
    assert (
        page(
            "0.5.11",
            "10.0",
            "--attention-backend",
            "triton",
            "--prefill-attention-backend",
            "fa4",
            model=DSV3,
        )
        == 1
    )
    # 0.5.23 reads every backend field, and leaves a tree of EAGLE drafts (topk above 1) its own page size
    new = run("0.5.23", "10.0", "--attention-backend", "fa4")
    assert new.values["page_size"] == 128
    assert notice(new, "attention.fa4_page_size") == ("--page-size", s23("1273-1297"), fa4)
    for field in ("--decode-attention-backend", "--prefill-attention-backend"):
        assert page("0.5.23", "10.0", "--attention-backend", "triton", field, "fa4") == 128
    assert page("0.5.23", "9.0", "--attention-backend", "fa4") == 1
    assert page("0.5.23", "10.0", "--attention-backend", "fa4", model=DSV3) == 1
    eagle = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2",
             "--speculative-num-draft-tokens", "4", "--speculative-draft-model-path", "d"]  # fmt: skip
    assert (
        page("0.5.23", "10.0", "--attention-backend", "fa4", *eagle, "--speculative-eagle-topk", "1") == 128
    )
    assert page("0.5.23", "10.0", "--attention-backend", "fa4", *eagle, "--speculative-eagle-topk", "2") == 1


# -- hardware and dtypes the backends need ------------------------------------------------------------------


def test_trtllm_mla_refuses_gpus_before_blackwell_naming_the_sm() -> None:
    for sglang, source in (("0.5.11", s11("2598-2605")), ("0.5.23", s23("1203-1213"))):
        for cc, major in (("8.6", "8"), ("9.0", "9")):
            [error] = run(sglang, cc, "--attention-backend", "trtllm_mla").errors
            assert (error.id, error.flag, error.raises, error.source) == (
                "attention.trtllm_mla_hardware",
                "--attention-backend",
                "ValueError",
                source,
            )
            assert error.message == (
                f"SGLang {sglang} would stop with ValueError: the trtllm_mla attention backend needs a Blackwell "
                f"GPU (SM100/SM12x); this one is SM {major}.x. Fix: choose another --attention-backend "
                "(flashinfer, triton; fa3 on Hopper)."
            )
            assert error.sglang_text == (
                "TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). Please use a different "
                "backend."
            )
        [decode] = run(sglang, "9.0", "--decode-attention-backend", "trtllm_mla").errors
        assert (decode.id, decode.flag) == ("attention.trtllm_mla_hardware", "--decode-attention-backend")
        for blackwell in ("10.0", "11.0", "12.0"):
            assert run(sglang, blackwell, "--attention-backend", "trtllm_mla").ok, blackwell
        assert run(sglang, None, "--attention-backend", "trtllm_mla").ok  # the GPU unknown: no verdict


def test_trtllm_mla_kv_cache_dtypes_per_version() -> None:
    for sglang, source, listed in (
        ("0.5.11", s11("2611-2616"), "fp8_e4m3, fp4_e2m1, bf16, or auto"),
        ("0.5.23", s23("1214-1217"), "fp8_e4m3, bf16, or auto"),
    ):
        flags = ["--attention-backend", "trtllm_mla", "--kv-cache-dtype", "fp8_e5m2"]
        [error] = run(sglang, "10.0", *flags).errors
        assert (error.id, error.flag, error.raises, error.source) == (
            "attention.trtllm_mla_kv_cache_dtype",
            "--kv-cache-dtype",
            "ValueError",
            source,
        )
        assert error.message == (
            "SGLang would stop with ValueError: the trtllm_mla backend does not take --kv-cache-dtype fp8_e5m2. "
            f"Fix: {listed}."
        )
        assert error.sglang_text == f"TensorRT-LLM MLA backend only supports kv-cache-dtype of {listed}."
        for dtype in ("fp8_e4m3", "bf16", "auto"):
            assert run(sglang, "10.0", "--attention-backend", "trtllm_mla", "--kv-cache-dtype", dtype).ok
        assert run(sglang, "10.0", "--kv-cache-dtype", "fp8_e5m2", "--attention-backend", "triton").ok
    assert run("0.5.11", "10.0", "--attention-backend", "trtllm_mla", "--kv-cache-dtype", "fp4_e2m1").ok
    # 0.5.11 raises on the GPU first; both are reported, in that order
    both = run("0.5.11", "9.0", "--attention-backend", "trtllm_mla", "--kv-cache-dtype", "fp8_e5m2").errors
    assert [e.id for e in both] == ["attention.trtllm_mla_hardware", "attention.trtllm_mla_kv_cache_dtype"]


def test_fa3_with_fp8_e5m2_falls_back_to_triton() -> None:
    for sglang, source in (("0.5.11", s11("2652-2658")), ("0.5.23", s23("1263-1270"))):
        result = run(sglang, "9.0", "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e5m2")
        assert result.ok and result.values["attention_backend"] == "triton"
        assert notice(result, "attention.fa3_fp8_e5m2_is_triton") == (
            "--attention-backend",
            source,
            "SGLang would use the triton attention backend: FlashAttention3 takes only fp8_e4m3.",
        )
        kept = run(sglang, "9.0", "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e4m3")
        assert kept.notices == [] and kept.values["attention_backend"] == "fa3"
        # DeepSeek's Hopper default is fa3: the dtype is then the flag the operator typed
        default = run(sglang, "9.0", "--kv-cache-dtype", "fp8_e5m2", model=DSV3)
        assert default.values["attention_backend"] == "triton"
        assert notice(default, "attention.fa3_fp8_e5m2_is_triton") == (
            "--kv-cache-dtype",
            source,
            "SGLang would use the triton attention backend: FlashAttention3 takes only fp8_e4m3.",
        )
        other = run(sglang, "9.0", "--attention-backend", "flashinfer", "--kv-cache-dtype", "fp8_e5m2")
        assert other.notices == [] and other.values["attention_backend"] == "flashinfer"


def test_flashinfer_linear_attention_decode_on_sm100_needs_a_bf16_ssm_state() -> None:
    for sglang, source in (("0.5.11", s11("2855-2888")), ("0.5.23", s23("281-345", "attention_hook.py"))):
        flags = ["--attention-backend", "triton", "--linear-attn-decode-backend", "flashinfer"]
        [error] = run(sglang, "10.0", *flags, "--mamba-ssm-dtype", "float32").errors
        assert (error.id, error.flag, error.raises, error.source) == (
            "attention.linear_flashinfer_needs_bf16_ssm",
            "--linear-attn-decode-backend",
            "ValueError",
            source,
        )
        assert error.message == (
            "SGLang would stop with ValueError: the flashinfer linear-attention decode backend on SM100+ needs "
            "--mamba-ssm-dtype bfloat16 (it is float32). Fix: add --mamba-ssm-dtype bfloat16, or "
            "--linear-attn-backend triton."
        )
        assert error.sglang_text == (
            "--linear-attn-decode-backend flashinfer on SM100+ requires --mamba-ssm-dtype bfloat16, got 'float32'"
        )
        unset = run(sglang, "12.0", *flags).errors[0]
        assert "(it is unset)" in unset.message and unset.sglang_text.endswith("got None")
        # the decode backend, when given, is the one that counts; else the linear-attention backend
        assert run(sglang, "10.0", "--linear-attn-backend", "flashinfer", "--linear-attn-decode-backend",
                   "triton", "--attention-backend", "triton").ok  # fmt: skip
        [generic] = run(
            sglang, "10.0", "--linear-attn-backend", "flashinfer", "--attention-backend", "triton"
        ).errors
        assert generic.flag == "--linear-attn-backend"
        assert run(sglang, "10.0", *flags, "--mamba-ssm-dtype", "bfloat16").ok
        assert run(sglang, "9.0", *flags).ok
        assert run(sglang, None, *flags).ok


# -- DeepSeek's default on SM100 ----------------------------------------------------------------------------


def test_deepseek_v3_gets_trtllm_mla_on_sm100_when_no_backend_is_given() -> None:
    for sglang in BOTH:
        chosen = run(sglang, "10.0", model=DSV3)
        assert (chosen.values["attention_backend"], chosen.values["page_size"]) == ("trtllm_mla", 64)
        for cc in ("9.0", "12.0"):
            assert run(sglang, cc, model=DSV3).values["attention_backend"] != "trtllm_mla"
        for field in ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend"):
            given = run(sglang, "10.0", field, "flashinfer", model=DSV3)
            assert given.values["attention_backend"] != "trtllm_mla", field
        for arch in ("KimiK25ForConditionalGeneration", "MistralLarge3ForCausalLM"):
            assert run(sglang, "10.0", architecture=arch).values["attention_backend"] == "trtllm_mla"
        for arch in ("DeepseekV2ForCausalLM", "Qwen3ForCausalLM"):
            assert run(sglang, "10.0", architecture=arch).values["attention_backend"] != "trtllm_mla"
