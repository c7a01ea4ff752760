"""SGLang's argument rules that are not about speculation (issue 17): the chunked prefill size SGLang picks
for the GPU, the page sizes attention backends force, their hardware gates, data-parallel attention, and
the checks of ``check_server_args`` that run after all resolution. ``ruletables`` splices these into each
version's table at the place SGLang's code runs them. Every entry cites the wheel's file:line.
"""

from __future__ import annotations

from collections.abc import Callable

from gdnconsole.sglang.rulekit import Ctx, Resolve, Rule, Step

# (upper bound in MiB, chunked prefill size) per GPU memory tier; None: SGLang could not read the memory.
CHUNK_TIERS_0_5_11 = ((20 * 1024, 2048), (35 * 1024, 2048), (60 * 1024, 4096), (160 * 1024, 8192))
CHUNK_TIERS_0_5_23 = ((20 * 1024, 2048), (35 * 1024, 4096), (60 * 1024, 4096), (160 * 1024, 8192))
CHUNK_LARGEST = 16384  # B200, MI300
CHUNK_FALLBACK = 4096


def S11(lines: str, path: str = "srt/server_args.py") -> str:
    return f"{path}:{lines} (0.5.11)"


def S23(lines: str, path: str) -> str:
    return f"srt/{path}:{lines} (0.5.23)"


def _backend_is(name: str, *which: str) -> Callable[[Ctx], bool]:
    """Whether any of the named backend fields (attention, decode, prefill) is ``name``."""
    fields = which or ("attention_backend", "decode_attention_backend")
    return lambda c: any(c.values.get(f) == name for f in fields)


# -- the chunked prefill size, from the GPU's memory --------------------------------------------------------


def chunk_for_memory(memory_mb: float, tiers: tuple[tuple[int, int], ...]) -> int:
    for bound, size in tiers:
        if memory_mb < bound:
            return size
    return CHUNK_LARGEST


def chunk_candidates(c: Ctx, tiers: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """The chunked prefill sizes SGLang may pick: the given one, the one for this GPU's memory, or, with
    the memory unknown, every size it picks for some GPU."""
    if c.chunked_prefill_size is not None:
        return (c.chunked_prefill_size,)
    if c.gpu_memory_mb is not None:
        return (chunk_for_memory(c.gpu_memory_mb, tiers),)
    return tuple(sorted({size for _, size in tiers} | {CHUNK_LARGEST}))


def chunk_default(tiers: tuple[tuple[int, int], ...], source: str) -> Resolve:
    return Resolve(
        "memory.chunked_prefill_default",
        lambda c: c.set(chunked_prefill_candidates=chunk_candidates(c, tiers)),
        source,
    )


def _divide_chunks(c: Ctx, by: int) -> None:
    c.set(chunked_prefill_candidates=tuple(size // by for size in c.chunked_prefill_candidates))


def chunk_page_rules(source: str) -> list[Step]:
    """``check_server_args``: the chunked prefill size must be a multiple of the page size (511 :6821-6826;
    523 validation_hook.py:241-246). With the GPU's memory unknown, an error only if every size fails."""

    def failing(c: Ctx) -> list[int]:
        if c.disaggregation_mode == "decode" or not c.page_size:
            return []
        return [size for size in c.chunked_prefill_candidates if size > 0 and size % c.page_size != 0]

    def every(c: Ctx) -> bool:
        bad = failing(c)
        return bool(bad) and len(bad) == len([s for s in c.chunked_prefill_candidates if s > 0])

    return [
        Rule(
            id="memory.chunked_prefill_page_size",
            flags=("page_size", "chunked_prefill_size"),
            severity="error",
            when=every,
            message=lambda c: (
                f"SGLang would stop with AssertionError: the chunked prefill size ({_sizes(failing(c))}"
                f"{_why_chunk(c)}) must be a multiple of the page size ({c.page_size}). Fix: a page size "
                "that divides it (a power of two such as 16 or 64), or set --chunked-prefill-size to a "
                "multiple of the page size."
            ),
            source=source,
            raises="AssertionError",
            sglang_text=lambda c: "chunked_prefill_size must be divisible by page_size",
        ),
        Rule(
            id="memory.chunked_prefill_page_size_maybe",
            flags=("page_size",),
            severity="notice",
            when=lambda c: bool(failing(c)) and not every(c),
            message=lambda c: (
                f"On some GPUs SGLang would stop: the chunked prefill size it picks from the GPU's memory "
                f"({_sizes(failing(c))}) is not a multiple of the page size ({c.page_size}). Set "
                "--chunked-prefill-size to be sure."
            ),
            source=source,
        ),
    ]


def _sizes(sizes: list[int]) -> str:
    return " or ".join(str(s) for s in sizes)


def _why_chunk(c: Ctx) -> str:
    if "chunked_prefill_size" in c.given:
        return ", divided by the attention DP size" if c.dp_attention else ""
    return ", which SGLang picks from the GPU's memory" + (
        ", divided by the attention DP size" if c.dp_attention else ""
    )


# -- attention backends: page sizes they force, hardware they need -------------------------------------------


def _page_forced(id: str, when: Callable[[Ctx], bool], size: int, why: str, source: str) -> Rule:
    return Rule(
        id=id,
        flags=("page_size",),
        severity="notice",
        when=when,
        message=lambda c: f"SGLang would set --page-size to {size}: {why}.",
        source=source,
        then=lambda c: c.set(page_size=size),
    )


def _blackwell(c: Ctx) -> bool:
    return c.major in (10, 11, 12)


def flashmla_page(source: str) -> Rule:
    return _page_forced(
        "attention.flashmla_page_size",
        lambda c: _backend_is("flashmla")(c) and c.page_size != 64,
        64,
        "FlashMLA supports only 64",
        source,
    )


def trtllm_mla_page(source: str) -> Rule:
    return _page_forced(
        "attention.trtllm_mla_page_size",
        lambda c: _backend_is("trtllm_mla")(c) and c.page_size not in (32, 64),
        64,
        "TensorRT-LLM MLA supports 32 or 64",
        source,
    )


def mla_backends_0_5_11() -> list[Step]:
    """flashmla, cutlass_mla and trtllm_mla in ``_handle_attention_backend_compatibility``
    (511 :2580-2616)."""
    return [
        flashmla_page(S11("2580-2587")),
        _page_forced(
            "attention.cutlass_mla_page_size",
            lambda c: _backend_is("cutlass_mla")(c) and c.page_size != 128,
            128,
            "Cutlass MLA supports only 128",
            S11("2589-2596"),
        ),
        trtllm_mla_hardware("0.5.11", S11("2598-2605")),
        trtllm_mla_page(S11("2606-2610")),
        trtllm_mla_kv_cache_dtype(("fp8_e4m3", "fp4_e2m1", "bf16", "auto"), S11("2611-2616")),
    ]


def trtllm_mla_hardware(version: str, source: str) -> Rule:
    return Rule(
        id="attention.trtllm_mla_hardware",
        flags=("attention_backend", "decode_attention_backend"),
        severity="error",
        when=lambda c: _backend_is("trtllm_mla")(c) and c.major is not None and not _blackwell(c),
        message=lambda c: (
            f"SGLang {version} would stop with ValueError: the trtllm_mla attention backend needs a "
            f"Blackwell GPU (SM100/SM12x); this one is SM {c.major}.x. Fix: choose another "
            "--attention-backend (flashinfer, triton; fa3 on Hopper)."
        ),
        source=source,
        raises="ValueError",
        sglang_text=lambda c: (
            "TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). Please use a "
            "different backend."
        ),
    )


def trtllm_mla_kv_cache_dtype(allowed: tuple[str, ...], source: str) -> Rule:
    listed = ", ".join(allowed[:-1]) + f", or {allowed[-1]}"
    return Rule(
        id="attention.trtllm_mla_kv_cache_dtype",
        flags=("kv_cache_dtype",),
        severity="error",
        when=lambda c: _backend_is("trtllm_mla")(c) and c.kv_cache_dtype not in allowed,
        message=lambda c: (
            f"SGLang would stop with ValueError: the trtllm_mla backend does not take --kv-cache-dtype "
            f"{c.kv_cache_dtype}. Fix: {listed}."
        ),
        source=source,
        raises="ValueError",
        sglang_text=lambda c: f"TensorRT-LLM MLA backend only supports kv-cache-dtype of {listed}.",
    )


def mla_backends_0_5_23() -> list[Step]:
    """``_mla_backend_page_constraints`` (523 arg_groups/overrides.py:1144-1200), run from the attention
    hook before its trtllm_mha checks. (The trtllm_mha page sizes are the existing rule's.)"""

    def src(lines: str) -> str:
        return S23(lines, "arg_groups/overrides.py")

    return [
        flashmla_page(src("1147-1154")),
        trtllm_mla_page(src("1155-1163")),
        _page_forced(
            "attention.cutedsl_mla_page_size",
            lambda c: (
                _backend_is(
                    "cutedsl_mla",
                    "attention_backend",
                    "decode_attention_backend",
                    "prefill_attention_backend",
                )(c)
                and c.page_size not in (32, 64)
            ),
            64,
            "CuteDSL MLA supports 32 or 64",
            src("1164-1173"),
        ),
        _page_forced(
            "attention.trtllm_mha_page_size",
            lambda c: (
                _backend_is(
                    "trtllm_mha",
                    "attention_backend",
                    "decode_attention_backend",
                    "prefill_attention_backend",
                    "speculative_draft_attention_backend",
                )(c)
                and c.page_size not in (16, 32, 64, 128)
            ),
            64,
            "TensorRT-LLM MHA supports 16, 32, 64 or 128",
            src("1174-1187"),
        ),
        trtllm_mla_hardware("0.5.23", src("1203-1213")),
        trtllm_mla_kv_cache_dtype(("fp8_e4m3", "bf16", "auto"), src("1214-1217")),
    ]


# MLA models: the page-size rules of FA4 skip them (511 use_mla_backend; 523 use_mla_backend(view)).
MLA_ARCHS = frozenset(
    {
        "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "KimiK25ForConditionalGeneration",
    }
)


# DeepSeek-V3-style MLA models that get trtllm_mla on SM100 when no backend is given (DSA variants aside).
TRTLLM_MLA_DEFAULT_ARCHS = frozenset(
    {"DeepseekV3ForCausalLM", "KimiK25ForConditionalGeneration", "MistralLarge3ForCausalLM"}
)


def deepseek_sm100_trtllm_mla(source: str) -> Resolve:
    """The model-specific step picks trtllm_mla on SM100 for DeepSeek V3/R1 when no backend is given."""
    return Resolve(
        "attention.deepseek_sm100_trtllm_mla",
        lambda c: c.set(attention_backend="trtllm_mla"),
        source,
        lambda c: (
            c.architecture in TRTLLM_MLA_DEFAULT_ARCHS
            and c.major == 10
            and not any(c.values.get(f) for f in _BACKEND_FIELDS)
        ),
    )


_BACKEND_FIELDS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")


def fa3_fp8_e5m2(source: str) -> Rule:
    return Rule(
        id="attention.fa3_fp8_e5m2_is_triton",
        flags=("attention_backend", "kv_cache_dtype"),
        severity="notice",
        when=lambda c: c.attention_backend == "fa3" and c.kv_cache_dtype == "fp8_e5m2",
        message=lambda c: (
            "SGLang would use the triton attention backend: FlashAttention3 takes only fp8_e4m3."
        ),
        source=source,
        then=lambda c: c.set(attention_backend="triton"),
    )


def fa_backends_0_5_11() -> list[Step]:
    """The FA3 and FA4 adjustments at the end of ``_handle_attention_backend_compatibility``
    (511 :2652-2668): FA4 for prefill on SM100 takes only 128-token pages (non-MLA)."""
    return [
        fa3_fp8_e5m2(S11("2652-2658")),
        _page_forced(
            "attention.fa4_page_size",
            lambda c: (
                c.prefill_attention_backend == "fa4" and c.architecture not in MLA_ARCHS and c.major == 10
            ),
            128,
            "FA4 supports only 128-token pages for non-MLA models on SM100",
            S11("2660-2668"),
        ),
    ]


def fa_backends_0_5_23() -> list[Step]:
    """``_attention_backend_fa3_fp8_fallback`` and ``_fa4_page_constraint`` (523 overrides.py:1263-1297),
    run after the attention hook's trtllm_mha checks (attention_hook.py:239-241)."""
    fa4 = _backend_is("fa4", "attention_backend", "decode_attention_backend", "prefill_attention_backend")
    return [
        fa3_fp8_e5m2(S23("1263-1270", "arg_groups/overrides.py")),
        _page_forced(
            "attention.fa4_page_size",
            lambda c: (
                fa4(c)
                and c.architecture not in MLA_ARCHS
                and c.major == 10
                and (c.speculative_eagle_topk or 0) <= 1
            ),
            128,
            "FA4 supports only 128-token pages for non-MLA models on SM100",
            S23("1273-1297", "arg_groups/overrides.py"),
        ),
    ]


# -- linear attention (GDN) kernels ------------------------------------------------------------------------


def linear_attn_flashinfer_sm100(source: str) -> Rule:
    """``_handle_linear_attn_backend``: FlashInfer's GDN decode on SM100+ needs a bf16 SSM state; the
    dtype is unset unless given (it is read from the model config later), so any model meets it."""

    def decode(c: Ctx) -> object:
        return c.linear_attn_decode_backend or c.linear_attn_backend

    return Rule(
        id="attention.linear_flashinfer_needs_bf16_ssm",
        flags=("linear_attn_decode_backend", "linear_attn_backend", "mamba_ssm_dtype"),
        severity="error",
        when=lambda c: decode(c) == "flashinfer" and c.mamba_ssm_dtype != "bfloat16" and (c.major or 0) >= 10,
        message=lambda c: (
            "SGLang would stop with ValueError: the flashinfer linear-attention decode backend on SM100+ "
            f"needs --mamba-ssm-dtype bfloat16 (it is {c.mamba_ssm_dtype or 'unset'}). Fix: add "
            "--mamba-ssm-dtype bfloat16, or --linear-attn-backend triton."
        ),
        source=source,
        raises="ValueError",
        sglang_text=lambda c: (
            "--linear-attn-decode-backend flashinfer on SM100+ requires --mamba-ssm-dtype bfloat16, "
            f"got {c.mamba_ssm_dtype!r}"
        ),
    )


# -- data parallelism ---------------------------------------------------------------------------------------


def _dp_size(c: Ctx) -> int:
    return int(c.attn_dp_size if c.values.get("attn_dp_size", 1) > 1 else c.dp_size)


def dp_attention_rules(version: str, source: str, dest: str) -> list[Step]:
    """``_handle_data_parallelism``: attention DP splits the TP group, so tp must be a multiple of the DP
    size (a bare assert); then each DP rank prefills a share of the chunk (511 :2928-2942; 523
    parallel_hook.py:313-333)."""
    return [
        Rule(
            id="parallel.tp_not_divisible_by_dp",
            flags=(dest, "tp_size", "enable_dp_attention"),
            severity="error",
            when=lambda c: c.dp_attention and c.tp_size % _dp_size(c) != 0,
            message=lambda c: (
                f"SGLang {version} would stop with a bare AssertionError: with data-parallel attention the "
                f"tensor-parallel size ({c.tp_size}{'' if 'tp_size' in c.given else ', the default'}) must "
                f"be a multiple of the attention DP size ({_dp_size(c)}). Fix: --tp {_dp_size(c)} (or a "
                "multiple of it), or a DP size that divides --tp."
            ),
            source=source,
            raises="AssertionError",
            sglang_text=lambda c: "",
        ),
        Resolve(
            "parallel.dp_attention_chunk",
            lambda c: _divide_chunks(c, _dp_size(c)),
            source,
            lambda c: c.dp_attention and _dp_size(c) > 0,
        ),
    ]


def dp_attention_off_0_5_11() -> Resolve:
    """``--enable-dp-attention`` with ``--dp 1`` does nothing (511 :2929-2931)."""
    return Resolve(
        "parallel.dp_attention_needs_dp",
        lambda c: c.set(enable_dp_attention=False, enable_dp_lm_head=False),
        S11("2929-2931"),
        lambda c: c.dp_size == 1,
    )


def deprecated_dp_attention_0_5_23() -> Resolve:
    """``--dp N --enable-dp-attention`` is read as ``--attn-dp-size N`` (523 parallel_hook.py:39-61)."""

    def apply(c: Ctx) -> None:
        if c.attn_dp_size == 1:
            c.set(attn_dp_size=c.dp_size, dp_size=1)
            if "dp_size" in c.given:
                c.given["attn_dp_size"] = c.given["dp_size"]
        c.set(enable_dp_attention=False)

    return Resolve(
        "parallel.deprecated_dp_attention",
        apply,
        S23("39-61", "arg_groups/parallel_hook.py"),
        lambda c: bool(c.enable_dp_attention),
    )


# -- pipeline parallelism -------------------------------------------------------------------------------


def pp_disables_overlap(source: str) -> Resolve:
    """SGLang turns the overlap schedule off for pipeline parallelism, before speculative decoding."""
    return Resolve(
        "parallel.pp_disables_overlap",
        lambda c: c.set(disable_overlap_schedule=True),
        source,
        lambda c: c.pp_size > 1,
    )


def pp_spec_0_5_11(source: str) -> Rule:
    return Rule(
        id="parallel.pp_with_speculative",
        flags=("pp_size", "speculative_algorithm"),
        severity="error",
        when=lambda c: c.pp_size > 1 and c.spec,
        message=lambda c: (
            "SGLang 0.5.11 would stop with AssertionError: pipeline parallelism does not work with "
            f"speculative decoding (--pp-size {c.pp_size}, {c.speculative_algorithm}). Fix: --pp-size 1, or "
            "no --speculative-algorithm."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: (
            "Pipeline parallelism is not compatible with overlap schedule, speculative decoding"
        ),
    )


def pp_spec_0_5_23() -> list[Step]:
    """``check_pipeline_parallel_compat`` (523 validation_hook.py:119-163), DSPARK's own path left out."""

    def src(lines: str) -> str:
        return S23(lines, "arg_groups/validation_hook.py")

    def pp_spec(c: Ctx) -> bool:
        return c.pp_size > 1 and c.spec and c.speculative_algorithm != "DSPARK"

    def pp_spec_env(c: Ctx) -> bool:
        return c.env.get("SGLANG_ENABLE_PP_SPEC", "false").lower() in ("1", "true", "yes", "y")

    return [
        Rule(
            id="parallel.pp_with_speculative",
            flags=("pp_size", "speculative_algorithm"),
            severity="error",
            when=lambda c: pp_spec(c) and str(c.speculative_algorithm).upper() != "EAGLE",
            message=lambda c: (
                "SGLang 0.5.23 would stop with AssertionError: with --pp-size above 1 only EAGLE (or NEXTN) "
                f"speculative decoding works, not {c.speculative_algorithm}. Fix: --pp-size 1, or "
                "EAGLE/NEXTN."
            ),
            source=src("128-135"),
            raises="AssertionError",
            sglang_text=lambda c: (
                "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding"
            ),
        ),
        Rule(
            id="parallel.pp_speculative_needs_prefill_node",
            flags=("pp_size", "speculative_algorithm"),
            severity="error",
            when=lambda c: (
                pp_spec(c)
                and str(c.speculative_algorithm).upper() == "EAGLE"
                and not pp_spec_env(c)
                and c.disaggregation_mode != "prefill"
            ),
            message=lambda c: (
                "SGLang 0.5.23 would stop with AssertionError: pipeline parallelism with speculative "
                "decoding runs only on PD prefill nodes (--disaggregation-mode prefill) unless "
                "SGLANG_ENABLE_PP_SPEC=1. Fix: --pp-size 1, or one of those."
            ),
            source=src("158-163"),
            raises="AssertionError",
            sglang_text=lambda c: (
                "PP + speculative decoding (MTP) is only supported on prefill nodes "
                "(disaggregation-mode=prefill)"
            ),
        ),
    ]


def multi_node_dp(version: str, source: str) -> Rule:
    """Data-parallel replicas on several nodes (0.5.11: unless attention DP; 0.5.23: dp_size counts
    replicas only, attention DP having moved to --attn-dp-size)."""
    text = (
        "multi-node data parallel is not supported unless dp attention!"
        if version == "0.5.11"
        else "multi-node data-parallel replicas are not supported; use attention DP (--attn-dp-size) "
        "across nodes"
    )
    return Rule(
        id="parallel.multi_node_dp",
        flags=("dp_size", "nnodes"),
        severity="error",
        when=lambda c: c.dp_size > 1 and c.nnodes != 1 and not c.enable_dp_attention,
        message=lambda c: (
            f"SGLang {version} would stop with AssertionError: data-parallel replicas (--dp {c.dp_size}) "
            f"do not span nodes (--nnodes {c.nnodes}). Fix: attention DP, or one node."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: text,
    )


# -- check_server_args --------------------------------------------------------------------------------


def nnodes_rule(source: str) -> Rule:
    return Rule(
        id="parallel.tp_pp_nodes",
        flags=("nnodes", "tp_size"),
        severity="error",
        when=lambda c: (c.tp_size * c.pp_size) % max(int(c.nnodes), 1) != 0,
        message=lambda c: (
            f"SGLang would stop with AssertionError: tp × pp ({c.tp_size} × {c.pp_size}) must be a multiple "
            f"of --nnodes ({c.nnodes}). Fix: spread the ranks evenly over the nodes."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: "tp_size must be divisible by number of nodes",
    )


def check_server_args_0_5_11() -> list[Step]:
    """``ServerArgs.check_server_args`` (511 server_args.py:6770-6826), after all of ``__post_init__``."""
    return [
        nnodes_rule(S11("6774-6777")),
        pp_spec_0_5_11(S11("6785-6788")),
        multi_node_dp("0.5.11", S11("6790-6792")),
        *chunk_page_rules(S11("6821-6826")),
    ]


def check_server_args_0_5_23() -> list[Step]:
    """``check_server_args`` (523 arg_groups/validation_hook.py:172-246), after ``resolve_once``."""
    return [
        nnodes_rule(S23("177-181", "arg_groups/validation_hook.py")),
        *pp_spec_0_5_23(),
        multi_node_dp("0.5.23", S23("199-202", "arg_groups/validation_hook.py")),
        *chunk_page_rules(S23("241-246", "arg_groups/validation_hook.py")),
    ]
