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
    assert set(data) == {"ok", "sglang", "rule_set", "warnings", "errors", "notices", "argv"}
    assert data["ok"] is False and data["sglang"] == "0.5.11" and data["argv"] == TOPK_NO_STEPS
    assert data["rule_set"] == "0.5.11" and data["warnings"] == []
    (error,) = data["errors"]
    assert set(error) == {"id", "flag", "message", "source", "sglang_first"}
    assert error["id"] == "spec.topk_without_steps" and error["flag"] == "--speculative-eagle-topk"
    assert error["sglang_first"] is True
    assert all(set(n) == {"id", "message"} for n in data["notices"])


def test_ok_exit_0_and_human_output() -> None:
    argv = [*TOPK_NO_STEPS, "--speculative-num-steps", "1"]
    result = run("--sglang", "0.5.11", "--", *argv)
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout.startswith("SGLang 0.5.11 (rule set 0.5.11): ok")
        and "notice [spec.nextn_is_eagle]" in result.stdout
    )


def test_usage_errors_exit_2() -> None:
    assert run("--", *TOPK_NO_STEPS).returncode == 2
    assert run("--sglang", "0.5.11").returncode == 2
    assert run("--host", "a", "--sglang", "0.5.11", "--", *TOPK_NO_STEPS).returncode == 2


def test_a_version_that_is_not_one_exits_2() -> None:
    result = run("--sglang", "foo", "--", *TOPK_NO_STEPS)
    assert result.returncode == 2 and result.stdout == ""
    assert "'foo' is not an SGLang version" in result.stderr
    gpu = run("--sglang", "0.5.11", "--compute-capability", "sm86", "--", *TOPK_NO_STEPS)
    assert gpu.returncode == 2 and gpu.stderr == (
        "gdnconsole: error: --compute-capability: 'sm86' is not a compute capability: write it as MAJOR.MINOR, "
        "e.g. 8.6\n"
    )


def test_versions_outside_the_rule_sets_are_checked_with_the_nearest_and_say_so() -> None:
    argv = ["--model-path", "Qwen/Qwen3-8B"]
    newer = json.loads(run("--sglang", "0.6.0", "--json", "--", *argv).stdout)
    assert newer["ok"] and newer["rule_set"] == "0.5.23"
    assert newer["warnings"] == [
        "SGLang 0.6.0 is newer than the newest rule set (0.5.23): checked with 0.5.23's rules, which may "
        "not match what 0.6.0 does."
    ]
    older = run("--sglang", "0.4.9", "--", *argv)
    assert older.stdout.startswith("SGLang 0.4.9 (rule set 0.5.11): ok\nwarning: SGLang 0.4.9 is older than")
    between = json.loads(run("--sglang", "0.5.15", "--json", "--", *argv).stdout)
    assert between["rule_set"] == "0.5.11" and between["warnings"] == []


def test_every_error_at_once_first_marked() -> None:
    argv = ["--model-path", "Qwen/Qwen3-8B", "--dp", "3", "--enable-dp-attention", "--page-size", "48",
            "--speculative-num-stpes", "3", "--attention-backend", "trtllm_mla"]  # fmt: skip
    result = run(
        "--sglang", "0.5.11", "--compute-capability", "8.6", "--gpu-memory", "48", "--json", "--", *argv
    )
    assert result.returncode == 1, result.stderr
    errors = json.loads(result.stdout)["errors"]
    assert [e["id"] for e in errors] == [
        "argv.unrecognized",
        "attention.trtllm_mla_hardware",
        "parallel.tp_not_divisible_by_dp",
        "memory.chunked_prefill_page_size",  # trtllm_mla makes the page 64; the chunk is 4096 // 3
    ]
    assert [e["sglang_first"] for e in errors] == [True, False, False, False]
    assert "did you mean --speculative-num-steps?" in errors[0]["message"]
    human = run("--sglang", "0.5.11", "--compute-capability", "8.6", "--", *argv).stdout
    assert "(SGLang stops here first)" in human and human.count("(also, once that is fixed)") >= 2


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
