"""`gdnconsole launch` / `stop` as a script runs them: a hosts file, a simulated local host, JSON out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gdnconsole.config import hosts as config_hosts
from tests.host.launchkit import kill_group, sim_hosts_file, start_by_hand

GDNCONSOLE = [sys.executable, "-m", "gdnconsole"]


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    config = sim_hosts_file(tmp_path)
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
        pidfile = tmp_path / "simhome" / ".gdnconsole-server.json"
        server = json.loads(pidfile.read_text())
        pid = server["pid"]
        assert pidfile.stat().st_mode & 0o777 == 0o600  # it holds the command line: its owner's only
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
    again = run(cli_env, "stop", "simbox", "--json")  # stop is idempotent: nothing running is no error
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == {
        "stopped": False,
        "running": False,
        "message": "nothing to stop: no server gdnconsole launched or adopted runs on simbox",
    }


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


@pytest.fixture
def by_hand(cli_env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A server started on the simulated host by hand (nohup style), not by gdnconsole."""
    host = config_hosts.load(Path(cli_env["GDNCONSOLE_CONFIG"])).hosts["simbox"]
    assert host.profile is not None
    proc = start_by_hand(host, port=host.profile.port, append=False)
    try:
        yield proc
    finally:
        kill_group(proc.pid)
        proc.wait()


def test_adopt_makes_a_server_started_by_hand_ours_to_stop(
    cli_env: dict[str, str], by_hand: subprocess.Popen[bytes]
) -> None:
    refused = run(cli_env, "stop", "simbox")
    assert refused.returncode == 1
    assert f"gdnconsole adopt simbox --pid {by_hand.pid}" in refused.stderr  # says how, stops nothing
    assert by_hand.poll() is None

    asked = run(cli_env, "adopt", "simbox")  # no terminal to ask on: refuses rather than assume yes
    assert asked.returncode == 2 and "--yes" in asked.stderr

    adopted = run(cli_env, "adopt", "simbox", "--yes", "--json")
    assert adopted.returncode == 0, adopted.stderr
    assert json.loads(adopted.stdout) == {"adopted": True, "pid": by_hand.pid}
    again = run(cli_env, "adopt", "simbox", "--yes")
    assert again.returncode == 0 and "gdnconsole's already" in again.stdout  # nothing to do: no failure

    stopped = run(cli_env, "stop", "simbox", "--json")
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(stopped.stdout)["stopped"] is True and json.loads(stopped.stdout)["pid"] == by_hand.pid
    assert by_hand.wait(timeout=30) is not None


def test_adopt_with_no_server_says_so(cli_env: dict[str, str]) -> None:
    done = run(cli_env, "adopt", "simbox", "--yes", "--pid", "999999")
    assert done.returncode == 1 and "no SGLang server with pid 999999 runs on simbox" in done.stderr


def test_a_log_in_a_missing_directory_is_refused_in_one_line_and_journaled(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    config = Path(cli_env["GDNCONSOLE_CONFIG"])
    missing = tmp_path / "no-such-dir" / "serve.log"
    config.write_text(config.read_text().replace("local = true\n", f'local = true\nlog = "{missing}"\n', 1))
    done = run(cli_env, "launch", "simbox", "--timeout", "30")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "no-such-dir does not exist" in errors[0], done.stderr
    journal = tmp_path / "journal" / "simbox.jsonl"
    attempts = [json.loads(line) for line in journal.read_text().splitlines()]
    assert attempts[-1]["outcome"] == "refused" and "no-such-dir" in attempts[-1]["fatal"]["summary"]
