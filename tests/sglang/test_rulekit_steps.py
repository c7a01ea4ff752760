"""Rules and resolutions run in a table's order (rulekit.run_steps): which flag a finding marks, what a
resolution changes for the rules after it, errors kept once each, notices that change values, and the
first error marked as the one SGLang raises."""

from __future__ import annotations

from gdnconsole.sglang.findings import Finding, Severity
from gdnconsole.sglang.flags import parse_argv
from gdnconsole.sglang.rulekit import (
    Ctx,
    Resolve,
    Rule,
    Step,
    context,
    flag_for,
    mamba_option,
    mark_first,
    run_steps,
)

QWEN3 = ["--model-path", "Qwen/Qwen3-8B"]


def ctx_of(argv: list[str], sglang: str = "0.5.23") -> Ctx:
    return context(parse_argv(argv, sglang), sglang, compute_capability=None, architecture=None, env=None)


def rule(
    id: str,
    severity: Severity = "error",
    *,
    flags: tuple[str, ...] = ("page_size",),
    when: bool = True,
    message: str = "msg",
    **kw: object,
) -> Rule:
    return Rule(
        id=id,
        flags=flags,
        severity=severity,
        when=lambda c: when,
        message=lambda c: message,
        source="here.py:1",
        **kw,  # type: ignore[arg-type]
    )


def finding(id: str, severity: Severity = "error", first: bool = False) -> Finding:
    return Finding(id=id, flag=None, message="m", source="s", severity=severity, sglang_first=first)


# -- which flag a finding marks -------------------------------------------------------------------------------


def test_a_rule_marks_the_first_of_its_flags_the_argv_sets_as_typed() -> None:
    ctx = ctx_of([*QWEN3, "--tp", "2", "--ep", "2"])
    assert rule("r", flags=("page_size", "ep_size", "tp_size")).marked_flag(ctx) == "--ep"
    assert rule("r", flags=("tp_size", "ep_size")).marked_flag(ctx) == "--tp"


def test_a_rule_whose_flags_are_all_unset_marks_the_first_in_this_versions_spelling() -> None:
    ctx = ctx_of(QWEN3)
    assert rule("r", flags=("fp8_gemm_runner_backend", "page_size")).marked_flag(ctx) == "--fp8-gemm-backend"
    assert rule("r", flags=("page_size", "fp8_gemm_runner_backend")).marked_flag(ctx) == "--page-size"


def test_a_rule_without_flags_marks_none() -> None:
    assert rule("r", flags=()).marked_flag(ctx_of(QWEN3)) is None


def test_mamba_strategys_flag_is_this_versions_spelling() -> None:
    assert mamba_option("0.5.11") == "--mamba-scheduler-strategy"
    assert mamba_option("0.5.13") == "--mamba-scheduler-strategy"
    assert mamba_option("0.5.14") == "--mamba-radix-cache-strategy"
    assert mamba_option("0.5.23") == "--mamba-radix-cache-strategy"
    assert flag_for(ctx_of(QWEN3, "0.5.11"), "mamba_strategy") == "--mamba-scheduler-strategy"
    assert flag_for(ctx_of(QWEN3, "0.5.23"), "mamba_strategy") == "--mamba-radix-cache-strategy"


def test_flag_for_prefers_the_flag_as_typed() -> None:
    ctx = ctx_of([*QWEN3, "--mamba-radix-cache-strategy", "auto", "--tensor-parallel-size", "2"])
    assert flag_for(ctx, "tp_size") == "--tensor-parallel-size"
    assert flag_for(ctx, "mamba_strategy") == "--mamba-radix-cache-strategy"


def test_flag_for_an_unset_flag_is_its_first_option_in_this_version() -> None:
    ctx = ctx_of(QWEN3, "0.5.11")
    assert flag_for(ctx, "tensor_parallel_size") == "--tensor-parallel-size"
    assert flag_for(ctx, "fp8_gemm_runner_backend") == "--fp8-gemm-backend"
    assert flag_for(ctx, "incremental_streaming_output") == "--incremental-streaming-output"


def test_flag_for_a_value_this_version_has_no_flag_for_is_spelt_from_its_name() -> None:
    assert flag_for(ctx_of(QWEN3, "0.5.11"), "tp_size") == "--tp-size"
    assert flag_for(ctx_of(QWEN3), "chunked_prefill_candidates") == "--chunked-prefill-candidates"


# -- findings ---------------------------------------------------------------------------------------------------


def test_a_rules_finding_carries_its_id_flag_message_source_severity_and_exception() -> None:
    ctx = ctx_of([*QWEN3, "--page-size", "16"])
    r = Rule(
        id="memory.page",
        flags=("page_size",),
        severity="error",
        when=lambda c: True,
        message=lambda c: f"page {c.page_size}",
        source="srt/server_args.py:10 (0.5.23)",
        raises="ValueError",
        sglang_text=lambda c: f"bad page {c.page_size}",
    )
    assert r.finding(ctx) == Finding(
        id="memory.page",
        flag="--page-size",
        message="page 16",
        source="srt/server_args.py:10 (0.5.23)",
        severity="error",
        raises="ValueError",
        sglang_text="bad page 16",
        sglang_first=False,
    )


def test_a_rule_without_sglangs_text_has_none() -> None:
    f = rule("r", "notice").finding(ctx_of(QWEN3))
    assert (f.raises, f.sglang_text, f.severity, f.message) == (None, None, "notice", "msg")


def test_a_bare_assert_has_empty_text_not_none() -> None:
    f = rule("r", raises="AssertionError", sglang_text=lambda c: "").finding(ctx_of(QWEN3))
    assert (f.raises, f.sglang_text) == ("AssertionError", "")


# -- run_steps ----------------------------------------------------------------------------------------------


def test_rules_that_do_not_apply_find_nothing() -> None:
    assert run_steps([rule("a", when=False), rule("b", "notice", when=False)], ctx_of(QWEN3)) == ([], [])


def test_errors_and_notices_come_back_apart_each_in_table_order() -> None:
    steps: list[Step] = [rule("e1"), rule("n1", "notice"), rule("e2"), rule("n2", "notice")]
    errors, notices = run_steps(steps, ctx_of(QWEN3))
    assert [e.id for e in errors] == ["e1", "e2"]
    assert [n.id for n in notices] == ["n1", "n2"]
    assert all(e.severity == "error" for e in errors) and all(n.severity == "notice" for n in notices)


def test_an_error_found_twice_is_reported_once_at_its_first_place() -> None:
    steps: list[Step] = [rule("a", message="first"), rule("b"), rule("a", message="again"), rule("c")]
    errors, _ = run_steps(steps, ctx_of(QWEN3))
    assert [(e.id, e.message) for e in errors] == [("a", "first"), ("b", "msg"), ("c", "msg")]


def test_a_notice_found_twice_is_reported_twice() -> None:
    _, notices = run_steps([rule("n", "notice"), rule("n", "notice")], ctx_of(QWEN3))
    assert [n.id for n in notices] == ["n", "n"]


def test_a_resolution_changes_what_the_rules_after_it_read() -> None:
    ctx = ctx_of(QWEN3)
    steps: list[Step] = [
        Rule("before", ("page_size",), "error", lambda c: c.page_size == 64, lambda c: "x", "s"),
        Resolve("pages", lambda c: c.set(page_size=64), "s"),
        Rule("after", ("page_size",), "error", lambda c: c.page_size == 64, lambda c: "x", "s"),
    ]
    errors, notices = run_steps(steps, ctx)
    assert [e.id for e in errors] == ["after"] and notices == []
    assert ctx.page_size == 64


def test_a_resolution_applies_always_unless_its_condition_says_otherwise() -> None:
    ctx = ctx_of(QWEN3)
    run_steps(
        [
            Resolve("always", lambda c: c.set(page_size=1), "s"),
            Resolve("never", lambda c: c.set(tp_size=9), "s", when=lambda c: False),
        ],
        ctx,
    )
    assert (ctx.page_size, ctx.tp_size) == (1, 1)


def test_a_notice_that_applies_makes_its_change() -> None:
    ctx = ctx_of(QWEN3)
    steps: list[Step] = [
        rule("n", "notice", then=lambda c: c.set(page_size=32)),
        Rule("seen", (), "error", lambda c: c.page_size == 32, lambda c: "x", "s"),
    ]
    errors, notices = run_steps(steps, ctx)
    assert [n.id for n in notices] == ["n"] and [e.id for e in errors] == ["seen"]
    assert ctx.page_size == 32


def test_a_notice_that_does_not_apply_changes_nothing() -> None:
    ctx = ctx_of(QWEN3)
    run_steps([rule("n", "notice", when=False, then=lambda c: c.set(page_size=32))], ctx)
    assert ctx.page_size is None


def test_an_error_changes_nothing_even_with_a_change_attached() -> None:
    ctx = ctx_of(QWEN3)
    errors, notices = run_steps([rule("e", then=lambda c: c.set(page_size=32))], ctx)
    assert [e.id for e in errors] == ["e"] and notices == []
    assert ctx.page_size is None


# -- mark_first ---------------------------------------------------------------------------------------------


def test_only_the_first_error_is_marked_as_sglangs() -> None:
    marked = mark_first([finding("a", first=False), finding("b", first=True), finding("c", first=True)])
    assert [(f.id, f.sglang_first) for f in marked] == [("a", True), ("b", False), ("c", False)]


def test_marking_keeps_everything_else_and_no_errors_mark_nothing() -> None:
    original = finding("a")
    (marked,) = mark_first([original])
    assert marked == Finding(id="a", flag=None, message="m", source="s", severity="error", sglang_first=True)
    assert original.sglang_first is False
    assert mark_first([]) == []
