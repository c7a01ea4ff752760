"""Data-parallel attention, pipeline parallelism, nodes, and the chunked prefill size SGLang picks for the
GPU (coretables: ``dp_attention_rules``, ``chunk_default``, ``chunk_page_rules``, ``check_server_args_*``),
as the operator reads them: exact messages, marked flags, sources, SGLang's own texts, and the values SGLang
holds after its adjustments. Checked against the rules' code and the wheels they cite (0.5.11
server_args.py:1294-1380, 2928-2942, 6770-6916; 0.5.23 arg_groups/memory_hook.py, parallel_hook.py,
validation_hook.py)."""

from __future__ import annotations

from collections.abc import Mapping

from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.rules import CheckResult, check

QWEN3 = ["--model-path", "Qwen/Qwen3-8B"]
BOTH = ("0.5.11", "0.5.23")

Said = tuple[str, str | None, str | None, str, str, str | None]


def run(
    sglang: str, *flags: str, cc: str = "8.6", env: Mapping[str, str] | None = None, **facts: object
) -> CheckResult:
    return check([*QWEN3, *flags], sglang=sglang, compute_capability=cc, env=env, **facts)  # type: ignore[arg-type]


def said(error: Finding) -> Said:
    """An error as the operator meets it: id, marked flag, exception, source, message, SGLang's text."""
    return (error.id, error.flag, error.raises, error.source, error.message, error.sglang_text)


def errors(sglang: str, *flags: str, **facts: object) -> list[Said]:
    return [said(e) for e in run(sglang, *flags, **facts).errors]


def error_ids(sglang: str, *flags: str, **facts: object) -> list[str]:
    return [e.id for e in run(sglang, *flags, **facts).errors]


def chunks(sglang: str, *flags: str, **facts: object) -> tuple[int, ...]:
    """The chunked prefill sizes SGLang may run with, after the attention-DP division."""
    return tuple(run(sglang, *flags, **facts).values["chunked_prefill_candidates"])


def s11(lines: str) -> str:
    return f"srt/server_args.py:{lines} (0.5.11)"


def s23(lines: str, path: str = "validation_hook.py") -> str:
    return f"srt/arg_groups/{path}:{lines} (0.5.23)"


PAGE_TEXT = "chunked_prefill_size must be divisible by page_size"
PAGE_FIX = (
    "Fix: a page size that divides it (a power of two such as 16 or 64), or set --chunked-prefill-size to a "
    "multiple of the page size."
)


# -- the chunked prefill size SGLang picks from the GPU's memory ------------------------------------------


def test_chunk_size_per_memory_tier_at_each_boundary() -> None:
    """SGLang compares ``gpu_mem < bound`` (MiB): a card of exactly 20 GiB is in the next tier. 0.5.23 gives
    20-35 GiB cards 4096 where 0.5.11 gave 2048."""
    tiers = {
        20 * 1024 - 1: (2048, 2048),
        20 * 1024: (2048, 4096),
        35 * 1024 - 1: (2048, 4096),
        35 * 1024: (4096, 4096),
        60 * 1024 - 1: (4096, 4096),
        60 * 1024: (8192, 8192),
        160 * 1024 - 1: (8192, 8192),
        160 * 1024: (16384, 16384),
    }
    for memory, (old, new) in tiers.items():
        assert (chunks("0.5.11", gpu_memory_mb=memory), chunks("0.5.23", gpu_memory_mb=memory)) == (
            (old,),
            (new,),
        ), memory


def test_chunk_size_given_is_kept_and_unknown_memory_means_every_size() -> None:
    for sglang in BOTH:
        assert chunks(sglang, "--chunked-prefill-size", "3000", gpu_memory_mb=81_559) == (3000,)
        assert chunks(sglang, "--chunked-prefill-size", "-1") == (-1,)
        assert chunks(sglang) == (2048, 4096, 8192, 16384)
        assert run(sglang).values["chunked_prefill_size"] is None  # SGLang's own field stays as given


def test_attention_dp_divides_every_chunk_size_and_plain_dp_does_not() -> None:
    assert chunks("0.5.23", "--tp", "4", "--attn-dp-size", "2") == (1024, 2048, 4096, 8192)
    assert chunks("0.5.11", "--tp", "4", "--dp", "2", "--enable-dp-attention") == (1024, 2048, 4096, 8192)
    assert chunks("0.5.23", "--tp", "3", "--dp", "3", "--enable-dp-attention", gpu_memory_mb=81_559) == (
        2730,
    )
    assert chunks("0.5.11", "--tp", "4", "--dp", "2") == (2048, 4096, 8192, 16384)
    assert chunks("0.5.11", "--tp", "4", "--dp", "2", "--chunked-prefill-size", "-1",
                  "--enable-dp-attention") == (-1,)  # fmt: skip


# -- the chunked prefill size must be a multiple of the page size -----------------------------------------


def test_page_size_that_divides_no_chunk_size_is_an_error_naming_every_size() -> None:
    for sglang, source in (("0.5.11", s11("6821-6826")), ("0.5.23", s23("241-246"))):
        assert errors(sglang, "--page-size", "48") == [
            ("memory.chunked_prefill_page_size", "--page-size", "AssertionError", source,
             "SGLang would stop with AssertionError: the chunked prefill size (2048 or 4096 or 8192 or 16384, "
             f"which SGLang picks from the GPU's memory) must be a multiple of the page size (48). {PAGE_FIX}",
             PAGE_TEXT),
        ]  # fmt: skip


def test_page_size_error_says_a_given_chunk_as_given_and_the_dp_division() -> None:
    for sglang in BOTH:
        given = run(sglang, "--page-size", "48", "--chunked-prefill-size", "100").errors[0]
        assert given.message == (
            "SGLang would stop with AssertionError: the chunked prefill size (100) must be a multiple of the "
            f"page size (48). {PAGE_FIX}"
        )
        divided = run(sglang, "--tp", "2", "--dp", "2", "--enable-dp-attention", "--page-size", "48",
                      "--chunked-prefill-size", "4000").errors[0]  # fmt: skip
        assert divided.message == (
            "SGLang would stop with AssertionError: the chunked prefill size (2000, divided by the attention "
            f"DP size) must be a multiple of the page size (48). {PAGE_FIX}"
        )
        picked = run(sglang, "--tp", "2", "--dp", "2", "--enable-dp-attention", "--page-size", "3000",
                     gpu_memory_mb=81_559).errors[0]  # fmt: skip
        assert picked.message == (
            "SGLang would stop with AssertionError: the chunked prefill size (4096, which SGLang picks from the "
            f"GPU's memory, divided by the attention DP size) must be a multiple of the page size (3000). "
            f"{PAGE_FIX}"
        )


def test_page_size_forced_by_a_backend_marks_the_given_chunk_size() -> None:
    """FlashMLA sets the page size to 64 itself: the flag the operator typed is the chunk's."""
    for sglang in BOTH:
        [error] = run(sglang, "--attention-backend", "flashmla", "--chunked-prefill-size", "100").errors
        assert (error.id, error.flag) == ("memory.chunked_prefill_page_size", "--chunked-prefill-size")
        assert "(100) must be a multiple of the page size (64)" in error.message


def test_page_size_checks_skip_disabled_chunking_and_decode_nodes() -> None:
    for sglang in BOTH:
        assert run(sglang, "--page-size", "48", "--chunked-prefill-size", "4800").ok
        assert run(sglang, "--page-size", "48", "--chunked-prefill-size", "0").ok
        assert run(sglang, "--page-size", "48", "--chunked-prefill-size", "-1").ok
        assert run(sglang, "--page-size", "48", "--disaggregation-mode", "decode").ok
        assert error_ids(sglang, "--page-size", "48", "--disaggregation-mode", "prefill") == [
            "memory.chunked_prefill_page_size"
        ]
        assert error_ids(sglang, "--page-size", "2", "--chunked-prefill-size", "1") == [
            "memory.chunked_prefill_page_size"
        ]  # a one-token chunk is still chunked
        assert run(sglang, "--page-size", "1", "--chunked-prefill-size", "4801").ok
        assert run(sglang, "--page-size", "64").ok


def test_page_size_that_fails_only_some_gpus_is_a_notice() -> None:
    for sglang, source in (("0.5.11", s11("6821-6826")), ("0.5.23", s23("241-246"))):
        result = run(sglang, "--page-size", "4096")
        assert result.ok
        [notice] = result.notices
        assert (notice.id, notice.flag, notice.source, notice.severity) == (
            "memory.chunked_prefill_page_size_maybe",
            "--page-size",
            source,
            "notice",
        )
        assert notice.message == (
            "On some GPUs SGLang would stop: the chunked prefill size it picks from the GPU's memory (2048) is "
            "not a multiple of the page size (4096). Set --chunked-prefill-size to be sure."
        )
        assert (
            "(1024 or 2048) is not a multiple of the page size (4096)"
            in run(sglang, "--tp", "2", "--dp", "2", "--enable-dp-attention", "--page-size", "4096")
            .notices[0]
            .message
        )
        assert run(sglang, "--page-size", "4096", gpu_memory_mb=81_559).notices == []  # 8192: fits
        assert run(sglang, "--page-size", "4096", "--disaggregation-mode", "decode").notices == []


# -- data-parallel attention -------------------------------------------------------------------------------


def test_dp_attention_needs_tp_divisible_by_the_dp_size() -> None:
    for sglang, source, dp in (
        ("0.5.11", s11("2933-2940"), ["--dp", "2", "--enable-dp-attention"]),
        ("0.5.23", s23("313-333", "parallel_hook.py"), ["--attn-dp-size", "2"]),
    ):
        assert errors(sglang, "--tp", "3", *dp) == [
            ("parallel.tp_not_divisible_by_dp", dp[0], "AssertionError", source,
             f"SGLang {sglang} would stop with a bare AssertionError: with data-parallel attention the "
             "tensor-parallel size (3) must be a multiple of the attention DP size (2). Fix: --tp 2 (or a "
             "multiple of it), or a DP size that divides --tp.", ""),
        ]  # fmt: skip
        assert errors(sglang, *dp)[0][4] == (
            f"SGLang {sglang} would stop with a bare AssertionError: with data-parallel attention the "
            "tensor-parallel size (1, the default) must be a multiple of the attention DP size (2). Fix: --tp 2 "
            "(or a multiple of it), or a DP size that divides --tp."
        )
        assert run(sglang, "--tp", "4", *dp).ok
    assert run("0.5.11", "--tp", "3", "--dp", "2").ok  # replicas, not attention DP: no division


def test_dp_attention_with_a_dp_size_of_zero_is_sglangs_zero_division_not_a_crash() -> None:
    """SGLang's ``assert tp_size % dp_size == 0`` raises ZeroDivisionError for --dp 0: the checker says so."""
    assert errors("0.5.11", "--dp", "0", "--enable-dp-attention") == [
        ("parallel.tp_not_divisible_by_dp", "--dp", "AssertionError", s11("2933-2940"),
         "SGLang 0.5.11 would stop with ZeroDivisionError: with data-parallel attention the tensor-parallel "
         "size must be a multiple of the attention DP size, and a DP size of 0 divides by zero. Fix: a DP size "
         "of 1 or more that divides --tp.",
         "integer modulo by zero"),
    ]  # fmt: skip
    # 0.5.23 reads it as --attn-dp-size 0, which handle_data_parallelism refuses (parallel_hook.py:285-286;
    # measured on the wheel, issue 26)
    for flags in (("--dp", "0", "--enable-dp-attention"), ("--attn-dp-size", "0")):
        assert [(e.id, e.raises, e.sglang_text) for e in run("0.5.23", *flags).errors][:1] == [
            ("parallel.attn_dp_size_not_positive", "ValueError", "--attn-dp-size must be positive (got 0).")
        ]


def test_dp_attention_is_off_with_one_dp_rank_on_0_5_11() -> None:
    one = run("0.5.11", "--enable-dp-attention", "--enable-dp-lm-head")
    assert one.ok
    assert (one.values["enable_dp_attention"], one.values["enable_dp_lm_head"]) == (False, False)
    two = run("0.5.11", "--tp", "2", "--dp", "2", "--enable-dp-attention", "--enable-dp-lm-head")
    assert (two.values["enable_dp_attention"], two.values["enable_dp_lm_head"]) == (True, True)
    assert (two.values["dp_size"], two.values["attn_dp_size"]) == (2, 1)


def test_deprecated_dp_attention_becomes_attn_dp_size_on_0_5_23() -> None:
    old = run("0.5.23", "--tp", "2", "--dp", "2", "--enable-dp-attention")
    assert old.ok
    assert (old.values["attn_dp_size"], old.values["dp_size"], old.values["enable_dp_attention"]) == (
        2,
        1,
        False,
    )
    # next to --attn-dp-size the old flag adds nothing: the replicas stay replicas
    both = run("0.5.23", "--tp", "4", "--attn-dp-size", "2", "--dp", "3", "--enable-dp-attention")
    assert (both.values["attn_dp_size"], both.values["dp_size"], both.values["enable_dp_attention"]) == (
        2,
        3,
        False,
    )
    plain = run("0.5.23", "--tp", "2", "--dp", "2")
    assert (plain.values["attn_dp_size"], plain.values["dp_size"]) == (1, 2)
    # the DP size that fails is marked where it was typed
    [error] = run("0.5.23", "--tp", "3", "--dp", "2", "--enable-dp-attention").errors
    assert (error.id, error.flag) == ("parallel.tp_not_divisible_by_dp", "--dp")


# -- nodes and pipeline parallelism (check_server_args) -------------------------------------------------


def test_tp_times_pp_must_spread_evenly_over_the_nodes() -> None:
    for sglang, source in (("0.5.11", s11("6774-6777")), ("0.5.23", s23("177-181"))):
        assert errors(sglang, "--tp", "3", "--nnodes", "2") == [
            ("parallel.tp_pp_nodes", "--nnodes", "AssertionError", source,
             "SGLang would stop with AssertionError: tp × pp (3 × 1) must be a multiple of --nnodes (2). Fix: "
             "spread the ranks evenly over the nodes.", "tp_size must be divisible by number of nodes"),
        ]  # fmt: skip
        assert run(sglang, "--tp", "3", "--pp-size", "2", "--nnodes", "2").ok  # 3 × 2 = 6
        assert run(sglang, "--tp", "4", "--nnodes", "2").ok
        assert "tp × pp (1 × 3)" in run(sglang, "--pp-size", "3", "--nnodes", "2").errors[0].message
        assert run(sglang, "--nnodes", "0").ok  # counted as one node, not a division by zero


def test_data_parallel_replicas_do_not_span_nodes() -> None:
    for sglang, source, text in (
        ("0.5.11", s11("6790-6792"), "multi-node data parallel is not supported unless dp attention!"),
        ("0.5.23", s23("199-202"),
         "multi-node data-parallel replicas are not supported; use attention DP (--attn-dp-size) across nodes"),
    ):  # fmt: skip
        assert errors(sglang, "--tp", "2", "--dp", "2", "--nnodes", "2") == [
            ("parallel.multi_node_dp", "--dp", "AssertionError", source,
             f"SGLang {sglang} would stop with AssertionError: data-parallel replicas (--dp 2) do not span "
             "nodes (--nnodes 2). Fix: attention DP, or one node.", text),
        ]  # fmt: skip
        assert run(sglang, "--tp", "2", "--dp", "2").ok
        assert run(sglang, "--tp", "2", "--nnodes", "2").ok
    assert run("0.5.11", "--tp", "2", "--dp", "2", "--enable-dp-attention", "--nnodes", "2").ok


def test_pipeline_parallelism_turns_the_overlap_schedule_off() -> None:
    for sglang in BOTH:
        assert run(sglang, "--pp-size", "2").values["disable_overlap_schedule"] is True
        assert run(sglang).values["disable_overlap_schedule"] is False


def test_pipeline_parallelism_refuses_speculative_decoding_on_0_5_11() -> None:
    assert errors("0.5.11", "--pp-size", "2", "--speculative-algorithm", "NGRAM") == [
        ("parallel.pp_with_speculative", "--pp-size", "AssertionError", s11("6785-6788"),
         "SGLang 0.5.11 would stop with AssertionError: pipeline parallelism does not work with speculative "
         "decoding (--pp-size 2, NGRAM). Fix: --pp-size 1, or no --speculative-algorithm.",
         "Pipeline parallelism is not compatible with overlap schedule, speculative decoding"),
    ]  # fmt: skip
    assert "parallel.pp_with_speculative" not in error_ids("0.5.11", "--speculative-algorithm", "NGRAM")


def test_pipeline_parallelism_on_0_5_23_takes_eagle_on_prefill_nodes_only() -> None:
    assert errors("0.5.23", "--pp-size", "2", "--speculative-algorithm", "NGRAM") == [
        ("parallel.pp_with_speculative", "--pp-size", "AssertionError", s23("128-135"),
         "SGLang 0.5.23 would stop with AssertionError: with --pp-size above 1 only EAGLE (or NEXTN) "
         "speculative decoding works, not NGRAM. Fix: --pp-size 1, or EAGLE/NEXTN.",
         "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding"),
    ]  # fmt: skip
    eagle = ["--pp-size", "2", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1",
             "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2",
             "--speculative-draft-model-path", "d"]  # fmt: skip
    assert errors("0.5.23", *eagle) == [
        ("parallel.pp_speculative_needs_prefill_node", "--pp-size", "AssertionError", s23("158-163"),
         "SGLang 0.5.23 would stop with AssertionError: pipeline parallelism with speculative decoding runs "
         "only on PD prefill nodes (--disaggregation-mode prefill) unless SGLANG_ENABLE_PP_SPEC=1. Fix: "
         "--pp-size 1, or one of those.",
         "PP + speculative decoding (MTP) is only supported on prefill nodes (disaggregation-mode=prefill)"),
    ]  # fmt: skip
    assert run("0.5.23", *eagle, "--disaggregation-mode", "prefill").ok
    for yes in ("1", "true", "TRUE", "yes", "y"):
        assert run("0.5.23", *eagle, env={"SGLANG_ENABLE_PP_SPEC": yes}).ok, yes
    for no in ("0", "false", "no", ""):
        assert error_ids("0.5.23", *eagle, env={"SGLANG_ENABLE_PP_SPEC": no}) == [
            "parallel.pp_speculative_needs_prefill_node"
        ], no
    # DSPARK takes its own path (prefill nodes only, which the rules leave to SGLang): not EAGLE's
    assert run(
        "0.5.23", "--pp-size", "2", "--speculative-algorithm", "DSPARK", "--disaggregation-mode", "prefill"
    ).ok
    # one pipeline stage: no rule at all
    assert run("0.5.23", *eagle[2:]).ok
    assert run("0.5.23", "--speculative-algorithm", "NGRAM").ok


# -- scheduling (check_server_args) ----------------------------------------------------------------------


def test_priority_scheduling_takes_fcfs_or_lof_only() -> None:
    for sglang, source in (("0.5.11", s11("6862-6866")), ("0.5.23", s23("282-287"))):
        assert errors(sglang, "--enable-priority-scheduling", "--schedule-policy", "lpm") == [
            ("schedule.priority_policy", "--schedule-policy", "AssertionError", source,
             "SGLang would stop with AssertionError: priority scheduling works with --schedule-policy fcfs or "
             "lof, not lpm. Fix: one of those, or no --enable-priority-scheduling.",
             "To use priority scheduling, schedule_policy must be 'fcfs' or 'lof'. 'lpm' is not supported."),
        ]  # fmt: skip
        assert run(sglang, "--enable-priority-scheduling").ok  # fcfs, the default
        assert run(sglang, "--enable-priority-scheduling", "--schedule-policy", "fcfs").ok
        assert run(sglang, "--enable-priority-scheduling", "--schedule-policy", "lof").ok
        assert run(sglang, "--schedule-policy", "lpm").ok
        [marked] = run(sglang, "--enable-priority-scheduling", "--schedule-policy", "random").errors
        assert marked.flag == "--schedule-policy"


def test_schedule_conservativeness_must_not_be_negative() -> None:
    for sglang, source in (("0.5.11", s11("6914-6916")), ("0.5.23", s23("314-316"))):
        assert errors(sglang, "--schedule-conservativeness", "-0.5") == [
            ("schedule.conservativeness_negative", "--schedule-conservativeness", "AssertionError", source,
             "SGLang would stop with AssertionError: --schedule-conservativeness -0.5 is negative. Fix: 0 or "
             "more (1.0 is the default; lower admits requests more eagerly).",
             "schedule_conservativeness must be non-negative"),
        ]  # fmt: skip
        assert run(sglang, "--schedule-conservativeness", "0").ok
        assert run(sglang, "--schedule-conservativeness", "0.3").ok
