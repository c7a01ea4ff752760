"""`gdnconsole check` run as a user would (issue 5 §4): options, JSON shape, exit codes, a host's facts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.test_config_cmds import GDNCONSOLE

TOPK_NO_STEPS = ["--model-path", "Qwen/Qwen3.6-27B", "--speculative-algorithm", "NEXTN",
                 "--speculative-eagle-topk", "1", "--mamba-scheduler-strategy", "extra_buffer"]  # fmt: skip


def run(*args: str, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GDNCONSOLE_CONFIG": str(config or "/nonexistent/hosts.toml")}
    return subprocess.run([GDNCONSOLE, "check", *args], env=env, capture_output=True, text=True, timeout=60)


def test_rule_failure_json_and_exit_1() -> None:
    result = run(
        "--sglang", "0.5.11", "--compute-capability", "8.6", "--gpus", "2", "--json", "--", *TOPK_NO_STEPS
    )
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"ok", "sglang", "errors", "notices", "argv"}
    assert data["ok"] is False and data["sglang"] == "0.5.11" and data["argv"] == TOPK_NO_STEPS
    (error,) = data["errors"]
    assert set(error) == {"id", "flag", "message", "source"}
    assert error["id"] == "spec.topk_without_steps" and error["flag"] == "--speculative-eagle-topk"
    assert all(set(n) == {"id", "message"} for n in data["notices"])


def test_ok_exit_0_and_human_output() -> None:
    argv = [*TOPK_NO_STEPS, "--speculative-num-steps", "1"]
    result = run("--sglang", "0.5.11", "--", *argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("SGLang 0.5.11: ok") and "notice [spec.nextn_is_eagle]" in result.stdout


def test_usage_errors_exit_2() -> None:
    assert run("--", *TOPK_NO_STEPS).returncode == 2
    assert run("--sglang", "0.5.11").returncode == 2
    assert run("--host", "a", "--sglang", "0.5.11", "--", *TOPK_NO_STEPS).returncode == 2


def test_architecture_from_a_local_config_json(tmp_path: Path) -> None:
    model = tmp_path / "plain-name"
    model.mkdir()
    (model / "config.json").write_text('{"architectures": ["Qwen3NextForCausalLM"]}')
    argv = ["--model-path", str(model), "--speculative-algorithm", "NEXTN"]
    data = json.loads(run("--sglang", "0.5.11", "--json", "--", *argv).stdout)
    assert data["errors"][0]["id"] == "mamba.speculative_needs_extra_buffer"  # hybrid, known from config.json


def test_version_and_gpus_from_a_simulated_host(tmp_path: Path) -> None:
    config = tmp_path / "hosts.toml"
    config.write_text(
        f'[hosts.box]\nlocal = true\npython = "{sys.executable}"\n'
        f'simulate = {{ speed = 50.0, sglang = "0.5.23", home = "{tmp_path / "sim"}" }}\n'
    )
    argv = [
        "--model-path",
        "meta-llama/Llama-3.1-8B",
        "--speculative-algorithm",
        "EAGLE",
        "--attention-backend",
        "trtllm_mha",
    ]
    result = run("--host", "box", "--json", "--", *argv, config=config)
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["sglang"] == "0.5.23" and data["errors"][0]["id"] == "attention.trtllm_mha_prefill_hardware"
