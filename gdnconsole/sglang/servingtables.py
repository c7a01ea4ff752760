"""SGLang's argument rules beyond speculation and MoE (issue 26): the log level, what the checkpoint's own
config allows (its context length, its quantization, GPT-OSS's attention backends), data parallelism
without attention DP, the hierarchical cache, deterministic inference, LoRA and two-batch overlap.
``ruletables`` splices these into each version's table where SGLang's code runs them. Every entry cites the
wheel's file:line. Rules on the checkpoint apply only when its config.json is known (``Ctx.model_config``):
a fact not known gives no finding.
"""

from __future__ import annotations

from collections.abc import Callable

from gdnconsole.sglang.models import context_length_of, quant_method_of
from gdnconsole.sglang.rulekit import Ctx, Resolve, Rule, Step


def S11(lines: str, path: str = "srt/server_args.py") -> str:
    return f"{path}:{lines} (0.5.11)"


def S23(lines: str, path: str) -> str:
    return f"srt/{path}:{lines} (0.5.23)"


def _refusal(
    raises: str,
    id: str,
    flags: tuple[str, ...],
    when: Callable[[Ctx], bool],
    text: Callable[[Ctx], str],
    fix: str,
    source: str,
) -> Rule:
    """The one builder of a rule break in this table: SGLang raises ``raises`` with ``text``."""
    return Rule(
        id=id,
        flags=flags,
        severity="error",
        when=when,
        message=lambda c: f"SGLang would stop with {raises}: {text(c)} Fix: {fix}.",
        source=source,
        raises=raises,
        sglang_text=text,
    )


def _value_error(
    id: str,
    flags: tuple[str, ...],
    when: Callable[[Ctx], bool],
    text: Callable[[Ctx], str],
    fix: str,
    source: str,
) -> Rule:
    return _refusal("ValueError", id, flags, when, text, fix, source)


def _assertion(
    id: str,
    flags: tuple[str, ...],
    when: Callable[[Ctx], bool],
    text: Callable[[Ctx], str],
    fix: str,
    source: str,
) -> Rule:
    return _refusal("AssertionError", id, flags, when, text, fix, source)


# -- disaggregation ---------------------------------------------------------------------------------------


def decode_forces_chunk_cache(source: str) -> Resolve:
    """A decode server runs on the chunk cache: SGLang turns the radix cache off unless
    --disaggregation-decode-enable-radix-cache (so --enable-hierarchical-cache then meets
    ``hicache_radix_rule``)."""
    return Resolve(
        "disaggregation.decode_chunk_cache",
        lambda c: c.set(disable_radix_cache=True),
        source,
        lambda c: (
            c.disaggregation_mode == "decode" and not c.values.get("disaggregation_decode_enable_radix_cache")
        ),
    )


# -- the log level (prepare_server_args, before any other processing) --------------------------------------

BASIC_FORMAT = (
    "%(levelname)s:%(name)s:%(message)s"  # logging.BASIC_FORMAT, which --log-level basic_format names
)
LOG_LEVELS = frozenset({"CRITICAL", "FATAL", "ERROR", "WARN", "WARNING", "INFO", "DEBUG", "NOTSET"})


def _log_level(c: Ctx) -> str:
    return str(c.log_level).upper()


def log_level_rules(source: str) -> list[Step]:
    """``logging.basicConfig(level=getattr(logging, raw_args.log_level.upper()))``: a level the logging
    module does not define is an AttributeError before ServerArgs is built; ``basic_format`` names a
    string there, which basicConfig refuses with ValueError. ``--log-level-http`` is not read there."""

    def message(c: Ctx, raises: str) -> str:
        return (
            f"SGLang would stop with {raises}: --log-level {c.log_level} is not a level of Python's "
            "logging. Fix: one of debug, info, warning, error, critical."
        )

    return [
        Rule(
            id="logging.unknown_level",
            flags=("log_level",),
            severity="error",
            when=lambda c: _log_level(c) not in LOG_LEVELS and _log_level(c) != "BASIC_FORMAT",
            message=lambda c: message(c, "AttributeError"),
            source=source,
            raises="AttributeError",
            sglang_text=lambda c: f"module 'logging' has no attribute '{_log_level(c)}'",
        ),
        Rule(
            id="logging.level_is_a_format",
            flags=("log_level",),
            severity="error",
            when=lambda c: _log_level(c) == "BASIC_FORMAT",
            message=lambda c: message(c, "ValueError"),
            source=source,
            raises="ValueError",
            sglang_text=lambda c: f"Unknown level: {BASIC_FORMAT!r}",
        ),
    ]


# -- the checkpoint's config (ModelConfig, built at the first get_model_config()) --------------------------

# The --quantization values each checkpoint quant_method tolerates (511 model_config.py:1048-1055;
# 523 :2042-2055).
COMPATIBLE_0_5_11: dict[str, tuple[str, ...]] = {
    "modelopt_fp8": ("modelopt",),
    "modelopt_fp4": ("modelopt",),
    "modelopt_mixed": ("modelopt",),
    "petit_nvfp4": ("modelopt",),
    "w8a8_int8": ("compressed-tensors", "compressed_tensors"),
    "w8a8_fp8": ("compressed-tensors", "compressed_tensors"),
}
COMPATIBLE_0_5_23: dict[str, tuple[str, ...]] = {
    "modelopt_fp8": ("modelopt",),
    "modelopt_fp4": ("modelopt", "fp8"),
    "modelopt_mixed": ("modelopt",),
    "nvfp4_online": ("fp8", "modelopt_fp8"),
    "minimax_m3_nvfp4": ("mxfp8",),
    "petit_nvfp4": ("modelopt",),
    "w8a8_int8": ("compressed-tensors", "compressed_tensors"),
    "w8a8_fp8": ("compressed-tensors", "compressed_tensors"),
    "auto-round-int8": ("compressed-tensors", "compressed_tensors"),
}
REQUANTIZATION_0_5_23 = ("quark_mxfp4",)  # 523 model_config.py:545
# Checkpoint methods whose quantization SGLang reads as they are: only the checkpoint's own family can
# override it (override_quantization_method of gptq, marlin, modelopt and petit reads their own checkpoints).
PLAIN_CHECKPOINT_METHODS = frozenset(
    {"fp8", "awq", "mxfp4", "mxfp8", "bitsandbytes", "gguf", "compressed-tensors"}
)
# (checkpoint, --quantization) pairs an override may accept, depending on the checkpoint's bits and the GPU
# (511 awq/awq.py:300-321, moe_wna16.py:162-165): not modelled, so no finding. ``modelopt`` likewise
# (base_config.py:175-195).
OVERRIDE_PAIRS = frozenset({("awq", "awq_marlin"), ("awq", "marlin"), ("awq", "moe_wna16")})
# An AWQ checkpoint with no --quantization may become awq_marlin on the GPU (awq.py:300-312): not resolved.
RESOLVED_CHECKPOINT_METHODS = PLAIN_CHECKPOINT_METHODS - {"awq"}
# 0.5.23 on CUDA: argparse offers these, QUANTIZATION_METHODS lacks them (523 layers/quantization/__init__.py
# :63-159; gptq only on NPU, CPU and XPU).
SUPPORTED_0_5_23_CUDA = (
    "fp8", "mxfp8", "minimax_m3_nvfp4", "blockwise_int8", "modelopt", "modelopt_fp8", "modelopt_fp4",
    "nvfp4_online", "modelopt_mixed", "w8a8_int8", "w8a8_fp8", "awq", "awq_marlin", "bitsandbytes", "gguf",
    "gptq_marlin", "moe_wna16", "compressed-tensors", "w4afp8", "petit_nvfp4", "quark", "quark_mxfp4",
    "auto-round", "auto-round-int8", "modelslim", "quark_int4fp8_moe", "humming", "mxfp_w4a8", "mxfp4",
)  # fmt: skip


def _context(c: Ctx) -> int | None:
    value = c.context_length
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _derived_context(c: Ctx) -> int | None:
    return context_length_of(c.model_config) if c.model_config is not None else None


def _longer_context_allowed(c: Ctx) -> bool:
    return c.env.get("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "").lower() in ("1", "true", "yes", "on")


def _context_text(c: Ctx) -> str:
    return (
        f"Warning: User-specified context_length ({_context(c)}) is greater than the derived "
        f"context_length ({_derived_context(c)}). This may lead to incorrect model outputs or CUDA errors. "
        "Note that the derived context_length may differ from max_position_embeddings in the model's "
        "config. To allow overriding this maximum, set the env var "
        "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
    )


def context_length_rule(source: str) -> Rule:
    def when(c: Ctx) -> bool:
        derived, given = _derived_context(c), _context(c)
        return (
            derived is not None and given is not None and given > derived and not _longer_context_allowed(c)
        )

    return Rule(
        id="model.context_length_above_model",
        flags=("context_length",),
        severity="error",
        when=when,
        message=lambda c: (
            f"SGLang would stop with ValueError: --context-length {c.context_length} is above what "
            f"{c.arch} allows ({_derived_context(c)}, from its config.json). Fix: --context-length "
            f"{_derived_context(c)} or less, or set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 if you know "
            "the model takes more."
        ),
        source=source,
        raises="ValueError",
        sglang_text=_context_text,
    )


def _checkpoint_method(c: Ctx) -> str | None:
    return quant_method_of(c.model_config) if c.model_config is not None else None


def _user_method(c: Ctx) -> str | None:
    q = c.quantization
    return None if q is None or q == "unquant" else str(q).lower()


def quantization_rules(version: str, source: str) -> list[Step]:
    """``_verify_quantization``: a --quantization that differs from the checkpoint's own method stops SGLang
    unless the two are compatible (or, on 0.5.23, an online requantization); none given takes the
    checkpoint's. 0.5.11 turns ``unquant`` into None first and then keeps it so."""
    compatible = COMPATIBLE_0_5_23 if version == "0.5.23" else COMPATIBLE_0_5_11
    requant = REQUANTIZATION_0_5_23 if version == "0.5.23" else ()

    def mismatch(c: Ctx) -> bool:
        theirs, ours = _checkpoint_method(c), _user_method(c)
        return (
            theirs in PLAIN_CHECKPOINT_METHODS
            and ours is not None
            and (theirs, ours) not in OVERRIDE_PAIRS
            and ours != "modelopt"
            and ours != theirs
            and theirs not in compatible.get(ours, ())
            and ours not in requant
        )

    def text(c: Ctx) -> str:
        return (
            f"Quantization method specified in the model config ({_checkpoint_method(c)}) does not match the "
            f"quantization method specified in the `quantization` argument ({_user_method(c)})."
        )

    return [
        Rule(
            id="model.quantization_mismatch",
            flags=("quantization",),
            severity="error",
            when=mismatch,
            message=lambda c: (
                f"SGLang would stop with ValueError: the checkpoint is {_checkpoint_method(c)}-quantized "
                f"(its config.json's quantization_config), and --quantization {c.quantization} is another "
                "method. Fix: drop --quantization (SGLang reads the checkpoint's own), or serve a checkpoint "
                "quantized that way."
            ),
            source=source,
            raises="ValueError",
            sglang_text=text,
        ),
        Resolve(
            "model.quantization_from_checkpoint",
            lambda c: c.set(quantization=_checkpoint_method(c)),
            source,
            lambda c: c.quantization is None and _checkpoint_method(c) in RESOLVED_CHECKPOINT_METHODS,
        ),
    ]


def unknown_quantization_0_5_23(source: str) -> Rule:
    """Methods argparse offers that 0.5.23's registry lacks on CUDA: ModelConfig refuses them."""
    return Rule(
        id="model.unknown_quantization",
        flags=("quantization",),
        severity="error",
        when=lambda c: _user_method(c) is not None and _user_method(c) not in SUPPORTED_0_5_23_CUDA,
        message=lambda c: (
            f"SGLang 0.5.23 would stop with ValueError: --quantization {c.quantization} is not available "
            "on NVIDIA GPUs in this version, though its --help lists it. Fix: a method it supports there "
            "(gptq checkpoints: gptq_marlin)."
        ),
        source=source,
        raises="ValueError",
        sglang_text=lambda c: (
            f"Unknown quantization method: {_user_method(c)}. Must be one of {list(SUPPORTED_0_5_23_CUDA)}."
        ),
    )


_BACKEND_FIELDS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")
GPT_OSS_BACKENDS_0_5_11 = ("triton", "trtllm_mha", "fa3", "fa4", "ascend", "intel_xpu", "aiter")
GPT_OSS_BACKENDS_0_5_23 = ("triton", "trtllm_mha", "fa3", "fa4", "ascend", "intel_amx", "intel_xpu", "aiter")


def _gpt_oss_default(c: Ctx) -> str:
    return {10: "trtllm_mha", 9: "fa3"}.get(c.major or 0, "triton")


def gpt_oss_default_backend(source: str) -> Resolve:
    """With no attention backend given, GPT-OSS takes trtllm_mha on SM100, fa3 on SM90, else triton (on
    NVIDIA GPUs); later rules (deterministic inference's backends) read it. GPU not known: not resolved."""
    return Resolve(
        "model.gpt_oss_default_backend",
        lambda c: c.set(attention_backend=_gpt_oss_default(c)),
        source,
        lambda c: (
            c.architecture == "GptOssForCausalLM"
            and c.major is not None
            and c.attention_backend is None
            and c.prefill_attention_backend is None
            and c.decode_attention_backend is None
        ),
    )


def gpt_oss_backends(backends: tuple[str, ...], source: str) -> Rule:
    """GPT-OSS (attention sinks) runs on a few attention backends only: prefill and decode (each falling
    back to --attention-backend) must both be one. With none given SGLang picks one for the GPU
    (``gpt_oss_default_backend``); GPU not known, no finding."""

    def when(c: Ctx) -> bool:
        prefill, decode = c.backends
        return (
            c.architecture == "GptOssForCausalLM"
            and any(c.values[f] is not None for f in _BACKEND_FIELDS)
            and not (prefill in backends and decode in backends)
        )

    return Rule(
        id="model.gpt_oss_attention_backend",
        flags=("attention_backend", "prefill_attention_backend", "decode_attention_backend"),
        severity="error",
        when=when,
        message=lambda c: (
            "SGLang would stop with AssertionError: GptOssForCausalLM runs only on the "
            f"{', '.join(backends)} attention backends (prefill {c.backends[0]}, decode {c.backends[1]}). "
            "Fix: one of those, or no --attention-backend (SGLang then picks one for the model)."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: (
            f"GptOssForCausalLM requires one of {list(backends)} attention backend, but got the following "
            f"backends\n- Prefill: {c.backends[0]}\n- Decode: {c.backends[1]}\n"
        ),
    )


def model_config_rules(version: str) -> list[Step]:
    """ModelConfig's checks in its __init__ order: the context length (``_derive_context_length``), then
    the quantization (``_verify_quantization``)."""
    if version == "0.5.11":
        path = "srt/configs/model_config.py"
        return [
            context_length_rule(S11("452-480", path)),
            *quantization_rules("0.5.11", S11("1006-1119", path)),
        ]
    path = "configs/model_config.py"
    return [
        context_length_rule(S23("1295-1316", path)),
        *quantization_rules("0.5.23", S23("2000-2148", path)),
        unknown_quantization_0_5_23(S23("2150-2155", path)),
    ]


# -- data parallelism -------------------------------------------------------------------------------------


def dp_lm_head_0_5_11() -> Rule:
    """``_handle_data_parallelism``: the DP LM head needs attention DP (511 :2941-2944; with --dp 1 both are
    reset first, :2929-2931)."""
    return _assertion(
        "parallel.dp_lm_head_without_dp_attention",
        ("enable_dp_lm_head", "enable_dp_attention"),
        lambda c: bool(c.enable_dp_lm_head) and not c.enable_dp_attention,
        lambda c: "Please enable dp attention when setting enable_dp_lm_head. ",
        "add --enable-dp-attention (with --dp above 1), or drop --enable-dp-lm-head",
        S11("2941-2944"),
    )


def dp_with_attn_dp_0_5_23() -> list[Step]:
    """``handle_data_parallelism`` (523 arg_groups/parallel_hook.py:283-292): attention DP and DP replicas
    do not combine; runs before the tensor-parallel divisibility assert."""
    src = S23("283-292", "arg_groups/parallel_hook.py")
    return [
        _value_error(
            "parallel.attn_dp_size_not_positive",
            ("attn_dp_size",),
            lambda c: c.attn_dp_size < 1,
            lambda c: f"--attn-dp-size must be positive (got {c.attn_dp_size}).",
            "--attn-dp-size 1 or more",
            src,
        ),
        _value_error(
            "parallel.dp_with_attn_dp",
            ("dp_size", "attn_dp_size"),
            lambda c: c.attn_dp_size > 1 and c.dp_size > 1,
            lambda c: (
                f"--dp-size {c.dp_size} with --attn-dp-size {c.attn_dp_size}: data-parallel replicas "
                "combined with attention data parallelism are not supported."
            ),
            "either --dp-size (replicas) or --attn-dp-size (attention DP), not both",
            src,
        ),
    ]


def dp_lm_head_0_5_23() -> list[Step]:
    """Post-processing (523 arg_groups/overrides.py): one DP rank resets the DP LM head (:1367-1370);
    otherwise it needs attention DP (:1421-1426)."""
    return [
        Resolve(
            "parallel.dp_lm_head_one_rank",
            lambda c: c.set(enable_dp_lm_head=False),
            S23("1367-1370", "arg_groups/overrides.py"),
            lambda c: c.dp_size * c.attn_dp_size == 1,
        ),
        _assertion(
            "parallel.dp_lm_head_without_dp_attention",
            ("enable_dp_lm_head", "attn_dp_size"),
            lambda c: bool(c.enable_dp_lm_head) and c.attn_dp_size <= 1,
            lambda c: "--enable-dp-lm-head requires attention DP (--attn-dp-size).",
            "add --attn-dp-size N (N dividing --tp), or drop --enable-dp-lm-head",
            S23("1421-1426", "arg_groups/overrides.py"),
        ),
    ]


# -- caches and deterministic inference ------------------------------------------------------------------


def hicache_radix_rule(source: str) -> Rule:
    return _value_error(
        "cache.hicache_without_radix",
        ("enable_hierarchical_cache", "disable_radix_cache"),
        lambda c: bool(c.enable_hierarchical_cache) and bool(c.disable_radix_cache),
        lambda c: (
            "The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and "
            "cannot be used at the same time. Please use only one of them."
        ),
        "drop one of --enable-hierarchical-cache and --disable-radix-cache",
        source,
    )


DETERMINISTIC_BACKENDS_0_5_11 = ("flashinfer", "fa3", "triton")  # 511 server_args.py:164
DETERMINISTIC_BACKENDS_0_5_23 = (
    "ascend",
    "fa3",
    "fa4",
    "flashinfer",
    "intel_xpu",
    "triton",
)  # choices.py:113
# The backends whose radix cache is deterministic (511 server_args.py:166; 523 arg_groups/choices.py:249).
RADIX_DETERMINISTIC_0_5_11 = ("fa3", "triton")
RADIX_DETERMINISTIC_0_5_23 = ("ascend", "fa3", "fa4", "triton")
# Absorbed-MLA models, checked apart (511 server_args.py:3990-4002; 523 arg_groups/attention_hook.py:621-635).
DETERMINISTIC_MLA_0_5_11 = frozenset(
    {
        "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
        "GlmMoeDsaForCausalLM",
    }
)
DETERMINISTIC_MLA_0_5_23 = DETERMINISTIC_MLA_0_5_11 | {
    "Glm4MoeLiteForCausalLM",
    "Glm5NextForConditionalGeneration",
}


def deterministic_backend_rule(backends: tuple[str, ...], source: str) -> Rule:
    """Deterministic inference runs on a few attention backends; an explicit other one stops SGLang (with
    none given, SGLang picks one of them)."""
    return _value_error(
        "deterministic.attention_backend",
        ("enable_deterministic_inference", "attention_backend"),
        lambda c: (
            bool(c.enable_deterministic_inference)
            and c.attention_backend is not None
            and c.attention_backend not in backends
        ),
        lambda c: (
            f"Currently only {list(backends)} attention backends are supported for deterministic inference, "
            f"but you explicitly specified '{c.attention_backend}'."
        ),
        f"--attention-backend {backends[1] if 'fa3' in backends else backends[0]} (or another of "
        f"{', '.join(backends)}), or no --attention-backend",
        source,
    )


def deterministic_rules(version: str, source: str) -> list[Step]:
    """``_handle_deterministic_inference`` (511 server_args.py:3978-4046; 523 arg_groups/attention_hook.py
    :580-670 with overrides.py:1093-1121): the explicit backend, then the backend SGLang picks when none is
    given (Blackwell: triton for absorbed-MLA models, flashinfer for others; older GPUs: fa3), then
    absorbed-MLA models' narrower list (0.5.23: fa4 only on SM100/SM110), then the radix cache off on a
    backend whose radix cache is not deterministic."""
    new = version == "0.5.23"
    backends = DETERMINISTIC_BACKENDS_0_5_23 if new else DETERMINISTIC_BACKENDS_0_5_11
    radix = RADIX_DETERMINISTIC_0_5_23 if new else RADIX_DETERMINISTIC_0_5_11
    mla = DETERMINISTIC_MLA_0_5_23 if new else DETERMINISTIC_MLA_0_5_11

    def on(c: Ctx) -> bool:
        return bool(c.enable_deterministic_inference)

    def is_mla(c: Ctx) -> bool:
        return c.architecture in mla

    def fallback(c: Ctx) -> str:
        if c.major in (10, 12):
            return "triton" if is_mla(c) else "flashinfer"
        return "fa3"

    def mla_text(c: Ctx) -> str:
        which = "absorbed-MLA models" if new else "DeepSeek models"
        return (
            f"Currently only {list(radix)} attention backends are supported for deterministic inference with "
            f"{which}. But you're using {c.attention_backend}."
        )

    steps: list[Step] = [
        deterministic_backend_rule(backends, source),
        Resolve(
            "deterministic.default_backend",
            lambda c: c.set(attention_backend=fallback(c)),
            source,
            lambda c: on(c) and c.attention_backend is None and c.major is not None,
        ),
        _value_error(
            "deterministic.mla_backend",
            ("enable_deterministic_inference", "attention_backend"),
            lambda c: (
                on(c) and is_mla(c) and c.attention_backend is not None and c.attention_backend not in radix
            ),
            mla_text,
            f"--attention-backend {radix[-1]} (or another of {', '.join(radix)})",
            source,
        ),
    ]
    if new:
        steps.append(
            _value_error(
                "deterministic.mla_fa4_needs_sm100",
                ("attention_backend", "enable_deterministic_inference"),
                lambda c: (
                    on(c)
                    and is_mla(c)
                    and c.attention_backend == "fa4"
                    and c.major is not None
                    and c.major not in (10, 11)
                ),
                lambda c: (
                    "Deterministic inference with absorbed-MLA models on the fa4 attention backend requires "
                    "SM100/SM110: it runs absorbed MLA, whose qv argument flash_attn.cute only implements on "
                    "those archs."
                ),
                "--attention-backend triton (or fa3 on Hopper)",
                source,
            )
        )
    steps.append(
        Resolve(
            "deterministic.radix_cache_off",
            lambda c: c.set(disable_radix_cache=True),
            source,
            lambda c: on(c) and c.attention_backend is not None and c.attention_backend not in radix,
        )
    )
    return steps


# -- check_server_args: LoRA and two-batch overlap ------------------------------------------------------


def _lora_on(c: Ctx) -> bool:
    """--lora-paths turns LoRA on unless --enable-lora was explicitly false."""
    return bool(c.enable_lora) or (bool(c.lora_paths) and c.enable_lora is None)


def _lora_paths(c: Ctx) -> list[object]:
    paths = c.lora_paths
    return list(paths) if isinstance(paths, list | tuple) else []


def lora_rules(lines: dict[str, str], cite: Callable[[str], str]) -> list[Step]:
    """``check_lora_server_args`` (511 server_args.py:6972-7075; 523 arg_groups/lora_hook.py:33-175), in
    its order."""

    def overlap_limit(c: Ctx) -> int:
        return int(c.max_loras_per_batch) * 2

    return [
        _assertion(
            "lora.max_loras_per_batch_positive",
            ("max_loras_per_batch",),
            lambda c: c.max_loras_per_batch <= 0,
            lambda c: "max_loras_per_batch must be positive",
            "--max-loras-per-batch 1 or more (8 is the default)",
            cite(lines["positive"]),
        ),
        _assertion(
            "lora.overlap_loading_limit",
            ("enable_lora_overlap_loading", "max_loaded_loras"),
            lambda c: (
                _lora_on(c)
                and bool(c.enable_lora_overlap_loading)
                and (c.max_loaded_loras is None or c.max_loaded_loras > overlap_limit(c))
            ),
            lambda c: (
                "Enabling LoRA overlap loading requires pinning LoRA adapter weights in CPU memory, so "
                "--max-loaded-loras must be less than or equal to double --max-loras-per-batch: "
                f"{overlap_limit(c)}"
            ),
            "set --max-loaded-loras to at most twice --max-loras-per-batch, or drop "
            "--enable-lora-overlap-loading",
            cite(lines["overlap"]),
        ),
        _assertion(
            "lora.all_with_other_modules",
            ("lora_target_modules",),
            lambda c: (
                _lora_on(c)
                and isinstance(c.lora_target_modules, list | tuple)
                and "all" in c.lora_target_modules
                and len(set(c.lora_target_modules)) != 1
            ),
            lambda c: (
                "If 'all' is specified in --lora-target-modules, it should be the only module specified."
            ),
            "--lora-target-modules all alone, or a list of modules without all",
            cite(lines["all"]),
        ),
        _assertion(
            "lora.needs_paths_or_shape",
            ("enable_lora", "max_lora_rank", "lora_target_modules"),
            lambda c: _lora_on(c) and not _lora_paths(c) and not (c.max_lora_rank and c.lora_target_modules),
            lambda c: (
                "When no initial --lora-paths is provided, you need to specify both --max-lora-rank and "
                "--lora-target-modules for LoRA initialization."
            ),
            "give --lora-paths, or both --max-lora-rank and --lora-target-modules",
            cite(lines["shape"]),
        ),
        _assertion(
            "lora.max_loaded_below_per_batch",
            ("max_loaded_loras", "max_loras_per_batch"),
            lambda c: (
                _lora_on(c) and c.max_loaded_loras is not None and c.max_loaded_loras < c.max_loras_per_batch
            ),
            lambda c: (
                "max_loaded_loras should be greater than or equal to max_loras_per_batch. "
                f"max_loaded_loras={c.max_loaded_loras}, max_loras_per_batch={c.max_loras_per_batch}"
            ),
            "--max-loaded-loras at least --max-loras-per-batch (8 by default)",
            cite(lines["loaded"]),
        ),
        _assertion(
            "lora.more_paths_than_loaded",
            ("lora_paths", "max_loaded_loras"),
            lambda c: (
                _lora_on(c) and c.max_loaded_loras is not None and len(_lora_paths(c)) > c.max_loaded_loras
            ),
            lambda c: (
                "The number of LoRA paths should not exceed max_loaded_loras. "
                f"max_loaded_loras={c.max_loaded_loras}, lora_paths={len(_lora_paths(c))}"
            ),
            "raise --max-loaded-loras to the number of --lora-paths, or load fewer adapters",
            cite(lines["paths"]),
        ),
    ]


def lora_rules_0_5_11() -> list[Step]:
    lines = {
        "positive": "6973",
        "overlap": "6991-7000",
        "all": "7052-7057",
        "shape": "7059-7062",
        "loaded": "7065-7069",
        "paths": "7070-7073",
    }
    return lora_rules(lines, S11)


def lora_rules_0_5_23() -> list[Step]:
    lines = {
        "positive": "36",
        "overlap": "61-69",
        "all": "146-149",
        "shape": "151-154",
        "loaded": "156-161",
        "paths": "162-165",
    }
    return lora_rules(lines, lambda at: S23(at, "arg_groups/lora_hook.py"))


def two_batch_overlap_0_5_11() -> Rule:
    return _value_error(
        "parallel.two_batch_overlap_needs_a2a",
        ("enable_two_batch_overlap", "moe_a2a_backend"),
        lambda c: bool(c.enable_two_batch_overlap) and c.moe_a2a_backend == "none",
        lambda c: "When enabling two batch overlap, moe_a2a_backend cannot be 'none'.",
        "add --moe-a2a-backend deepep (or another all-to-all backend), or drop --enable-two-batch-overlap",
        S11("6936-6940"),
    )


def two_batch_overlap_0_5_23() -> Rule:
    return _value_error(
        "parallel.two_batch_overlap_needs_a2a",
        ("enable_two_batch_overlap", "moe_a2a_backend", "attn_dp_size"),
        lambda c: bool(c.enable_two_batch_overlap) and c.moe_a2a_backend == "none" and c.attn_dp_size <= 1,
        lambda c: (
            "When enabling two batch overlap without an EP a2a backend (moe_a2a_backend='none'), "
            "attention DP (--attn-dp-size) is required (DeepSeek-V4 non-EP DP TBO path)."
        ),
        "add --moe-a2a-backend deepep or --attn-dp-size N, or drop --enable-two-batch-overlap",
        S23("756-772", "arg_groups/validation_hook.py"),
    )
