"""The agreement tool's command lines beyond speculation (``--beyond``, issue 26): what operators type for
parallelism (data parallelism without attention DP, with --attn-dp-size, the DP LM head, two-batch
overlap), memory, backends, quantization against the checkpoint's own, LoRA, disaggregation with the
hierarchical cache, parsers, log levels, deterministic inference and context lengths against the model's,
on dense, MoE, MLA and GPT-OSS-like checkpoints; and, with a prepared wheel, the agreement on them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.sglang.test_agreement_tool import run_tool, tool


def flags_of(cases: list[object]) -> set[str]:
    return {word for case in cases for word in case.flags if word.startswith("--")}  # type: ignore[attr-defined]


def test_beyond_lines_are_seeded_and_draw_what_operators_type() -> None:
    agreement = tool()
    new, again = (
        agreement.generate("0.5.23", 300, 5, beyond=True),
        agreement.generate("0.5.23", 300, 5, beyond=True),
    )
    assert new == again and len(new) == 300
    wanted = {
        "--dp", "--enable-dp-attention", "--attn-dp-size", "--enable-dp-lm-head", "--enable-two-batch-overlap",
        "--context-length", "--quantization", "--enable-lora", "--lora-paths", "--max-loaded-loras",
        "--disaggregation-mode", "--enable-hierarchical-cache", "--tool-call-parser", "--reasoning-parser",
        "--log-level", "--enable-deterministic-inference", "--attention-backend",
    }  # fmt: skip
    assert wanted <= flags_of(new)
    models = {case.model for case in new}
    assert {"llama", "qwen3-moe", "deepseek-v3-fp8", "gpt-oss", "qwen3-fp8", "llama-awq"} <= models
    # data parallelism without attention DP, alone and with --attn-dp-size (the combination 0.5.23 refuses)
    plain_dp = [c.flags for c in new if "--dp" in c.flags and "--enable-dp-attention" not in c.flags]
    assert plain_dp and any("--attn-dp-size" in f for f in plain_dp)


def test_0_5_11_beyond_lines_never_name_0_5_23s_flags() -> None:
    old = tool().generate("0.5.11", 300, 5, beyond=True)
    assert "--attn-dp-size" not in flags_of(old) and "--dp" in flags_of(old)


def test_checkpoints_carry_their_own_quantization_and_length() -> None:
    models = tool().ALL_MODELS
    assert models["gpt-oss"]["quantization_config"]["quant_method"] == "mxfp4"
    assert models["deepseek-v3-fp8"]["quantization_config"]["quant_method"] == "fp8"
    assert models["llama-awq"]["max_position_embeddings"] == 8192


PREPARED = os.environ.get("GDN_SGLANG_DIR")  # what tests/tools/sglang_venv.sh made


@pytest.mark.skipif(not PREPARED, reason="set GDN_SGLANG_DIR to a folder made by tests/tools/sglang_venv.sh")
@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_agreement_beyond_speculation_with_real_sglang(version: str, tmp_path: Path) -> None:
    prepared = Path(str(PREPARED))
    wheel = prepared / ("u" + version.replace(".", "")[1:])
    extra = ["--extra-path", str(prepared / "tf519")] if version == "0.5.23" else []
    out = tmp_path / "summary.json"
    result = run_tool(
        *("--sglang", version, "--wheel", str(wheel), "--python", str(prepared / "venv/bin/python"), *extra),
        *("--count", "60", "--seed", "3", "--beyond", "--json", str(out)),
    )
    assert result.returncode == 0, result.stderr
    counts = json.loads(out.read_text())["counts"]
    assert counts.get("false_accept", 0) == 0 and counts.get("false_reject", 0) == 0, result.stdout
