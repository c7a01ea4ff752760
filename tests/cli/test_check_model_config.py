"""`gdnconsole check --host H` and `config check` use the model's config.json as the host holds it (issue
26): the simulated host serves its Qwen3.6-27B's (max_position_embeddings 262144) from its Hugging Face
cache; `check --host` reads it and remembers it, and `config check` then uses the one last seen and says
when the host said so. A damaged config.json is one warning and no finding; an unknown one, no finding."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_config_cmds import GDNCONSOLE

MODEL = "Qwen/Qwen3.6-27B"
HOSTS = """\
[hosts.box]
local = true
python = "{python}"
simulate = {{ sglang = "0.5.23", gpus = 2, home = "{home}" }}

[hosts.far]
ssh = "root@far.invalid"

[hosts.far.profiles.long]
model = "Qwen/Qwen3.6-27B"
args = ["--context-length", "300000"]
"""


@pytest.fixture()
def config(tmp_path: Path) -> Path:
    import sys

    path = tmp_path / "hosts.toml"
    path.write_text(HOSTS.format(python=sys.executable, home=tmp_path / "sim"))
    return path


def run(*args: str, config: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HOME", "HF_HUB_CACHE")}
    env |= {"GDNCONSOLE_CONFIG": str(config), "GDNCONSOLE_JOURNAL_DIR": str(tmp_path / "journal")}
    return subprocess.run([GDNCONSOLE, *args], env=env, capture_output=True, text=True, timeout=120)


def test_check_on_a_host_refuses_a_context_length_above_the_models(config: Path, tmp_path: Path) -> None:
    argv = ["--model-path", MODEL, "--tp", "2", "--context-length", "300000"]
    result = run("check", "--host", "box", "--json", "--", *argv, config=config, tmp_path=tmp_path)
    assert result.returncode == 1, result.stderr
    errors = json.loads(result.stdout)["errors"]
    assert [e["id"] for e in errors] == ["model.context_length_above_model"]
    assert "(262144, from its config.json)" in errors[0]["message"] and errors[0]["sglang_first"]
    fits = run("check", "--host", "box", "--", *argv[:-1], "256k", config=config, tmp_path=tmp_path)
    assert fits.returncode == 0, fits.stdout  # 256000 tokens


def test_config_check_uses_the_config_the_host_last_showed(config: Path, tmp_path: Path) -> None:
    unknown = run("config", "check", "--sglang", "0.5.23", config=config, tmp_path=tmp_path)
    (line,) = [ln for ln in unknown.stdout.splitlines() if ln.startswith("hosts.far.profiles.long: ")]
    assert line.endswith(": ok") and "config.json" not in line  # nothing known: no finding, no guess
    far = config.read_text().replace(
        'ssh = "root@far.invalid"', 'local = true\nsimulate = { sglang = "0.5.23" }'
    )
    (config.parent / "far.toml").write_text(far)
    shown = run("check", "--host", "far", "--", "--model-path", MODEL, config=config.parent / "far.toml",
                tmp_path=tmp_path)  # fmt: skip
    assert shown.returncode == 0, shown.stdout + shown.stderr
    known = run("config", "check", "--sglang", "0.5.23", config=config, tmp_path=tmp_path)
    (line,) = [ln for ln in known.stdout.splitlines() if ln.startswith("hosts.far.profiles.long: ")]
    assert "its model's config.json as the host said at " in line and "would fail (1 error)" in line
    assert "error [model.context_length_above_model] (SGLang stops here first)" in known.stdout


def test_a_damaged_local_config_is_one_warning_and_no_finding(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"max_position_embeddings": 1, "rope_scaling": {"factor": NaN}}')
    argv = ["--model-path", str(model), "--context-length", "300000"]
    result = run("check", "--sglang", "0.5.23", "--json", "--", *argv, config=tmp_path / "none.toml",
                 tmp_path=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout)["ok"] is True
    assert result.stderr.splitlines() == [
        f"warning: the config.json of {model} is unusable (not JSON); its checks were not run"
    ]
    assert "Traceback" not in result.stderr


def test_check_sglang_reads_this_machines_hf_hub_cache(tmp_path: Path) -> None:
    snapshot = tmp_path / "hub" / "models--Qwen--Qwen3.6-27B" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"text_config": {"max_position_embeddings": 262144}}')
    argv = [
        "check",
        "--sglang",
        "0.5.23",
        "--json",
        "--",
        "--model-path",
        MODEL,
        "--context-length",
        "300000",
    ]
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "GDNCONSOLE_CONFIG": str(tmp_path / "n.toml")}
    result = subprocess.run([GDNCONSOLE, *argv], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert [e["id"] for e in json.loads(result.stdout)["errors"]] == ["model.context_length_above_model"]
