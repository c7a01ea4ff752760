"""SGLang picks num steps, topk and draft tokens itself only when none of the three is given: with topk or
draft tokens but no num steps it stops at a bare assert first (511 server_args.py:3518-3529; 523
arg_groups/speculative_hook.py:1159-1175), so the checker must not also say it would choose them
(issue 26)."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.rules import check

QWEN3 = ["--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE"]


@pytest.mark.parametrize("sglang", ["0.5.11", "0.5.23"])
@pytest.mark.parametrize(
    "given",
    [["--speculative-eagle-topk", "2"], ["--speculative-num-draft-tokens", "4"]],
    ids=["topk", "draft-tokens"],
)
def test_topk_without_steps_is_the_assert_and_no_auto_choice(sglang: str, given: list[str]) -> None:
    result = check([*QWEN3, *given], sglang=sglang, compute_capability="9.0", gpus=1)
    assert [e.id for e in result.errors][:1] == ["spec.topk_without_steps"]
    assert "spec.auto_params" not in [n.id for n in result.notices]


@pytest.mark.parametrize("sglang", ["0.5.11", "0.5.23"])
def test_none_of_the_three_is_chosen_by_sglang(sglang: str) -> None:
    result = check(QWEN3, sglang=sglang, compute_capability="9.0", gpus=1)
    assert result.ok
    notice = next(n for n in result.notices if n.id == "spec.auto_params")
    assert "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4" in (
        notice.message
    )


@pytest.mark.parametrize("sglang", ["0.5.11", "0.5.23"])
def test_steps_alone_is_not_chosen_either(sglang: str) -> None:
    result = check([*QWEN3, "--speculative-num-steps", "2"], sglang=sglang, compute_capability="9.0", gpus=1)
    assert [e.id for e in result.errors][:1] == ["spec.steps_without_topk"]
    assert "spec.auto_params" not in [n.id for n in result.notices]


def test_the_flag_forms_fields_show_the_assert_alone() -> None:
    """What the form lists per field (ui/models/flagcheck.findings_by_field): the error, no auto choice."""
    from gdnconsole.ui.models.flagcheck import findings_by_field

    result = check(
        [*QWEN3, "--speculative-eagle-topk", "2"], sglang="0.5.23", compute_capability="9.0", gpus=1
    )
    shown = findings_by_field([*result.errors, *result.notices])
    ids = [f.id for findings in shown.values() for f in findings]
    assert "spec.topk_without_steps" in ids and "spec.auto_params" not in ids
