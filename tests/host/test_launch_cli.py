"""`gdnconsole launch` / `stop` as a script runs them: a hosts file, a simulated local host, JSON out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.host.launchkit import kill_group
from tests.host.test_session import free_port

GDNCONSOLE = [sys.executable, "-m", "gdnconsole"]


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "hosts.toml"
    config.write_text(
        f"""
[hosts.simbox]
local = true
python = "{sys.executable}"

[hosts.simbox.simulate]
speed = 50.0
release_lag_s = 0.0
home = "{tmp_path / "simhome"}"

[hosts.simbox.profiles.final]
model = "Qwen/Qwen3.6-27B"
tp = 2
port = {free_port()}
args = ["--mamba-scheduler-strategy", "extra_buffer"]

[hosts.simbox.profiles.final.speculative]
algorithm = "NEXTN"
num_steps = 1
eagle_topk = 1
num_draft_tokens = 2
"""
    )
    env = dict(os.environ)
    env.update({"GDNCONSOLE_CONFIG": str(config), "GDNCONSOLE_JOURNAL_DIR": str(tmp_path / "journal")})
    return env


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GDNCONSOLE, *args], env=env, capture_output=True, text=True, timeout=90)


def test_launch_json_then_stop(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = run(
        cli_env, "launch", "simbox", "--json", "--set", "env.SGLANG_ENABLE_SPEC_V2=1", "--timeout", "30"
    )
    payload = json.loads(done.stdout)
    pid = None
    try:
        assert done.returncode == 0, done.stderr
        assert set(payload) == {
            "attempt",
            "argv",
            "env",
            "outcome",
            "stage",
            "fatal",
            "rule",
            "durations",
            "verify",
        }
        assert (payload["attempt"], payload["outcome"], payload["fatal"], payload["rule"]) == (
            1,
            "ready",
            None,
            None,
        )
        assert payload["env"] == {"SGLANG_ENABLE_SPEC_V2": "1"}
        server = json.loads((tmp_path / "simhome" / ".gdnconsole-server.json").read_text())
        pid = server["pid"]
        stopped = run(cli_env, "stop", "simbox", "--json")
        assert stopped.returncode == 0, stopped.stderr
        assert json.loads(stopped.stdout) | {"elapsed": 0} == {
            "stopped": True,
            "pid": pid,
            "pgid": pid,
            "how": "sigterm",
            "elapsed": 0,
        }
    finally:
        if pid:
            kill_group(pid)
    again = run(cli_env, "stop", "simbox", "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["stopped"] is False


def test_a_rejected_profile_exits_1_with_the_rule(cli_env: dict[str, str]) -> None:
    done = run(cli_env, "launch", "simbox", "--json", "--set", "speculative.num_steps=")
    payload = json.loads(done.stdout)
    assert done.returncode == 1 and payload["outcome"] == "rejected" and payload["rule"]["id"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "speculative.topk=1"], "unknown key"),
        (["--set", "tp=two"], "expected an integer"),
        (["--set", "mem_fraction=1.5"], "(0, 1]"),
        (["--set", "noequals"], "KEY=VALUE"),
        (["--profile", "nope"], "no profile 'nope'"),
    ],
)
def test_usage_errors_exit_2(cli_env: dict[str, str], args: list[str], message: str) -> None:
    done = run(cli_env, "launch", "simbox", *args)
    assert done.returncode == 2 and message in done.stderr
