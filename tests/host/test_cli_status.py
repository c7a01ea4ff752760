"""`gdnconsole status HOST [--json]` run as a user would, against a simulated host over a real sshd."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.test_config_cmds import GDNCONSOLE
from tests.sshhosts import SshdHost

KEYS = {"host", "link", "message", "sglang_version", "nvml", "gpus", "server"}
GPU_KEYS = {"index", "uuid", "name", "total_mib", "used_mib", "util_pct", "rank", "processes", "memory"}


def run(config: Path, *args: str, ssh_config: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GDNCONSOLE_CONFIG": str(config)}
    if ssh_config:
        env["GDNCONSOLE_SSH_CONFIG"] = str(ssh_config)
    return subprocess.run([GDNCONSOLE, "status", *args], env=env, capture_output=True, text=True, timeout=90)


def hosts_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "hosts.toml"
    path.write_text(body)
    return path


def test_simulated_host_over_sshd_by_alias(tmp_path: Path, sshd: SshdHost) -> None:
    home = tmp_path / "sim"
    config = hosts_file(
        tmp_path,
        f'[hosts.box]\nssh = "testbox"\npython = "{sys.executable}"\n'
        f'simulate = {{ speed = 50.0, release_lag_s = 0.0, sglang = "0.5.23", home = "{home}" }}\n',
    )
    result = run(config, "box", "--json", ssh_config=sshd.ssh_config)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == KEYS
    assert data["host"] == "box" and data["link"] == "connected" and data["sglang_version"] == "0.5.23"
    assert data["nvml"] == "pynvml" and len(data["gpus"]) == 2
    assert all(set(gpu) == GPU_KEYS for gpu in data["gpus"])
    human = run(config, "box", ssh_config=sshd.ssh_config)
    assert human.returncode == 0 and "connected" in human.stdout and "NVIDIA RTX A6000" in human.stdout


def test_unreachable_host_exits_3(tmp_path: Path) -> None:
    config = hosts_file(tmp_path, '[hosts.gone]\nssh = "root@127.0.0.1:1"\n')
    result = run(config, "gone", "--json", "--timeout", "60")  # ends when the link fails: at once
    assert result.returncode == 3
    data = json.loads(result.stdout)
    assert data["link"] == "down" and data["gpus"] == [] and data["server"] is None and data["message"]


def test_unknown_host_is_not_accepted_without_a_terminal(tmp_path: Path, sshd: SshdHost) -> None:
    ssh_config = tmp_path / "ssh_config"
    empty = tmp_path / "empty_known_hosts"
    ssh_config.write_text(sshd.ssh_config.read_text().replace(str(sshd.known_hosts), str(empty)))
    config = hosts_file(tmp_path, "")
    result = run(config, "testbox", "--json", ssh_config=ssh_config)
    assert result.returncode == 3
    data = json.loads(result.stdout)
    assert data["link"] == "unknown-host" and "SHA256:" in data["message"]
    assert not empty.exists() or empty.read_text() == ""


def test_config_error_exits_2(tmp_path: Path) -> None:
    config = hosts_file(tmp_path, "[hosts.a]\nssh = 5\n")
    result = run(config, "a", "--json")
    assert result.returncode == 2 and "hosts.a.ssh" in result.stderr and result.stdout == ""
