"""The way to stay current (tests/tools/sglang_agreement.py, issue 17): its command lines, its counting, and
the whole procedure run as a user runs it. Against the simulator's stand-in SGLang always; against real
SGLang from a wheel when one is prepared (tests/tools/README-agreement.md says how), else skipped."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tests/tools/sglang_agreement.py"


def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sglang_agreement", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_command_lines_are_seeded_and_in_the_versions_spelling() -> None:
    agreement = tool()
    old, again, new = (agreement.generate(v, 200, 5) for v in ("0.5.11", "0.5.11", "0.5.23"))
    assert old == again and len(old) == 200
    flags = {word for case in old for word in case.flags if word.startswith("--")}
    assert "--mamba-scheduler-strategy" in flags and "--attn-dp-size" not in flags
    flags = {word for case in new for word in case.flags if word.startswith("--")}
    assert "--mamba-radix-cache-strategy" in flags and "--attn-dp-size" in flags


def test_moe_lines_put_expert_flags_on_moe_models_only() -> None:
    agreement = tool()
    plain, moe, again = (
        agreement.generate("0.5.23", 200, 5),
        agreement.generate("0.5.23", 200, 5, moe=True),
        agreement.generate("0.5.23", 200, 5, moe=True),
    )
    assert moe == again and [c.persona for c in moe] == [c.persona for c in plain]
    expert = ("--moe-a2a-backend", "--moe-runner-backend", "--enable-eplb", "--moe-dense-tp-size")
    for case in moe:
        if any(flag in case.flags for flag in expert):
            assert case.model in agreement.MOE_MODELS, case
    flags = {word for case in moe for word in case.flags if word.startswith("--")}
    assert {"--schedule-conservativeness", "--enable-priority-scheduling", "--mem-fraction-static"} <= flags
    assert {"--ep", "--expert-parallel-size", "--cuda-graph-bs-decode"} <= flags
    assert "--cuda-graph-bs" not in flags  # 0.5.23 has only the -decode/-prefill spellings
    old = {w for c in agreement.generate("0.5.11", 200, 5, moe=True) for w in c.flags if w.startswith("--")}
    assert "--cuda-graph-bs" in old


def test_counting() -> None:
    agreement = tool()
    cases = agreement.generate("0.5.11", 4, 1)
    ours = [{"ok": True}, {"ok": False, "raises": "ValueError", "id": "x", "message": None}, {"ok": True}]
    ours.append({"ok": False, "raises": "AssertionError", "id": "y", "message": ""})
    theirs = [
        {"ok": True},
        {"ok": False, "exception": "ValueError", "message": "m"},
        {"ok": False, "exception": "AssertionError", "message": ""},
        {"ok": False, "harness": True, "exception": "ImportError", "message": "no torch"},
    ]
    summary = agreement.compare(cases, ours, theirs)
    assert summary["counts"] == {
        "compared": 3,
        "agree": 2,
        "both_reject": 1,
        "same_exception": 1,
        "raised": 1,
        "same_text": 0,  # ours said None, SGLang "m"
        "false_accept": 1,
        "harness": 1,
    }
    (disagreement,) = summary["disagreements"]
    assert disagreement["case"][:2] == [cases[2].persona, cases[2].model]
    text = agreement.report("0.5.11", summary)
    assert "agree on the verdict: 2 (66.7%)" in text and "false accepts (we say ok, SGLang stops): 1" in text


def run_tool(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


def test_the_procedure_end_to_end_against_the_simulator(tmp_path: Path) -> None:
    """The simulator's stand-in SGLang takes the place of the wheel: same worker, same comparison."""
    out = tmp_path / "summary.json"
    args = (
        "--sglang",
        "0.5.11",
        "--wheel",
        str(ROOT / "gdnconsole/sim"),
        "--count",
        "12",
        "--json",
        str(out),
    )
    result = run_tool(*args, env={"GDNSIM_HOME": str(tmp_path / "sim")})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("SGLang 0.5.11: 12 command lines compared (0 left out: harness)\n")
    counts = json.loads(out.read_text())["counts"]
    assert (
        counts["compared"] == 12
        and counts["agree"] + counts.get("false_accept", 0) + counts.get("false_reject", 0) == 12
    )


PREPARED = os.environ.get("GDN_SGLANG_DIR")  # what tests/tools/sglang_venv.sh made


@pytest.mark.skipif(not PREPARED, reason="set GDN_SGLANG_DIR to a folder made by tests/tools/sglang_venv.sh")
@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
@pytest.mark.parametrize("moe", [False, True], ids=["plain", "moe"])
def test_agreement_with_real_sglang(version: str, moe: bool, tmp_path: Path) -> None:
    """The measured agreement stays whole on a seeded set: a rule change that breaks it shows here."""
    prepared = Path(str(PREPARED))
    wheel = prepared / ("u" + version.replace(".", "")[1:])
    extra = ["--extra-path", str(prepared / "tf519")] if version == "0.5.23" else []
    out = tmp_path / "summary.json"
    python = str(prepared / "venv/bin/python")
    result = run_tool(
        *("--sglang", version, "--wheel", str(wheel), "--python", python, *extra),
        *("--count", "60", "--json", str(out)),
        *(["--moe"] if moe else []),
    )
    assert result.returncode == 0, result.stderr
    counts = json.loads(out.read_text())["counts"]
    assert counts.get("false_accept", 0) == 0 and counts.get("false_reject", 0) == 0, result.stdout
