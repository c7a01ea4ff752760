"""SGLang's argument rules that are not about speculation (issue 17): the chunked prefill size SGLang picks
for the GPU, the page sizes attention backends force, their hardware gates, data-parallel attention, and
the checks of ``check_server_args`` that run after all resolution. ``ruletables`` splices these into each
version's table at the place SGLang's code runs them. Every entry cites the wheel's file:line.
"""

from __future__ import annotations

from collections.abc import Callable

from gdnconsole.sglang import servingtables as serving
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
    parallel_hook.py:313-333). A DP size of 0 (0.5.11's ``--dp 0 --enable-dp-attention``) stops SGLang at
    the same assert, whose modulo raises ZeroDivisionError: the message says so."""

    def message(c: Ctx) -> str:
        if _dp_size(c) == 0:
            return (
                f"SGLang {version} would stop with ZeroDivisionError: with data-parallel attention the "
                "tensor-parallel size must be a multiple of the attention DP size, and a DP size of 0 "
                "divides by zero. Fix: a DP size of 1 or more that divides --tp."
            )
        return (
            f"SGLang {version} would stop with a bare AssertionError: with data-parallel attention the "
            f"tensor-parallel size ({c.tp_size}{'' if 'tp_size' in c.given else ', the default'}) must "
            f"be a multiple of the attention DP size ({_dp_size(c)}). Fix: --tp {_dp_size(c)} (or a "
            "multiple of it), or a DP size that divides --tp."
        )

    return [
        Rule(
            id="parallel.tp_not_divisible_by_dp",
            flags=(dest, "tp_size", "enable_dp_attention"),
            severity="error",
            when=lambda c: c.dp_attention and (_dp_size(c) == 0 or c.tp_size % _dp_size(c) != 0),
            message=message,
            source=source,
            raises="AssertionError",
            sglang_text=lambda c: "integer modulo by zero" if _dp_size(c) == 0 else "",
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
    """``ServerArgs.check_server_args`` (511 server_args.py:6770-6940), after all of ``__post_init__``."""
    return [
        nnodes_rule(S11("6774-6777")),
        pp_spec_0_5_11(S11("6785-6788")),
        multi_node_dp("0.5.11", S11("6790-6792")),
        moe_dense_tp_rule("0.5.11", S11("6797-6801")),
        *serving.lora_rules_0_5_11(),  # check_lora_server_args (:6812)
        *chunk_page_rules(S11("6821-6826")),
        priority_policy_rule(S11("6862-6866")),
        conservativeness_rule(S11("6914-6916")),
        serving.two_batch_overlap_0_5_11(),
    ]


def check_server_args_0_5_23() -> list[Step]:
    """``check_server_args`` (523 arg_groups/validation_hook.py:172-346), after ``resolve_once``."""
    return [
        nnodes_rule(S23("177-181", "arg_groups/validation_hook.py")),
        *pp_spec_0_5_23(),
        multi_node_dp("0.5.23", S23("199-202", "arg_groups/validation_hook.py")),
        moe_dense_tp_rule("0.5.23", S23("207-211", "arg_groups/validation_hook.py")),
        *serving.lora_rules_0_5_23(),  # check_lora_server_args (validation_hook.py:222)
        *chunk_page_rules(S23("241-246", "arg_groups/validation_hook.py")),
        priority_policy_rule(S23("282-287", "arg_groups/validation_hook.py")),
        conservativeness_rule(S23("314-316", "arg_groups/validation_hook.py")),
        serving.two_batch_overlap_0_5_23(),  # check_two_batch_overlap (validation_hook.py:346)
    ]


# -- expert parallelism and MoE kernels ----------------------------------------------------------------------

# The quantizations each MoE runner accepts (None: unquantized bf16).
_CUTLASS_QUANTS = ("modelopt_fp4", "modelopt_fp8", "modelopt_mixed", None)
_TRTLLM_QUANTS_0_5_11 = (
    "modelopt_fp4",
    "fp8",
    "mxfp8",
    "modelopt_fp8",
    "modelopt_mixed",
    "compressed-tensors",
    None,
)
_TRTLLM_QUANTS_0_5_23 = (
    "modelopt_fp4", "nvfp4_online", "fp8", "mxfp8", "modelopt_fp8", "modelopt_mixed", "compressed-tensors",
    None,
)  # fmt: skip
_ROUTED_QUANTS_0_5_11 = ("fp8", "mxfp8", "modelopt_fp4", None)
_ROUTED_QUANTS_0_5_23 = (
    "fp8",
    "mxfp8",
    "modelopt_fp4",
    "modelopt_mixed",
    "nvfp4_online",
    "minimax_m3_nvfp4",
    None,
)
_CUTEDSL_QUANTS_0_5_11 = ("modelopt_fp4",)
_CUTEDSL_QUANTS_0_5_23 = ("modelopt_fp4", "modelopt_mixed", "nvfp4_online")
# MoE all-to-all backends that span the whole TP group: SGLang sets ep_size = tp_size for them.
A2A_EP_SPANNING_0_5_11 = frozenset({"deepep", "mooncake", "nixl", "ascend_fuseep", "flashinfer", "mori"})
A2A_EP_SPANNING_0_5_23 = frozenset(
    {"megamoe", "deepep", "deepep_v2", "mooncake", "nixl", "ascend_fuseep", "flashinfer",
     "flashinfer_megamoe", "mori", "pplx"}
)  # fmt: skip
MXFP8_RUNNERS_0_5_11 = ("cutlass", "flashinfer_trtllm", "flashinfer_trtllm_routed")
MXFP8_RUNNERS_0_5_23 = (
    "cutlass",
    "deep_gemm",
    "flashinfer_megamoe",
    "flashinfer_trtllm",
    "flashinfer_trtllm_routed",
)


def _quant_list(quants: tuple[str | None, ...]) -> str:
    return ", ".join("bf16 (none)" if q is None else q for q in quants)


def _moe_quant_rule(
    id: str, runners: tuple[str, ...], quants: tuple[str | None, ...], text: str, source: str
) -> Rule:
    """A MoE runner that accepts only some quantizations (``Invalid quantization ...``)."""
    return Rule(
        id=id,
        flags=("moe_runner_backend", "quantization"),
        severity="error",
        when=lambda c: c.moe_runner_backend in runners and c.quantization not in quants,
        message=lambda c: (
            f"SGLang would stop with AssertionError: --moe-runner-backend {c.moe_runner_backend} does not "
            f"run {c.quantization or 'unquantized (bf16)'} weights; it takes {_quant_list(quants)}. "
            "Fix: another --moe-runner-backend (auto, triton), or a checkpoint in one of those formats."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: f"Invalid quantization '{c.quantization}'. \n{text}",
    )


def _moe_ep_rule(id: str, runner: str, source: str) -> Rule:
    return Rule(
        id=id,
        flags=("ep_size", "moe_runner_backend"),
        severity="error",
        when=lambda c: c.moe_runner_backend == runner and c.ep_size not in (1, c.tp_size),
        message=lambda c: (
            f"SGLang would stop with AssertionError: --moe-runner-backend {runner} needs the expert-parallel "
            f"size to be 1 or the tensor-parallel size ({c.tp_size}), not {c.ep_size}. Fix: --ep-size "
            f"{c.tp_size} or 1."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: "The expert parallel size must be 1 or the same as the tensor parallel size",
    )


def mxfp8_runner(allowed: tuple[str, ...], source: str) -> Resolve:
    """mxfp8 checkpoints run on flashinfer_trtllm unless the runner is one that takes them."""
    return Resolve(
        "moe.mxfp8_runner",
        lambda c: c.set(moe_runner_backend="flashinfer_trtllm"),
        source,
        lambda c: c.quantization == "mxfp8" and c.moe_runner_backend not in allowed,
    )


def moe_kernel_rules(version: str) -> list[Step]:
    """``_handle_moe_kernel_config`` (511 server_args.py:2946-3036; 523 arg_groups/moe_hook.py:70-163 with
    the quantization resolution of overrides.py:1449-1519), the ``SGLANG_CUTLASS_MOE`` variable aside."""
    new = version != "0.5.11"

    def src(lines511: str, lines523: str) -> str:
        return S23(lines523, "arg_groups/moe_hook.py") if new else S11(lines511)

    cutedsl_text = (
        "FlashInfer CuteDSL MOE currently supports only: 'modelopt_fp4', 'modelopt_mixed' (with NVFP4 MoE "
        "layers), 'nvfp4_online', or hybrid NVFP4 models."
        if new
        else "FlashInfer CuteDSL MOE currently supports only: 'modelopt_fp4'."
    )
    trtllm_text = (
        "FlashInfer TRTLLM MOE supports only: 'modelopt_fp4', "
        + ("'nvfp4_online', " if new else "")
        + "'fp8', 'modelopt_fp8', 'modelopt_mixed', 'compressed-tensors', or bfloat16 (None)."
    )
    routed_text = (
        "FlashInfer TRTLLM routed MOE supports only: 'fp8', 'mxfp8', 'modelopt_fp4', 'modelopt_mixed', "
        "'nvfp4_online', 'minimax_m3_nvfp4', or bfloat16 (None)."
        if new
        else "FlashInfer TRTLLM routed MOE supports only: 'fp8', 'mxfp8', 'modelopt_fp4', or bfloat16 (None)."
    )
    cutedsl_a2a = ("none", "deepep", "flashinfer") if new else ("none", "deepep")
    return [
        mxfp8_runner(
            MXFP8_RUNNERS_0_5_23 if new else MXFP8_RUNNERS_0_5_11,
            S23("1484-1512", "arg_groups/overrides.py") if new else S11("2947-2960"),
        ),
        _moe_quant_rule(
            "moe.flashinfer_cutlass_quantization",
            ("flashinfer_cutlass",),
            _CUTLASS_QUANTS,
            "FlashInfer Cutlass MOE supports only: 'modelopt_fp4', 'modelopt_fp8', 'modelopt_mixed', or "
            "bfloat16 (None).",
            src("2962-2968", "80-88"),
        ),
        _moe_ep_rule("moe.flashinfer_cutlass_ep_size", "flashinfer_cutlass", src("2969-2972", "89-92")),
        _moe_quant_rule(
            "moe.flashinfer_cutedsl_quantization",
            ("flashinfer_cutedsl",),
            _CUTEDSL_QUANTS_0_5_23 if new else _CUTEDSL_QUANTS_0_5_11,
            cutedsl_text,
            src("2974-2977", "94-101"),
        ),
        _moe_ep_rule("moe.flashinfer_cutedsl_ep_size", "flashinfer_cutedsl", src("2978-2981", "102-105")),
        Rule(
            id="moe.flashinfer_cutedsl_a2a",
            flags=("moe_a2a_backend", "moe_runner_backend"),
            severity="error",
            when=lambda c: (
                c.moe_runner_backend == "flashinfer_cutedsl" and c.moe_a2a_backend not in cutedsl_a2a
            ),
            message=lambda c: (
                f"SGLang would stop with AssertionError: --moe-runner-backend flashinfer_cutedsl works with "
                f"--moe-a2a-backend {' or '.join(cutedsl_a2a)}, not {c.moe_a2a_backend}. Fix: one of those."
            ),
            source=src("2982-2988", "106-113"),
            raises="AssertionError",
            sglang_text=lambda c: (
                "flashinfer_cutedsl supports moe_a2a_backend='none', 'deepep', or 'flashinfer', "
                f"got '{c.moe_a2a_backend}'."
                if new
                else "flashinfer_cutedsl supports moe_a2a_backend='none' (standard path) or 'deepep' "
                f"(DeepEP low-latency path), got '{c.moe_a2a_backend}'."
            ),
        ),
        _moe_quant_rule(
            "moe.flashinfer_trtllm_quantization",
            ("flashinfer_trtllm", "experimental_sgl_trtllm") if new else ("flashinfer_trtllm",),
            _TRTLLM_QUANTS_0_5_23 if new else _TRTLLM_QUANTS_0_5_11,
            trtllm_text,
            src("2994-3003", "123-136"),
        ),
        _moe_quant_rule(
            "moe.flashinfer_trtllm_routed_quantization",
            ("flashinfer_trtllm_routed",),
            _ROUTED_QUANTS_0_5_23 if new else _ROUTED_QUANTS_0_5_11,
            routed_text,
            src("3009-3015", "137-148"),
        ),
        Rule(
            id="moe.cutlass_fp8_ep_size",
            flags=("ep_size", "moe_runner_backend"),
            severity="error",
            when=lambda c: (
                c.moe_runner_backend == "cutlass" and c.quantization in ("fp8", "mxfp8") and c.ep_size != 1
            ),
            message=lambda c: (
                f"SGLang would stop with AssertionError: the cutlass MoE runner with {c.quantization} "
                f"weights runs without expert parallelism (--ep-size {c.ep_size}). Fix: --ep-size 1, or "
                "another --moe-runner-backend."
            ),
            source=src("3030-3036", "155-163"),
            raises="AssertionError",
            sglang_text=lambda c: "FP8/MXFP8 Cutlass MoE is only supported with ep_size == 1",
        ),
    ]


def a2a_rules(version: str) -> list[Step]:
    """``_handle_a2a_moe`` (511 server_args.py:3054-3125; 523 arg_groups/moe_hook.py:284-540 with
    overrides.py:1611-1620): the all-to-all backends that span the TP group set ep_size = tp_size; FlashInfer
    all-to-all needs its runners (and, on 0.5.23, attention DP over the whole TP group first)."""
    new = version != "0.5.11"
    spanning = A2A_EP_SPANNING_0_5_23 if new else A2A_EP_SPANNING_0_5_11
    runners = (
        (
            "flashinfer_cutlass",
            "flashinfer_cutedsl",
            "flashinfer_trtllm",
            "flashinfer_trtllm_routed",
            "deep_gemm",
        )
        if new
        else ("flashinfer_cutlass",)
    )
    steps: list[Step] = [
        Rule(
            id="moe.a2a_sets_ep_size",
            flags=("ep_size", "moe_a2a_backend"),
            severity="notice",
            when=lambda c: c.moe_a2a_backend in spanning and c.ep_size != c.tp_size,
            message=lambda c: (
                f"SGLang would set the expert-parallel size to the tensor-parallel size ({c.tp_size}): "
                f"--moe-a2a-backend {c.moe_a2a_backend} spans the whole TP group"
                + (f" (--ep-size {c.ep_size} is overridden)." if "ep_size" in c.given else ".")
            ),
            source=S23("1611-1620", "arg_groups/overrides.py") if new else S11("3055-3111"),
            then=lambda c: c.set(ep_size=c.tp_size),
        ),
    ]
    if new:
        steps.append(
            Rule(
                id="moe.flashinfer_a2a_attn_dp",
                flags=("moe_a2a_backend", "attn_dp_size", "tp_size"),
                severity="error",
                when=lambda c: (
                    c.moe_a2a_backend == "flashinfer" and not (c.dp_attention and c.attn_dp_size == c.tp_size)
                ),
                message=lambda c: (
                    "SGLang 0.5.23 would stop with AssertionError: --moe-a2a-backend flashinfer needs "
                    f"attention DP over the whole TP group (--attn-dp-size equal to --tp, {c.tp_size}). Fix: "
                    f"--attn-dp-size {c.tp_size}, or another --moe-a2a-backend."
                ),
                source=S23("473-484", "arg_groups/moe_hook.py"),
                raises="AssertionError",
                sglang_text=lambda c: (
                    "Flashinfer MoE A2A requires --attn-dp-size equal to --tp-size, except for Muse Spark "
                    "TP4/EP4 or TP8/EP8 prefill sequence parallelism."
                ),
            )
        )
    steps.append(
        Rule(
            id="moe.flashinfer_a2a_runner",
            flags=("moe_a2a_backend", "moe_runner_backend"),
            severity="error",
            when=lambda c: c.moe_a2a_backend == "flashinfer" and c.moe_runner_backend not in runners,
            message=lambda c: (
                f"SGLang would stop with AssertionError: --moe-a2a-backend flashinfer runs with "
                f"--moe-runner-backend {' or '.join(runners)}, not {c.moe_runner_backend}. Fix: "
                f"--moe-runner-backend {runners[0]}."
            ),
            source=S23("531-541", "arg_groups/moe_hook.py") if new else S11("3106-3108"),
            raises="AssertionError",
            sglang_text=lambda c: (
                "FlashInfer MoE A2A is supported with flashinfer_cutlass, flashinfer_cutedsl, "
                "flashinfer_trtllm, flashinfer_trtllm_routed, or deep_gemm."
                if new
                else "Flashinfer MoE A2A is only supported with flashinfer_cutlass moe runner backend"
            ),
        )
    )
    steps.append(mori_chunk_rule(version))
    if new:
        steps += pplx_rules()
    return steps


def _pplx_limit(c: Ctx) -> int:
    try:
        return int(c.env.get("SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK", 128))
    except ValueError:
        return 128


def pplx_rules() -> list[Step]:
    """0.5.23's pplx all-to-all (arg_groups/moe_hook.py:575-620): low-latency mode only, attention DP of at
    least 2, the deep_gemm runner, and a per-rank dispatch budget (128 tokens by default) that the chunked
    prefill size (after the DP division) and the decode CUDA graph's largest batch must fit. The graph's
    batch size SGLang derives is not modelled: only a given one counts, so that check may miss."""

    def src(lines: str) -> str:
        return S23(lines, "arg_groups/moe_hook.py")

    def pplx(c: Ctx) -> bool:
        return bool(c.moe_a2a_backend == "pplx")

    def required(c: Ctx) -> list[int]:
        if not pplx(c) or c.disaggregation_mode == "decode":
            return []
        sizes = [size for size in c.chunked_prefill_candidates if size > 0]
        graph = c.values.get("cuda_graph_max_bs_decode")
        return [max(size, graph) if isinstance(graph, int) else size for size in sizes]

    def over(c: Ctx) -> bool:
        needed = required(c)
        return bool(needed) and all(n > _pplx_limit(c) for n in needed)

    return [
        Rule(
            id="moe.pplx_low_latency_only",
            flags=("deepep_mode", "moe_a2a_backend"),
            severity="error",
            when=lambda c: pplx(c) and c.deepep_mode == "normal",
            message=lambda c: (
                "SGLang 0.5.23 would stop with ValueError: --moe-a2a-backend pplx runs in low-latency mode "
                "only. Fix: --deepep-mode low_latency or auto."
            ),
            source=src("576-580"),
            raises="ValueError",
            sglang_text=lambda c: (
                "moe_a2a_backend='pplx' only supports low-latency mode; set --deepep-mode to 'low_latency' "
                "or 'auto'."
            ),
        ),
        Rule(
            id="moe.pplx_needs_attn_dp",
            flags=("moe_a2a_backend", "attn_dp_size"),
            severity="error",
            when=lambda c: pplx(c) and int(c.attn_dp_size) < 2,
            message=lambda c: (
                "SGLang 0.5.23 would stop with AssertionError: --moe-a2a-backend pplx needs attention DP "
                "with at least 2 groups. Fix: --attn-dp-size 2 or more (dividing --tp)."
            ),
            source=src("591-594"),
            raises="AssertionError",
            sglang_text=lambda c: (
                "moe_a2a_backend='pplx' requires attention DP with at least 2 groups (--attn-dp-size >= 2)."
            ),
        ),
        Rule(
            id="moe.pplx_runner",
            flags=("moe_runner_backend", "moe_a2a_backend"),
            severity="error",
            when=lambda c: pplx(c) and c.moe_runner_backend not in ("deep_gemm", "auto"),
            message=lambda c: (
                "SGLang 0.5.23 would stop with AssertionError: --moe-a2a-backend pplx runs on the deep_gemm "
                f"MoE runner, not {c.moe_runner_backend}. Fix: --moe-runner-backend deep_gemm (or auto)."
            ),
            source=src("599-602"),
            raises="AssertionError",
            sglang_text=lambda c: (
                "moe_a2a_backend='pplx' is only supported with --moe-runner-backend deep_gemm (or auto)."
            ),
        ),
        Rule(
            id="moe.pplx_dispatch_tokens",
            flags=("moe_a2a_backend", "chunked_prefill_size"),
            severity="error",
            when=over,
            message=lambda c: (
                f"SGLang 0.5.23 would stop with AssertionError: --moe-a2a-backend pplx dispatches at most "
                f"{_pplx_limit(c)} tokens per rank (SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK), and a "
                f"forward needs {_sizes(required(c))}{_why_chunk(c)}. Fix: a smaller --chunked-prefill-size "
                "(and --cuda-graph-max-bs-decode), or raise that variable."
            ),
            source=src("612-620"),
            raises="AssertionError",
            sglang_text=lambda c: (
                "SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 128) must be >= the per-rank pplx "
                "dispatch tokens (chunked_prefill_size, or the decode cuda-graph batch size)"
            ),
        ),
    ]


def _mori_limit(c: Ctx) -> int:
    try:
        return int(c.env.get("SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK", 4096))
    except ValueError:
        return 4096


def mori_chunk_rule(version: str) -> Rule:
    """MoRI dispatches at most SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK tokens per rank: the chunked
    prefill size (after the attention-DP division) must fit (511 server_args.py:3120-3125; 523
    arg_groups/moe_hook.py:563-573). With the GPU's memory unknown, an error only if every size fails."""
    new = version != "0.5.11"

    def sizes(c: Ctx) -> list[int]:
        if c.moe_a2a_backend != "mori" or c.disaggregation_mode == "decode":
            return []
        return [size for size in c.chunked_prefill_candidates if size > 0]

    def every(c: Ctx) -> bool:
        positive = sizes(c)
        return bool(positive) and all(size > _mori_limit(c) for size in positive)

    return Rule(
        id="moe.mori_dispatch_tokens",
        flags=("moe_a2a_backend", "chunked_prefill_size"),
        severity="error",
        when=every,
        message=lambda c: (
            f"SGLang would stop with AssertionError: --moe-a2a-backend mori dispatches at most "
            f"{_mori_limit(c)} tokens per rank (SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK), and the "
            f"chunked prefill size is {_sizes(sizes(c))}{_why_chunk(c)}. Fix: --chunked-prefill-size "
            f"{_mori_limit(c)} or less, or raise that variable."
        ),
        source=S23("563-573", "arg_groups/moe_hook.py") if new else S11("3120-3125"),
        raises="AssertionError",
        sglang_text=lambda c: (
            "SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 4096) must be >= the per-rank MoRI "
            "dispatch tokens (chunked_prefill_size by default)"
            if new
            else "SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 4096) must be larger or equal to "
            "chunked_prefill_size"
        ),
    )


def eplb_rule(version: str, source: str) -> Rule:
    """``_handle_eplb_and_dispatch``: EPLB balances experts across EP ranks, a bare assert (511
    server_args.py:3139-3140; 523 parallel_hook.py:790-791, an elastic "scale" join aside)."""
    return Rule(
        id="moe.eplb_needs_ep",
        flags=("enable_eplb", "ep_size"),
        severity="error",
        when=lambda c: bool(c.enable_eplb) and c.ep_size <= 1,
        message=lambda c: (
            f"SGLang {version} would stop with a bare AssertionError: --enable-eplb balances experts across "
            f"expert-parallel ranks, and the expert-parallel size is {c.ep_size}. Fix: --ep-size above 1 "
            "(e.g. equal to --tp), or no --enable-eplb."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: "",
    )


def moe_rules(version: str) -> list[Step]:
    """MoE configuration in SGLang's order: kernels, all-to-all, EPLB."""
    eplb_source = S11("3139-3140") if version == "0.5.11" else S23("790-791", "arg_groups/parallel_hook.py")
    unquant = Resolve(
        "moe.unquant",
        lambda c: c.set(quantization=None),
        S11("815-817") if version == "0.5.11" else S23("695-697", "arg_groups/serving_hook.py"),
        lambda c: c.quantization == "unquant",
    )
    return [unquant, *moe_kernel_rules(version), *a2a_rules(version), eplb_rule(version, eplb_source)]


# -- memory and scheduling checks of check_server_args -------------------------------------------------------


def moe_dense_tp_rule(version: str, source: str) -> Rule:
    new = version != "0.5.11"
    return Rule(
        id="moe.dense_tp_size",
        flags=("moe_dense_tp_size",),
        severity="error",
        when=lambda c: c.moe_dense_tp_size not in ((None, 1, c.tp_size) if new else (None, 1)),
        message=lambda c: (
            f"SGLang would stop with AssertionError: --moe-dense-tp-size {c.moe_dense_tp_size} is not "
            f"supported; it takes 1{' or the tensor-parallel size (' + str(c.tp_size) + ')' if new else ''}. "
            "Fix: --moe-dense-tp-size 1, or leave it unset."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: (
            "moe_dense_tp_size only supports None, 1, or tp_size currently"
            if new
            else "moe_dense_tp_size only support 1 and None currently"
        ),
    )


def priority_policy_rule(source: str) -> Rule:
    return Rule(
        id="schedule.priority_policy",
        flags=("schedule_policy", "enable_priority_scheduling"),
        severity="error",
        when=lambda c: bool(c.enable_priority_scheduling) and c.schedule_policy not in ("fcfs", "lof"),
        message=lambda c: (
            f"SGLang would stop with AssertionError: priority scheduling works with --schedule-policy fcfs "
            f"or lof, not {c.schedule_policy}. Fix: one of those, or no --enable-priority-scheduling."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: (
            "To use priority scheduling, schedule_policy must be 'fcfs' or 'lof'. "
            f"'{c.schedule_policy}' is not supported."
        ),
    )


def conservativeness_rule(source: str) -> Rule:
    return Rule(
        id="schedule.conservativeness_negative",
        flags=("schedule_conservativeness",),
        severity="error",
        when=lambda c: c.schedule_conservativeness < 0,
        message=lambda c: (
            "SGLang would stop with AssertionError: --schedule-conservativeness "
            f"{c.schedule_conservativeness} is negative. Fix: 0 or more (1.0 is the default; lower "
            "admits requests more eagerly)."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: "schedule_conservativeness must be non-negative",
    )
