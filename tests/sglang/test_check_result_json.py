"""The `gdnconsole check --json` object (CheckResult.to_json): every field a script reads, by name."""

from __future__ import annotations

import json

from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.rules import CheckResult, check


def test_the_json_object_holds_each_field_of_the_verdict() -> None:
    first = Finding(
        id="spec.topk_without_steps",
        flag="--speculative-eagle-topk",
        message="set steps",
        source="srt/server_args.py:1 (0.5.11)",
        severity="error",
        raises="AssertionError",
        sglang_text="",
        sglang_first=True,
    )
    second = Finding(
        id="argv.required", flag=None, message="need a model", source="argparse", severity="error"
    )
    notice = Finding(
        id="spec.v2", flag="--speculative-algorithm", message="spec v2", source="s", severity="notice"
    )
    result = CheckResult(
        ok=False,
        sglang="0.5.9",
        errors=[first, second],
        notices=[notice],
        argv=["--speculative-eagle-topk", "1"],
        rule_set="0.5.11",
        warnings=("older than the oldest",),
        values={"page_size": 1},
    )
    assert result.to_json() == {
        "ok": False,
        "sglang": "0.5.9",
        "rule_set": "0.5.11",
        "warnings": ["older than the oldest"],
        "errors": [
            {
                "id": "spec.topk_without_steps",
                "flag": "--speculative-eagle-topk",
                "message": "set steps",
                "source": "srt/server_args.py:1 (0.5.11)",
                "sglang_first": True,
            },
            {
                "id": "argv.required",
                "flag": None,
                "message": "need a model",
                "source": "argparse",
                "sglang_first": False,
            },
        ],
        "notices": [{"id": "spec.v2", "message": "spec v2"}],
        "argv": ["--speculative-eagle-topk", "1"],
    }


def test_a_clean_verdict_has_empty_lists_and_defaults() -> None:
    result = CheckResult(ok=True, sglang="0.5.23", errors=[], notices=[], argv=[])
    assert result.to_json() == {
        "ok": True,
        "sglang": "0.5.23",
        "rule_set": "",
        "warnings": [],
        "errors": [],
        "notices": [],
        "argv": [],
    }
    assert result.values == {}


def test_the_json_of_a_real_check_is_plain_json_and_does_not_share_the_verdicts_lists() -> None:
    argv = [
        "--model-path",
        "Qwen/Qwen3-8B",
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-steps",
        "2",
    ]
    result = check(argv, sglang="0.5.9", compute_capability="8.6")
    data = result.to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["ok"] is False and data["rule_set"] == "0.5.11"
    assert data["errors"][0]["id"] == "spec.steps_without_topk" and data["errors"][0]["sglang_first"] is True
    assert data["warnings"][0].startswith("SGLang 0.5.9 is older than the oldest rule set (0.5.11)")
    assert [n["id"] for n in data["notices"]] == [n.id for n in result.notices]
    data["argv"].append("--extra")
    data["warnings"].clear()
    assert result.argv == argv and len(result.warnings) == 1
