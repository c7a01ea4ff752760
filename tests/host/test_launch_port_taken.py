"""A launch on a port another process listens on is refused before anything starts (the startup would
fail only after minutes), in one line naming the port and who holds it; the server a relaunch replaces
may hold it. And a rejected launch says which rule, never a Python repr."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from gdnconsole.config import hosts as config_hosts
from tests.host.launchkit import kill_group
from tests.host.test_launch_cli import cli_env, run

__all__ = ["cli_env"]

LISTENER = (
    "import socket, sys\n"
    "s = socket.socket()\n"
    "s.bind(('127.0.0.1', int(sys.argv[1])))\n"
    "s.listen()\n"
    "print('listening', flush=True)\n"
    "sys.stdin.read()\n"
)


def _port(env: dict[str, str]) -> int:
    host = config_hosts.load(Path(env["GDNCONSOLE_CONFIG"])).hosts["simbox"]
    assert host.profile is not None
    return host.profile.port


def test_a_port_someone_listens_on_refuses_the_launch(cli_env: dict[str, str], tmp_path: Path) -> None:
    port = _port(cli_env)
    holder = subprocess.Popen(
        [sys.executable, "-I", "-c", LISTENER, str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "listening\n"
        done = run(cli_env, "launch", "simbox", "--wait", "started")
        assert done.returncode == 1, (done.stdout, done.stderr)
        error = [line for line in done.stderr.splitlines() if line.startswith("gdnconsole: error:")]
        assert len(error) == 1, done.stderr
        expected = (
            rf"gdnconsole: error: port {port} on simbox \(127\.0\.0\.1\) is held by pid {holder.pid} "
            r"\(python[^)]*\): nothing was started; free it, or give the profile another port"
        )
        assert re.fullmatch(expected, error[0]), error[0]
        assert not (tmp_path / "simhome" / ".gdnconsole-server.json").exists()  # nothing started
        attempts = (tmp_path / "journal" / "simbox.jsonl").read_text().splitlines()
        assert json.loads(attempts[-1])["outcome"] == "refused"
    finally:
        holder.kill()
        holder.wait()


def test_a_relaunch_may_take_the_port_of_the_server_it_replaces(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    first = run(cli_env, "launch", "simbox", "--json", "--timeout", "60")
    server = tmp_path / "simhome" / ".gdnconsole-server.json"
    try:
        assert first.returncode == 0 and json.loads(first.stdout)["outcome"] == "ready", first.stderr
        again = run(cli_env, "launch", "simbox", "--json", "--timeout", "60")
        assert again.returncode == 0 and json.loads(again.stdout)["outcome"] == "ready", again.stderr
    finally:
        if server.exists():
            kill_group(json.loads(server.read_text())["pgid"])


def test_a_rejected_launch_names_its_rule_without_a_repr(cli_env: dict[str, str]) -> None:
    config = Path(cli_env["GDNCONSOLE_CONFIG"])
    config.write_text(config.read_text().replace("num_steps = 1\n", "", 1))  # topk without num steps
    done = run(cli_env, "launch", "simbox")
    assert done.returncode == 1
    assert "RuleBreak(" not in done.stderr + done.stdout, done.stderr
    assert "-- rejected by the checker's rule spec.topk_without_steps, nothing started" in done.stderr


def test_tune_stops_at_once_on_a_taken_port(cli_env: dict[str, str]) -> None:
    """The sweep launches through the same launcher: its first launch is refused, and it stops there."""
    port = _port(cli_env)
    holder = subprocess.Popen(
        [sys.executable, "-I", "-c", LISTENER, str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "listening\n"
        grid = "num_steps=1 eagle_topk=1 num_draft_tokens=2"
        done = run(cli_env, "tune", "simbox", "--grid", grid, "--requests", "2")
        assert done.returncode == 1, done.stderr
        stops = [line for line in done.stderr.splitlines() if line.startswith("-- the sweep stops:")]
        assert len(stops) == 1, done.stderr
        expected = (
            rf"-- the sweep stops: port {port} on simbox \(127\.0\.0\.1\) is held by pid {holder.pid} "
            r"\(python[^)]*\): nothing was started; free it, or give the profile another port"
        )
        assert re.fullmatch(expected, stops[0]), stops[0]
    finally:
        holder.kill()
        holder.wait()
