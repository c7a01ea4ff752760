"""SGLang's argument rules as data: one ordered table per version dialect (FACTS §0, §3, §4).

Each table lists what SGLang checks and changes, in the order its argument processing does it: 0.5.11's
``ServerArgs.__post_init__`` (model-specific mamba handling, then attention backends, then speculative
decoding) and 0.5.23's ``resolve_once()`` pipeline (model hook, attention hook, speculative hook). Versions
before 0.5.22 use the 0.5.11 table, later ones the 0.5.23 table (validation moved in 0.5.22).
Every entry cites the wheel's file:line.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from gdnconsole.sglang import coretables as core
from gdnconsole.sglang import flags as flagmod
from gdnconsole.sglang import servingtables as serving
from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.models import MAMBA_RADIX_ARCHS
from gdnconsole.sglang.rulekit import Ctx, Resolve, Rule, Step, mamba_option

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE")  # NEXTN is renamed EAGLE first
BUILTIN_ALGORITHMS_0_5_23 = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO")
FLA_CHUNK_SIZE = 64  # srt/layers/attention/fla/chunk_delta_h.py CHUNK_SIZE
TYPE_ERROR_TEXT = "'>' not supported between instances of 'NoneType' and 'int'"
MAX_RUNNING_TEXT = (
    "Max running requests is reset to 48 for speculative decoding. You can override this by "
    "explicitly setting --max-running-requests."
)


def S11(lines: str, path: str = "srt/server_args.py") -> str:
    return f"{path}:{lines} (0.5.11)"


def S23(lines: str, path: str) -> str:
    return f"srt/{path}:{lines} (0.5.23)"


# -- shared conditions and changes ---------------------------------------------------------------------


def _eagle(c: Ctx) -> bool:
    return c.speculative_algorithm in EAGLE_FAMILY


def _is(name: str) -> Callable[[Ctx], bool]:
    return lambda c: c.speculative_algorithm == name


def _topk_gt1(c: Ctx) -> bool:
    return c.speculative_eagle_topk is not None and c.speculative_eagle_topk > 1


def _page_gt1(c: Ctx) -> bool:
    return c.page_size is not None and c.page_size > 1


def _extra_buffer(c: Ctx) -> bool:
    return str(c.mamba_strategy).startswith("extra_buffer")


def _mamba_radix(c: Ctx) -> bool:
    """A hybrid GDN model with the radix cache on: the mamba rules apply."""
    return c.hybrid and not c.disable_radix_cache


def _trtllm_anywhere(c: Ctx) -> bool:
    return "trtllm_mha" in (c.attention_backend, c.prefill_attention_backend, c.decode_attention_backend)


def _auto_params(c: Ctx) -> tuple[int, int, int]:
    """(steps, topk, draft tokens) SGLang picks when none is given (511 :7471-7506; 523 :1430-1461)."""
    if c.speculative_algorithm == "STANDALONE":
        return 3, 1, 4
    if c.architecture in ("LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM"):
        return 5, 4, 8
    return 3, 1, 4


def _set_auto_params(c: Ctx) -> None:
    steps, topk, draft = _auto_params(c)
    c.set(speculative_num_steps=steps, speculative_eagle_topk=topk, speculative_num_draft_tokens=draft)


def _topk_one(c: Ctx) -> bool:
    """511 ``is_no_spec_infer_or_topk_one`` (srt/utils/common.py:2837)."""
    return c.speculative_eagle_topk is None or (c.speculative_eagle_topk == 1 and c.page_size in (1, None))


def _dflash_523(c: Ctx) -> bool:
    """0.5.23 counts DFLASH as topk 1 when it picks the backend (model_override_base.py:268-274)."""
    return flagmod.dialect(c.sglang) == "0.5.23" and str(c.speculative_algorithm).upper() == "DFLASH"


def _default_backend(c: Ctx) -> str:
    """511 ``_get_default_attn_backend`` on CUDA (server_args.py:2464-2531; 523 model_override_base.py:
    277-350): MLA models get fa3 on Hopper, flashinfer on Blackwell, else triton."""
    if c.architecture in core.MLA_ARCHS:
        return {9: "fa3", 10: "flashinfer"}.get(c.major or 0, "triton")
    if c.major == 9 and _topk_one(c):
        return "fa3"
    if (
        c.major == 10
        and _topk_one(c)
        and (not c.spec or c.speculative_eagle_topk is not None or _dflash_523(c))
    ):
        return "trtllm_mha"
    return "flashinfer"


def _hybrid_sm100_backend(c: Ctx) -> str:
    """Hybrid GDN on Blackwell: triton unless trtllm_mha can be used (511 :2213-2225; 523 qwen3_5.py)."""
    plain_radix = not _extra_buffer(c) and not c.disable_radix_cache and not c.spec
    return "trtllm_mha" if _default_backend(c) == "trtllm_mha" and not plain_radix else "triton"


def _spec_v2_env_off(c: Ctx) -> bool:
    return c.env.get("SGLANG_ENABLE_SPEC_V2", "true").lower() in ("false", "0", "no", "n")


def _prefill_trtllm(c: Ctx) -> bool:
    return c.backends[0] == "trtllm_mha" and c.major is not None


def _decode_trtllm(c: Ctx) -> bool:
    return c.backends[1] == "trtllm_mha" and c.major is not None


def _given(c: Ctx, dest: str) -> str:
    return f" (you gave {c.values[dest]})" if dest in c.given else ""


# -- rules both dialects share (same condition, same words; sources differ) ------------------------------


def nextn_is_eagle(source: str) -> Rule:
    return Rule(
        id="spec.nextn_is_eagle",
        flags=("speculative_algorithm",),
        severity="notice",
        when=lambda c: c.speculative_algorithm == "NEXTN",
        message=lambda c: "SGLang runs NEXTN as EAGLE: the model's own MTP layers are the draft model.",
        source=source,
        then=lambda c: c.set(speculative_algorithm="EAGLE"),
    )


def max_running_48(source: str, algorithms: tuple[str, ...], suffix: str) -> Rule:
    return Rule(
        id=f"spec.max_running_requests_48{suffix}",
        flags=("max_running_requests",),
        severity="notice",
        when=lambda c: c.speculative_algorithm in algorithms and c.max_running_requests is None,
        message=lambda c: (
            "SGLang would reset max running requests to 48 for speculative decoding "
            "(set --max-running-requests to choose another limit)."
        ),
        source=source,
        then=lambda c: c.set(max_running_requests=48),
    )


def topk_without_steps(version: str, source: str, where: str) -> Rule:
    return Rule(
        id="spec.topk_without_steps",
        flags=("speculative_eagle_topk", "speculative_num_draft_tokens"),
        severity="error",
        when=lambda c: (
            _eagle(c)
            and not (version == "0.5.23" and c.speculative_adaptive)
            and c.speculative_num_steps is None
            and (c.speculative_eagle_topk is not None or c.speculative_num_draft_tokens is not None)
        ),
        message=lambda c: (
            f"SGLang {version} would stop with a bare AssertionError in {where}: "
            "--speculative-eagle-topk or --speculative-num-draft-tokens is set without "
            "--speculative-num-steps. Fix: set --speculative-num-steps (e.g. 1) or remove "
            "--speculative-eagle-topk and --speculative-num-draft-tokens (SGLang then picks all three)."
        ),
        source=source,
        raises="AssertionError",
        sglang_text=lambda c: "",
    )


def _none_of_three(c: Ctx) -> bool:
    return (
        c.speculative_num_steps is None
        and c.speculative_eagle_topk is None
        and c.speculative_num_draft_tokens is None
    )


def auto_params(source: str) -> list[Step]:
    """SGLang picks all three only when none is given: with topk or draft tokens but no steps it stops at
    the assert before (``topk_without_steps``) and chooses nothing (issue 26). The checker then goes on as
    if the operator took that rule's fix (removing topk and draft tokens), with no notice saying SGLang
    would choose them."""
    return [auto_params_notice(source), auto_params_after_assert(source)]


def auto_params_after_assert(source: str) -> Resolve:
    return Resolve(
        "spec.auto_params_after_assert",
        _set_auto_params,
        source,
        lambda c: _eagle(c) and c.speculative_num_steps is None and not _none_of_three(c),
    )


def auto_params_notice(source: str) -> Rule:
    return Rule(
        id="spec.auto_params",
        flags=("speculative_num_steps",),
        severity="notice",
        when=lambda c: _eagle(c) and _none_of_three(c),
        message=lambda c: (
            "SGLang would choose --speculative-num-steps {} --speculative-eagle-topk {} "
            "--speculative-num-draft-tokens {} itself.".format(*_auto_params(c))
        ),
        source=source,
        then=_set_auto_params,
    )


def steps_without_topk(version: str, source: str) -> Rule:
    return Rule(
        id="spec.steps_without_topk",
        flags=("speculative_num_steps",),
        severity="error",
        when=lambda c: _eagle(c) and c.speculative_num_steps is not None and c.speculative_eagle_topk is None,
        message=lambda c: (
            f"SGLang {version} would crash with TypeError ({TYPE_ERROR_TEXT}): --speculative-num-steps "
            "is set without --speculative-eagle-topk, so SGLang skips its automatic choice and leaves topk "
            "unset. Fix: add --speculative-eagle-topk 1 (draft tokens then become num steps + 1), or "
            "remove --speculative-num-steps."
        ),
        source=source,
        raises="TypeError",
        sglang_text=lambda c: TYPE_ERROR_TEXT,
    )


def trtllm_mha_topk(source: str) -> Rule:
    return Rule(
        id="spec.trtllm_mha_topk",
        flags=("speculative_eagle_topk",),
        severity="error",
        when=lambda c: _eagle(c) and _trtllm_anywhere(c) and _topk_gt1(c),
        message=lambda c: (
            f"SGLang would stop with ValueError: the trtllm_mha attention backend only supports "
            f"--speculative-eagle-topk 1 (topk is {c.speculative_eagle_topk}). Fix: set "
            "--speculative-eagle-topk 1, or choose another --attention-backend."
        ),
        source=source,
        raises="ValueError",
        sglang_text=lambda c: "trtllm_mha backend only supports topk = 1 for speculative decoding.",
    )


def draft_tokens_adjusted(source: str) -> Rule:
    return Rule(
        id="spec.draft_tokens_adjusted",
        flags=("speculative_num_draft_tokens",),
        severity="notice",
        when=lambda c: (
            _eagle(c)
            and c.speculative_eagle_topk == 1
            and c.speculative_num_draft_tokens != c.speculative_num_steps + 1
        ),
        message=lambda c: (
            f"SGLang would set --speculative-num-draft-tokens to {c.speculative_num_steps + 1} "
            f"(num steps + 1){_given(c, 'speculative_num_draft_tokens')}, because "
            "--speculative-eagle-topk is 1."
        ),
        source=source,
        then=lambda c: c.set(speculative_num_draft_tokens=c.speculative_num_steps + 1),
    )


def ngram_rules(version: str, source: str, lines: dict[str, str]) -> list[Step]:
    """NGRAM: topk is the BFS breadth; draft tokens default to 12 (511 :3557-3617; 523 :1285-1371)."""
    ngram = _is("NGRAM")

    def corpus(c: Ctx) -> bool:
        return ngram(c) and c.speculative_ngram_external_corpus_path is not None

    return [
        max_running_48(source.format(lines["mrr"]), ("NGRAM",), ""),
        Resolve(
            "spec.ngram_topk_is_breadth",
            lambda c: c.set(speculative_eagle_topk=c.speculative_ngram_max_bfs_breadth),
            source.format(lines["topk"]),
            ngram,
        ),
        Rule(
            id="spec.ngram_draft_tokens_12",
            flags=("speculative_num_draft_tokens",),
            severity="notice",
            when=lambda c: ngram(c) and c.speculative_num_draft_tokens is None,
            message=lambda c: (
                "SGLang would use 12 draft tokens for NGRAM (set --speculative-num-draft-tokens)."
            ),
            source=source.format(lines["draft"]),
            then=lambda c: c.set(speculative_num_draft_tokens=12),
        ),
        _value_error(
            "spec.ngram_sam_budget_positive",
            "speculative_ngram_external_sam_budget",
            lambda c: corpus(c) and c.speculative_ngram_external_sam_budget <= 0,
            "--speculative-ngram-external-sam-budget must be positive when "
            "--speculative-ngram-external-corpus-path is set.",
            "set --speculative-ngram-external-sam-budget to a positive number, or remove the corpus path",
            source.format(lines["corpus"]),
        ),
        _value_error(
            "spec.ngram_corpus_max_tokens_positive",
            "speculative_ngram_external_corpus_max_tokens",
            lambda c: corpus(c) and c.speculative_ngram_external_corpus_max_tokens <= 0,
            "--speculative-ngram-external-corpus-max-tokens must be positive when "
            "--speculative-ngram-external-corpus-path is set.",
            "set --speculative-ngram-external-corpus-max-tokens to a positive number",
            source.format(lines["corpus"]),
        ),
        Rule(
            id="spec.ngram_sam_budget_too_large",
            flags=("speculative_ngram_external_sam_budget",),
            severity="error",
            when=lambda c: (
                corpus(c) and c.speculative_ngram_external_sam_budget > c.speculative_num_draft_tokens - 1
            ),
            message=lambda c: (
                "SGLang would stop with ValueError: the external SAM budget "
                f"({c.speculative_ngram_external_sam_budget}) must be at most draft tokens - 1 "
                f"({c.speculative_num_draft_tokens - 1}). Fix: lower --speculative-ngram-external-sam-budget "
                "or raise --speculative-num-draft-tokens."
            ),
            source=source.format(lines["corpus"]),
            raises="ValueError",
            sglang_text=lambda c: (
                "speculative_ngram_external_sam_budget must be less than or equal to "
                f"speculative_num_draft_tokens - 1 ({c.speculative_num_draft_tokens - 1})."
            ),
        ),
        Rule(
            id="spec.ngram_topk_page_size",
            flags=("page_size", "speculative_ngram_max_bfs_breadth"),
            severity="error",
            when=lambda c: ngram(c) and _topk_gt1(c) and _page_gt1(c) and c.attention_backend != "flashinfer",
            message=lambda c: (
                f"SGLang {version} would stop with ValueError: NGRAM drafts a tree "
                f"(--speculative-ngram-max-bfs-breadth {c.speculative_eagle_topk}), which with "
                f"--page-size {c.page_size} only the flashinfer backend supports (attention backend is "
                f"{c.attention_backend}). Fix: --page-size 1, --attention-backend flashinfer, or "
                "--speculative-ngram-max-bfs-breadth 1."
            ),
            source=source.format(lines["page"]),
            raises="ValueError",
            sglang_text=lambda c: (
                f"speculative_eagle_topk({c.speculative_eagle_topk}) > 1 with page_size({c.page_size}) > 1 "
                "is unstable and produces incorrect results for paged attention backends. This combination "
                "is only supported for the 'flashinfer' backend."
            ),
        ),
        _value_error(
            "spec.ngram_dp_attention",
            "enable_dp_attention",
            lambda c: ngram(c) and c.dp_attention,
            "Currently ngram speculative decoding does not support dp attention.",
            "turn attention DP off, or use another speculative algorithm",
            source.format(lines["dp"]),
        ),
    ]


def _value_error(
    id: str,
    flag: str | tuple[str, ...],
    when: Callable[[Ctx], bool],
    text: str,
    fix: str,
    source: str,
    raises: str = "ValueError",
) -> Rule:
    """A rule whose SGLang message already says it all: we add only the fix."""
    return Rule(
        id=id,
        flags=flag if isinstance(flag, tuple) else (flag,),
        severity="error",
        when=when,
        message=lambda c: f"SGLang would stop with {raises}: {text} Fix: {fix}.",
        source=source,
        raises=raises,
        sglang_text=lambda c: text,
    )


def flex_with_spec(source: str) -> Rule:
    return _value_error(
        "attention.flex_with_speculative",
        "attention_backend",
        lambda c: c.attention_backend == "flex_attention" and c.spec,
        "Speculative decoding is currently not supported with Flex Attention backend",
        "choose another --attention-backend, or turn speculative decoding off",
        source,
        raises="AssertionError",
    )


def default_backend(source: str) -> list[Step]:
    return [
        Resolve(
            "attention.prefill_equals_decode",
            lambda c: c.set(attention_backend=c.prefill_attention_backend),
            source,
            lambda c: (
                c.prefill_attention_backend is not None
                and c.prefill_attention_backend == c.decode_attention_backend
            ),
        ),
        Resolve(
            "attention.default",
            lambda c: c.set(attention_backend=_default_backend(c)),
            source,
            lambda c: c.attention_backend is None,
        ),
    ]


def hybrid_sm100_backend(source: str, *, sets_page: bool = False) -> Resolve:
    """``sets_page``: 0.5.23 also sets the page size, over the operator's (64 for trtllm_mha, else 1)."""

    def apply(c: Ctx) -> None:
        backend = _hybrid_sm100_backend(c)
        c.set(attention_backend=backend)
        if sets_page:
            c.set(page_size=64 if backend == "trtllm_mha" else 1)

    return Resolve(
        "attention.hybrid_sm100_default",
        apply,
        source,
        lambda c: c.hybrid and c.major == 10 and c.attention_backend is None,
    )


def page_size_default(source: str) -> Resolve:
    return Resolve("page_size.default", lambda c: c.set(page_size=1), source, lambda c: c.page_size is None)


# -- 0.5.11 ------------------------------------------------------------------------------------------------

MAMBA_SPEC_TEXT_0_5_11 = (
    "Speculative decoding for {arch} is not compatible with radix cache when using "
    "--mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, please use "
    "--mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1."
)


def _mamba_0_5_11() -> list[Step]:
    """``_handle_mamba_radix_cache`` (server_args.py:2366-2457), run from the model-specific step."""

    def extra(c: Ctx) -> bool:
        return c.hybrid and _extra_buffer(c)

    def no_buffer_radix(c: Ctx) -> bool:
        return _mamba_radix(c) and not _extra_buffer(c)

    return [
        Resolve(
            "mamba.auto_is_no_buffer",
            lambda c: c.set(mamba_strategy="no_buffer"),
            S11("1079-1082"),
            lambda c: c.mamba_strategy == "auto",
        ),
        hybrid_sm100_backend(S11("2198-2225")),
        _value_error(
            "mamba.extra_buffer_with_disable_radix_cache",
            "disable_radix_cache",
            lambda c: extra(c) and c.disable_radix_cache,
            "mamba extra_buffer is not compatible with --disable-radix-cache Overlap scheduling is already "
            "supported with no_buffer + disable_radix_cache. Please use --mamba-scheduler-strategy "
            "no_buffer instead.",
            "remove --disable-radix-cache, or use --mamba-scheduler-strategy no_buffer",
            S11("2395-2401"),
        ),
        Rule(
            id="mamba.track_interval_below_draft_tokens",
            flags=("speculative_num_draft_tokens", "mamba_track_interval"),
            severity="error",
            when=lambda c: (
                extra(c)
                and c.speculative_num_draft_tokens is not None
                and c.mamba_track_interval < c.speculative_num_draft_tokens
            ),
            message=lambda c: (
                "SGLang 0.5.11 would stop with AssertionError: with extra_buffer the mamba track interval "
                f"({c.mamba_track_interval}) must be at least the draft tokens "
                f"({c.speculative_num_draft_tokens}). Fix: lower --speculative-num-draft-tokens or raise "
                "--mamba-track-interval."
            ),
            source=S11("2406-2409"),
            raises="AssertionError",
            sglang_text=lambda c: (
                f"mamba_track_interval {c.mamba_track_interval} must be greater than or equal to "
                f"speculative_num_draft_tokens {c.speculative_num_draft_tokens}"
            ),
        ),
        Rule(
            id="mamba.track_interval_page_size",
            flags=("page_size", "mamba_track_interval"),
            severity="error",
            when=lambda c: extra(c) and c.page_size is not None and c.mamba_track_interval % c.page_size != 0,
            message=lambda c: (
                f"SGLang 0.5.11 would stop with AssertionError: the mamba track interval "
                f"({c.mamba_track_interval}) must be a multiple of --page-size ({c.page_size}). Fix: "
                "choose a page size that divides it (1, 16, 64…)."
            ),
            source=S11("2411-2414"),
            raises="AssertionError",
            sglang_text=lambda c: (
                f"mamba_track_interval {c.mamba_track_interval} must be divisible by page_size {c.page_size}"
            ),
        ),
        Rule(
            id="mamba.fla_chunk_page_size",
            flags=("page_size",),
            severity="error",
            when=lambda c: (
                extra(c)
                and c.page_size is not None
                and max(FLA_CHUNK_SIZE, c.page_size) % min(FLA_CHUNK_SIZE, c.page_size) != 0
            ),
            message=lambda c: (
                f"SGLang 0.5.11 would stop with AssertionError: with extra_buffer, --page-size "
                f"({c.page_size}) "
                f"and the FLA chunk size ({FLA_CHUNK_SIZE}) must divide one another. Fix: a power of two."
            ),
            source=S11("2415-2419"),
            raises="AssertionError",
            sglang_text=lambda c: (
                "For SSM models with extra buffer, either FLA_CHUNK_SIZE or page_size must be divisible by "
                f"the other, got FLA_CHUNK_SIZE={FLA_CHUNK_SIZE}, self.page_size={c.page_size}"
            ),
        ),
        Rule(
            id="mamba.no_buffer_page_size_1",
            flags=("page_size",),
            severity="notice",
            when=lambda c: no_buffer_radix(c) and c.page_size is not None and c.page_size != 1,
            message=lambda c: (
                f"SGLang would set --page-size to 1: {c.arch} with the radix cache in no_buffer mode "
                "needs it."
            ),
            source=S11("2420-2426"),
            then=lambda c: c.set(page_size=1),
        ),
        Rule(
            id="mamba.no_buffer_disables_overlap",
            flags=("mamba_strategy",),
            severity="notice",
            when=lambda c: no_buffer_radix(c) and not c.spec and not c.disable_overlap_schedule,
            message=lambda c: (
                "SGLang would turn the overlap schedule off (mamba no_buffer with the radix cache does not "
                "support it); --disable-radix-cache keeps it on."
            ),
            source=S11("2427-2433"),
            then=lambda c: c.set(disable_overlap_schedule=True),
        ),
        Rule(
            id="mamba.speculative_needs_extra_buffer",
            flags=("mamba_strategy",),
            severity="error",
            when=lambda c: no_buffer_radix(c) and c.spec,
            message=lambda c: (
                f"SGLang 0.5.11 would stop with ValueError: speculative decoding on {c.arch} (hybrid GDN) is "
                "not compatible with the radix cache in mamba no_buffer mode (the default). Fix: add "
                "--mamba-scheduler-strategy extra_buffer (keep SGLANG_ENABLE_SPEC_V2=1), or add "
                "--disable-radix-cache."
            ),
            source=S11("2443-2457"),
            raises="ValueError",
            sglang_text=lambda c: MAMBA_SPEC_TEXT_0_5_11.format(arch=c.architecture),
        ),
    ]


def _attention_0_5_11() -> list[Step]:
    """``_handle_attention_backend_compatibility`` (server_args.py:2533-2735)."""
    return [
        *default_backend(S11("2536-2550")),
        flex_with_spec(S11("2560-2566")),
        *core.mla_backends_0_5_11(),
        _value_error(
            "attention.trtllm_mha_prefill_hardware",
            ("prefill_attention_backend", "attention_backend"),
            lambda c: _prefill_trtllm(c) and c.major != 10,
            "TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100). Please use a "
            "different prefill backend.",
            "on this GPU use another --attention-backend (flashinfer, triton; fa3 on Hopper)",
            S11("2618-2632"),
        ),
        _value_error(
            "attention.trtllm_mha_decode_hardware",
            ("decode_attention_backend", "attention_backend"),
            lambda c: _decode_trtllm(c) and c.major not in (9, 10, 12),
            "TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and (SM120) "
            "GPUs. Please use a different decode backend.",
            "on this GPU use another --decode-attention-backend (flashinfer, triton)",
            S11("2634-2645"),
        ),
        Rule(
            id="attention.trtllm_mha_page_size",
            flags=("page_size",),
            severity="notice",
            when=lambda c: _trtllm_anywhere(c) and c.page_size not in (16, 32, 64),
            message=lambda c: "SGLang would set --page-size to 64: TensorRT-LLM MHA supports 16, 32 or 64.",
            source=S11("2646-2650"),
            then=lambda c: c.set(page_size=64),
        ),
        *core.fa_backends_0_5_11(),
        page_size_default(S11("2815-2820")),
    ]


def _spec_version_0_5_11() -> list[Step]:
    """Spec v1 or v2 (server_args.py:3460-3483): v2 needs overlap, topk <= 1 and SGLANG_ENABLE_SPEC_V2."""

    def reason(c: Ctx) -> str:
        if _topk_gt1(c) and not c.disable_overlap_schedule:
            return "spec v2 currently only supports topk = 1"
        if _spec_v2_env_off(c) and not c.disable_overlap_schedule:
            return "SGLANG_ENABLE_SPEC_V2=False"
        return "overlap schedule is disabled"

    def v1(c: Ctx) -> bool:
        return _eagle(c) and (_topk_gt1(c) or _spec_v2_env_off(c) or c.disable_overlap_schedule)

    return [
        Rule(
            id="spec.v1",
            flags=("speculative_eagle_topk",),
            severity="notice",
            when=v1,
            message=lambda c: (
                f"SGLang would use spec v1 with the overlap schedule off, because {reason(c)} "
                "(spec v2 needs the overlap schedule, --speculative-eagle-topk 1 and SGLANG_ENABLE_SPEC_V2)."
            ),
            source=S11("3460-3479"),
            then=lambda c: c.set(disable_overlap_schedule=True),
        ),
        Rule(
            id="spec.v2",
            flags=("speculative_algorithm",),
            severity="notice",
            when=lambda c: _eagle(c) and not v1(c),
            message=lambda c: (
                "SGLang would use spec v2 (overlap schedule on; SGLANG_ENABLE_SPEC_V2 is on by default)."
            ),
            source=S11("3480-3483"),
        ),
    ]


def _dflash_0_5_11() -> list[Step]:
    """DFLASH (server_args.py:3318-3445)."""
    dflash = _is("DFLASH")
    return [
        _value_error(
            "spec.dflash_dp_attention",
            "enable_dp_attention",
            lambda c: dflash(c) and c.dp_attention,
            "Currently DFLASH speculative decoding does not support dp attention.",
            "turn attention DP off",
            S11("3319-3323"),
        ),
        _value_error(
            "spec.dflash_pp",
            "pp_size",
            lambda c: dflash(c) and c.pp_size != 1,
            "Currently DFLASH speculative decoding only supports pp_size == 1.",
            "use --pp-size 1",
            S11("3325-3328"),
        ),
        _value_error(
            "spec.dflash_needs_draft_model",
            "speculative_draft_model_path",
            lambda c: dflash(c) and c.speculative_draft_model_path is None,
            "DFLASH speculative decoding requires setting --speculative-draft-model-path.",
            "set --speculative-draft-model-path to the DFLASH draft model",
            S11("3330-3333"),
        ),
        dflash_block_mismatch(S11("3360-3374")),
        max_running_48(S11("3430-3434"), ("DFLASH",), "_dflash"),
    ]


def dflash_block_mismatch(source: str) -> Rule:
    return Rule(
        id="spec.dflash_block_size_mismatch",
        flags=("speculative_num_draft_tokens", "speculative_dflash_block_size"),
        severity="error",
        when=lambda c: (
            c.speculative_algorithm == "DFLASH"
            and c.speculative_dflash_block_size is not None
            and c.speculative_num_draft_tokens is not None
            and c.speculative_num_draft_tokens != c.speculative_dflash_block_size
        ),
        message=lambda c: (
            "SGLang would stop with ValueError: for DFLASH --speculative-num-draft-tokens "
            f"({c.speculative_num_draft_tokens}) and --speculative-dflash-block-size "
            f"({c.speculative_dflash_block_size}) must match. Fix: give only one of them, or the same value."
        ),
        source=source,
        raises="ValueError",
        sglang_text=lambda c: (
            "Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but they "
            "differ. "
            "For DFLASH they must match. "
            f"speculative_num_draft_tokens={c.speculative_num_draft_tokens}, "
            f"speculative_dflash_block_size={c.speculative_dflash_block_size}."
        ),
    )


def _topk_page_0_5_11() -> Rule:
    return Rule(
        id="spec.topk_page_size_backend",
        flags=("speculative_eagle_topk", "page_size", "attention_backend"),
        severity="error",
        when=lambda c: (
            _eagle(c) and _topk_gt1(c) and _page_gt1(c) and c.attention_backend not in ("flashinfer", "fa3")
        ),
        message=lambda c: (
            f"SGLang 0.5.11 would stop with ValueError: --speculative-eagle-topk {c.speculative_eagle_topk} "
            f"with --page-size {c.page_size} works only on the flashinfer or fa3 attention backends (this is "
            f"{c.attention_backend}). Fix: --speculative-eagle-topk 1, --page-size 1, or "
            "--attention-backend flashinfer."
        ),
        source=S11("3548-3555"),
        raises="ValueError",
        sglang_text=lambda c: (
            "speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results for "
            "paged attention backends. This combination is only supported for the 'flashinfer' backend."
        ),
    )


def _speculative_0_5_11() -> list[Step]:
    """``_handle_speculative_decoding`` (server_args.py:3286-3630)."""
    return [
        _value_error(
            "spec.moe_runner_flashinfer_trtllm",
            "speculative_moe_runner_backend",
            lambda c: str(c.speculative_moe_runner_backend or "").startswith("flashinfer_trtllm"),
            "Currently speculative MoE runner backend doesn't support flashinfer_trtllm, please use triton "
            "or "
            "auto backend for speculative moe runner instead.",
            "use --speculative-moe-runner-backend triton or auto",
            S11("3305-3308"),
            raises="AssertionError",
        ),
        nextn_is_eagle(S11("3310-3311")),
        Rule(
            id="spec.skip_dp_mlp_sync_needs_eagle",
            flags=("speculative_skip_dp_mlp_sync",),
            severity="error",
            when=lambda c: c.speculative_skip_dp_mlp_sync and c.speculative_algorithm != "EAGLE",
            message=lambda c: (
                "SGLang would stop with AssertionError: --speculative-skip-dp-mlp-sync works only with "
                "EAGLE (or NEXTN). Fix: remove it."
            ),
            source=S11("3313-3317"),
            raises="AssertionError",
            sglang_text=lambda c: (
                "--speculative-skip-dp-mlp-sync is only supported with speculative_algorithm == EAGLE, "
                f"got {c.speculative_algorithm}."
            ),
        ),
        *_dflash_0_5_11(),
        _value_error(
            "spec.standalone_dp_attention",
            "enable_dp_attention",
            lambda c: c.speculative_algorithm == "STANDALONE" and c.dp_attention,
            "Currently standalone speculative decoding does not support dp attention.",
            "turn attention DP off, or use EAGLE",
            S11("3447-3452"),
        ),
        max_running_48(S11("3454-3458"), EAGLE_FAMILY, ""),
        *_spec_version_0_5_11(),
        topk_without_steps("0.5.11", S11("3518-3523"), "_handle_speculative_decoding"),
        *auto_params(S11("3524-3529, 7471-7506")),
        steps_without_topk("0.5.11", S11("3531-3555")),
        trtllm_mha_topk(S11("3531-3537")),
        draft_tokens_adjusted(S11("3539-3546")),
        _topk_page_0_5_11(),
        *ngram_rules(
            "0.5.11",
            S11("{}"),
            {
                "mrr": "3562-3567",
                "topk": "3571",
                "draft": "3572-3577",
                "corpus": "3578-3597",
                "page": "3603-3612",
                "dp": "3613-3617",
            },
        ),
    ]


def _table_0_5_11() -> tuple[Step, ...]:
    return (
        *serving.log_level_rules(S11("7288-7298")),  # prepare_server_args, before ServerArgs is built
        serving.decode_forces_chunk_cache(S11("3739-3772")),  # _handle_pd_disaggregation
        *serving.model_config_rules("0.5.11"),  # its get_model_config() (:3823), the first
        core.chunk_default(core.CHUNK_TIERS_0_5_11, S11("1294-1380")),  # _handle_gpu_memory_settings
        serving.gpt_oss_default_backend(S11("1875-1887")),
        serving.gpt_oss_backends(serving.GPT_OSS_BACKENDS_0_5_11, S11("1901-1918")),
        *_mamba_0_5_11(),
        core.deepseek_sm100_trtllm_mla(S11("1765-1774")),
        *_attention_0_5_11(),
        core.linear_attn_flashinfer_sm100(S11("2855-2888")),
        core.dp_attention_off_0_5_11(),
        *core.dp_attention_rules("0.5.11", S11("2933-2940"), "dp_size"),
        serving.dp_lm_head_0_5_11(),
        *core.moe_rules("0.5.11"),  # _handle_moe_kernel_config, _handle_a2a_moe, _handle_eplb_and_dispatch
        core.pp_disables_overlap(S11("3175-3180")),
        *_speculative_0_5_11(),
        serving.hicache_radix_rule(S11("3946-3951")),  # _handle_cache_compatibility
        *serving.deterministic_rules("0.5.11", S11("3978-4046")),
        *core.check_server_args_0_5_11(),
    )


# -- 0.5.23 ------------------------------------------------------------------------------------------------


def _mamba_0_5_23() -> list[Step]:
    """``handle_mamba_radix_cache`` from the model hook (model_hook.py:1048-1076, mamba_hook.py:115-163),
    which runs before the attention and speculative hooks; ``auto`` per overrides.py:455-487."""

    def extra(c: Ctx) -> bool:
        return _mamba_radix(c) and _extra_buffer(c)

    def no_buffer(c: Ctx) -> bool:
        return _mamba_radix(c) and c.mamba_strategy == "no_buffer"

    def auto(c: Ctx) -> str:
        wants = not c.disable_overlap_schedule or _page_gt1(c)
        return "extra_buffer" if wants and c.linear_attn_backend == "triton" else "no_buffer"

    return [
        Rule(
            id="mamba.auto_strategy",
            flags=("mamba_strategy",),
            severity="notice",
            when=lambda c: _mamba_radix(c) and c.mamba_strategy == "auto",
            message=lambda c: (
                f"SGLang would use mamba radix-cache strategy {auto(c)}"
                + (" and turn the overlap schedule off." if auto(c) == "no_buffer" else ".")
            ),
            source=S23("455-487", "arg_groups/overrides.py"),
            then=lambda c: (
                c.set(mamba_strategy=auto(c))
                if auto(c) == "extra_buffer"
                else c.set(mamba_strategy="no_buffer", disable_overlap_schedule=True)
            ),
        ),
        Rule(
            id="mamba.strategy_needs_mamba_model",
            flags=("mamba_strategy",),
            severity="error",
            when=lambda c: (
                c.architecture is not None
                and c.architecture not in MAMBA_RADIX_ARCHS
                and not c.disable_radix_cache
                and _extra_buffer(c)
            ),
            message=lambda c: (
                f"SGLang 0.5.23 would stop with ValueError: {c.arch} has no mamba state, so "
                f"--mamba-radix-cache-strategy {c.mamba_strategy} has nothing to buffer. Fix: remove it."
            ),
            source=S23("1058-1067", "arg_groups/model_hook.py"),
            raises="ValueError",
            sglang_text=lambda c: (
                f"--mamba-radix-cache-strategy {c.mamba_strategy} needs mamba state, got {c.architecture}."
            ),
        ),
        Rule(
            id="mamba.extra_buffer_unsupported",
            flags=("linear_attn_backend",),
            severity="error",
            when=lambda c: extra(c) and c.linear_attn_backend != "triton",
            message=lambda c: (
                f"SGLang 0.5.23 would stop with AssertionError: extra_buffer on {c.arch} needs "
                "--linear-attn-backend triton. Fix: use it, or --mamba-radix-cache-strategy no_buffer."
            ),
            source=S23("117-119", "arg_groups/mamba_hook.py"),
            raises="AssertionError",
            sglang_text=lambda c: f"extra_buffer is not supported for {c.architecture}; use no_buffer.",
        ),
        Rule(
            id="mamba.track_interval_below_draft_tokens",
            flags=("speculative_num_draft_tokens", "mamba_track_interval"),
            severity="error",
            when=lambda c: (
                extra(c)
                and c.speculative_num_draft_tokens is not None
                and c.mamba_track_interval < c.speculative_num_draft_tokens
            ),
            message=lambda c: (
                "SGLang 0.5.23 would stop with a bare AssertionError: with extra_buffer the mamba track "
                f"interval ({c.mamba_track_interval}) must be at least the draft tokens "
                f"({c.speculative_num_draft_tokens}). Fix: lower --speculative-num-draft-tokens or raise "
                "--mamba-track-interval."
            ),
            source=S23("132-133", "arg_groups/mamba_hook.py"),
            raises="AssertionError",
            sglang_text=lambda c: "",
        ),
        Rule(
            id="mamba.track_interval_page_size",
            flags=("page_size", "mamba_track_interval"),
            severity="error",
            when=lambda c: extra(c) and c.page_size is not None and c.mamba_track_interval % c.page_size != 0,
            message=lambda c: (
                "SGLang 0.5.23 would stop with a bare AssertionError: the mamba track interval "
                f"({c.mamba_track_interval}) must be a multiple of --page-size ({c.page_size}). Fix: "
                "choose a "
                "page size that divides it (1, 16, 64…)."
            ),
            source=S23("134-135", "arg_groups/mamba_hook.py"),
            raises="AssertionError",
            sglang_text=lambda c: "",
        ),
        _value_error(
            "mamba.no_buffer_page_size",
            "page_size",
            lambda c: no_buffer(c) and c.page_size not in (1, None),
            "no_buffer only supports page_size=1.",
            "use --page-size 1, or --mamba-radix-cache-strategy extra_buffer",
            S23("157", "arg_groups/mamba_hook.py"),
            raises="AssertionError",
        ),
        _value_error(
            "mamba.no_buffer_overlap",
            "mamba_strategy",
            lambda c: no_buffer(c) and not c.disable_overlap_schedule,
            "no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True.",
            "add --disable-overlap-schedule, or leave --mamba-radix-cache-strategy at auto",
            S23("158-160", "arg_groups/mamba_hook.py"),
            raises="AssertionError",
        ),
        _value_error(
            "mamba.no_buffer_trtllm_mha",
            "attention_backend",
            lambda c: no_buffer(c) and c.attention_backend == "trtllm_mha",
            "no_buffer do not support trtllm_mha attention backend.",
            "choose another --attention-backend, or --mamba-radix-cache-strategy extra_buffer",
            S23("161-163", "arg_groups/mamba_hook.py"),
            raises="AssertionError",
        ),
    ]


def _attention_0_5_23() -> list[Step]:
    """``handle_attention_backend_compatibility`` (arg_groups/attention_hook.py)."""
    return [
        *default_backend(S23("120-140", "arg_groups/attention_hook.py")),
        flex_with_spec(S23("161-163", "arg_groups/attention_hook.py")),
        *core.mla_backends_0_5_23(),
        _value_error(
            "attention.trtllm_mha_prefill_hardware",
            ("prefill_attention_backend", "attention_backend"),
            lambda c: _prefill_trtllm(c) and c.major not in (9, 10, 12),
            "TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs. "
            "Please use a different prefill backend.",
            "on this GPU use another --attention-backend (flashinfer, triton)",
            S23("201-206", "arg_groups/attention_hook.py"),
        ),
        _value_error(
            "attention.trtllm_mha_decode_hardware",
            ("decode_attention_backend", "attention_backend"),
            lambda c: _decode_trtllm(c) and c.major not in (9, 10, 12),
            "TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and (SM120) "
            "GPUs. Please use a different decode backend.",
            "on this GPU use another --decode-attention-backend (flashinfer, triton)",
            S23("222-227", "arg_groups/attention_hook.py"),
        ),
        *core.fa_backends_0_5_23(),
        page_size_default(S23("1341-1362", "arg_groups/overrides.py")),
    ]


def _eagle_0_5_23() -> list[Step]:
    """``_handle_eagle_family`` (arg_groups/speculative_hook.py:1072-1284)."""

    def src(lines: str) -> str:
        return S23(lines, "arg_groups/speculative_hook.py")

    return [
        _value_error(
            "spec.standalone_dp_attention",
            "enable_dp_attention",
            lambda c: c.speculative_algorithm == "STANDALONE" and c.dp_attention,
            "Currently standalone speculative decoding does not support dp attention.",
            "turn attention DP off, or use EAGLE",
            src("1078-1084"),
        ),
        max_running_48(src("1086-1095"), EAGLE_FAMILY, ""),
        Rule(
            id="spec.v2_synchronous",
            flags=("disable_overlap_schedule",),
            severity="notice",
            when=lambda c: _eagle(c) and c.disable_overlap_schedule,
            message=lambda c: "SGLang would run spec v2 synchronously: the overlap schedule is off.",
            source=src("1098-1102"),
        ),
        topk_without_steps("0.5.23", src("1159-1163"), "_handle_eagle_family"),
        *auto_params(src("1165-1175, 1430-1461")),
        steps_without_topk("0.5.23", src("1176-1284")),
        trtllm_mha_topk(src("1176-1180")),
        Rule(
            id="spec.rejection_sampling_algorithm",
            flags=("speculative_use_rejection_sampling",),
            severity="error",
            when=lambda c: (
                _eagle(c)
                and c.speculative_use_rejection_sampling
                and c.speculative_algorithm not in ("EAGLE", "EAGLE3")
            ),
            message=lambda c: (
                "SGLang would stop with NotImplementedError: rejection sampling works only with EAGLE, "
                "EAGLE3 "
                "or NEXTN. Fix: remove --speculative-use-rejection-sampling."
            ),
            source=src("1215-1220"),
            raises="NotImplementedError",
            sglang_text=lambda c: (
                "--speculative-use-rejection-sampling is only supported for EAGLE / EAGLE3 / NEXTN, not "
                f"speculative_algorithm={c.speculative_algorithm}."
            ),
        ),
        _value_error(
            "spec.rejection_sampling_topk",
            "speculative_use_rejection_sampling",
            lambda c: _eagle(c) and c.speculative_use_rejection_sampling and c.speculative_eagle_topk != 1,
            "--speculative-use-rejection-sampling requires --speculative-eagle-topk=1.",
            "set --speculative-eagle-topk 1, or remove --speculative-use-rejection-sampling",
            src("1221-1224"),
        ),
        draft_tokens_adjusted(src("1254-1267")),
        Rule(
            id="spec.topk_page_size_backend",
            flags=("speculative_eagle_topk", "page_size", "attention_backend"),
            severity="error",
            when=lambda c: (
                _eagle(c)
                and _topk_gt1(c)
                and _page_gt1(c)
                and c.attention_backend not in ("flashinfer", "fa3", "triton")
            ),
            message=lambda c: (
                f"SGLang 0.5.23 would stop with ValueError: --speculative-eagle-topk "
                f"{c.speculative_eagle_topk} "
                f"with --page-size {c.page_size} works only on the flashinfer, fa3 or triton attention "
                f"backends (this is {c.attention_backend}). Fix: --speculative-eagle-topk 1, --page-size 1, "
                "or one of those backends."
            ),
            source=src("1270-1284"),
            raises="ValueError",
            sglang_text=lambda c: (
                "speculative_eagle_topk > 1 with page_size > 1 is only supported on ('flashinfer', 'fa3', "
                f"'triton'); got attention_backend={c.attention_backend!r}. Use page_size == 1 or one of "
                "those backends."
            ),
        ),
    ]


def _dflash_0_5_23() -> list[Step]:
    """``_handle_dflash`` (arg_groups/speculative_hook.py:287-447)."""
    dflash = _is("DFLASH")

    def src(lines: str) -> str:
        return S23(lines, "arg_groups/speculative_hook.py")

    return [
        _value_error(
            "spec.dflash_dp_lm_head",
            "enable_dp_lm_head",
            lambda c: dflash(c) and c.dp_attention and not c.enable_dp_lm_head,
            "DFLASH with dp attention requires --enable-dp-lm-head.",
            "add --enable-dp-lm-head, or turn attention DP off",
            src("300-308"),
        ),
        _value_error(
            "spec.dflash_pp",
            "pp_size",
            lambda c: dflash(c) and c.pp_size != 1,
            "Currently DFLASH speculative decoding only supports pp_size == 1.",
            "use --pp-size 1",
            src("319-322"),
        ),
        _value_error(
            "spec.dflash_needs_draft_model",
            "speculative_draft_model_path",
            lambda c: dflash(c) and c.speculative_draft_model_path is None,
            "DFLASH speculative decoding requires setting --speculative-draft-model-path.",
            "set --speculative-draft-model-path to the DFLASH draft model",
            src("324-327"),
        ),
        dflash_block_mismatch(src("370-383")),
        max_running_48(src("440-446"), ("DFLASH",), "_dflash"),
    ]


def _speculative_0_5_23() -> list[Step]:
    """``handle_speculative_decoding`` (arg_groups/speculative_hook.py:121-285)."""

    def src(lines: str) -> str:
        return S23(lines, "arg_groups/speculative_hook.py")

    return [
        Resolve(
            "spec.upper_case",
            lambda c: c.set(speculative_algorithm=str(c.speculative_algorithm).upper()),
            src("138-143"),
            lambda c: c.spec,
        ),
        nextn_is_eagle(src("81-118, 151-160")),
        _value_error(
            "spec.sink_without_window",
            "speculative_draft_sink_size",
            lambda c: c.speculative_draft_sink_size is not None and c.speculative_draft_window_size is None,
            "--speculative-draft-sink-size requires --speculative-draft-window-size.",
            "add --speculative-draft-window-size, or remove --speculative-draft-sink-size",
            src("221-230"),
        ),
        Rule(
            id="spec.unknown_algorithm",
            flags=("speculative_algorithm",),
            severity="error",
            when=lambda c: c.spec and c.speculative_algorithm not in BUILTIN_ALGORITHMS_0_5_23,
            message=lambda c: (
                f"SGLang 0.5.23 would stop with ValueError: there is no speculative algorithm "
                f"{c.speculative_algorithm!r} (builtins: {', '.join(BUILTIN_ALGORITHMS_0_5_23)}). Fix: "
                "choose one "
                "of those."
            ),
            source="srt/speculative/spec_info.py:65 (0.5.23)",
            raises="ValueError",
            sglang_text=lambda c: f"Unknown speculative algorithm name: {c.speculative_algorithm}",
        ),
        *_dflash_0_5_23(),
        *_eagle_0_5_23(),
        *ngram_rules(
            "0.5.23",
            S23("{}", "arg_groups/speculative_hook.py"),
            {
                "mrr": "1295-1302",
                "topk": "1309-1313",
                "draft": "1314-1323",
                "corpus": "1330-1345",
                "page": "1357-1367",
                "dp": "1368-1371",
            },
        ),
    ]


def _table_0_5_23() -> tuple[Step, ...]:
    return (
        *serving.log_level_rules(S23("696-710", "server_args.py")),  # prepare_server_args
        core.deprecated_dp_attention_0_5_23(),  # run_resolution_pipeline's first hook (pipeline.py:45)
        serving.decode_forces_chunk_cache(S23("100-127", "arg_groups/pd_disaggregation_hook.py")),
        *serving.model_config_rules("0.5.23"),  # ModelConfig, built before the memory and model hooks
        core.chunk_default(core.CHUNK_TIERS_0_5_23, S23("78-180", "arg_groups/memory_hook.py")),
        # The model overrides (model_hook.py:233-238) run before the mamba strategy's auto resolution at the
        # end of the model hook (:1047-1057), so "auto" is not yet extra_buffer here (measured).
        hybrid_sm100_backend(S23("18-49", "arg_groups/model_overrides/qwen3_5.py"), sets_page=True),
        core.deepseek_sm100_trtllm_mla(S23("177-188", "arg_groups/model_overrides/deepseek_v2.py")),
        serving.gpt_oss_default_backend(S23("24-45", "arg_groups/model_overrides/gpt_oss.py")),
        serving.gpt_oss_backends(serving.GPT_OSS_BACKENDS_0_5_23, S23("522-542", "arg_groups/model_hook.py")),
        *_mamba_0_5_23(),
        # handle_deterministic_inference runs before the attention backends (pipeline.py:240-242)
        *serving.deterministic_rules("0.5.23", S23("580-670", "arg_groups/attention_hook.py")),
        *_attention_0_5_23(),
        core.linear_attn_flashinfer_sm100(S23("281-345", "arg_groups/attention_hook.py")),
        *serving.dp_with_attn_dp_0_5_23(),
        *core.dp_attention_rules("0.5.23", S23("313-333", "arg_groups/parallel_hook.py"), "attn_dp_size"),
        *serving.dp_lm_head_0_5_23(),
        *core.moe_rules("0.5.23"),  # pipeline.py: handle_moe_kernel_config .. handle_eplb_and_dispatch
        core.pp_disables_overlap(S23("1624-1628", "arg_groups/overrides.py")),
        *_speculative_0_5_23(),
        serving.hicache_radix_rule(S23("393-397", "arg_groups/kv_cache_hook.py")),  # pipeline.py:334
        *core.check_server_args_0_5_23(),
    )


_BUILDERS: dict[str, Callable[[], tuple[Step, ...]]] = {"0.5.11": _table_0_5_11, "0.5.23": _table_0_5_23}
DIALECTS = tuple(_BUILDERS)


# Built on first use rather than at import: a command that checks no flags pays nothing, and a test run
# under `make mutation` can build them again with a mutant active (tests/sglang/conftest.py), which
# reaches the rules' own code; tables built at import would hold the original rules in every mutant.
@cache
def _built(dialect: str) -> tuple[Step, ...]:
    return _BUILDERS[dialect]()


def table_for(sglang: str) -> tuple[Step, ...]:
    return _built(flagmod.dialect(sglang))


def rebuild() -> None:
    """Forget the built tables, so the next check builds them again (for mutation testing)."""
    _built.cache_clear()


def alias_notices(parsed: flagmod.ParsedArgv, sglang: str) -> list[Finding]:
    """A deprecated spelling still works on 0.5.14-0.5.19, and is gone from 0.5.20 (FACTS §2.3)."""
    return [
        Finding(
            id="argv.deprecated_alias",
            flag=typed,
            message=f"SGLang {sglang} accepts {typed} as a deprecated alias of {new}; 0.5.20 removes it. "
            f"Write {new}.",
            source="FACTS §2.3 (0.5.14-0.5.19)",
            severity="notice",
        )
        for typed, new in parsed.aliases.items()
    ]


__all__ = ["DIALECTS", "alias_notices", "mamba_option", "rebuild", "table_for"]
