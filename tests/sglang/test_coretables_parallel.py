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


def test_dp_attention_with_a_dp_size_of_zero_is_sglangs_zero_division_not_a_crash() -> None:
    assert errors("0.5.11", "--dp", "0", "--enable-dp-attention") == [
        ("parallel.attention_dp_size_zero", "--dp", "ZeroDivisionError", s11("2933-2940"),
         "SGLang 0.5.11 would stop with ZeroDivisionError: data-parallel attention with a DP size of 0 divides "
         "the tensor-parallel size by zero. Fix: a DP size of 1 or more that divides --tp.",
         "integer modulo by zero"),
    ]  # fmt: skip
    # 0.5.23 reads it as --attn-dp-size 0, which is no attention DP at all
    assert run("0.5.23", "--dp", "0", "--enable-dp-attention").ok
    assert run("0.5.23", "--attn-dp-size", "0").ok
