"""Ctrl-C during a long command exits 130 with one line (never click's "Aborted!" and 1), and `adopt` of
a server that is gdnconsole's already is no failure: a real SIGINT to a real `gdnconsole` process."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import signal
import subprocess
from pathlib import Path

from gdnconsole.config import hosts as config_hosts
from tests.host.launchkit import kill_group, start_by_hand
from tests.host.test_launch_cli import GDNCONSOLE, cli_env, run

__all__ = ["cli_env"]


def _server_pgid(tmp_path: Path) -> int | None:
    server = tmp_path / "simhome" / ".gdnconsole-server.json"
    return json.loads(server.read_text())["pgid"] if server.exists() else None


def test_ctrl_c_during_launch_wait_exits_130_in_one_line(cli_env: dict[str, str], tmp_path: Path) -> None:
    config = Path(cli_env["GDNCONSOLE_CONFIG"])  # the server never answers: the wait goes on
    config.write_text(config.read_text().replace("speed = 50.0\n", 'speed = 50.0\nchat_fault = "hang"\n', 1))
    proc = subprocess.Popen(
        [*GDNCONSOLE, "launch", "simbox", "--wait", "verified", "--timeout", "120"],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        seen: list[str] = []
        for line in proc.stderr:  # a stage line once the wait has begun
            seen.append(line)
            if any(s.startswith("-- started pid") for s in seen[:-1]) and line.startswith("-- "):
                break
        assert seen and proc.poll() is None, seen
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        code = proc.wait(timeout=60)
        assert code == 130, (code, rest)
        assert "Aborted!" not in rest and "Traceback" not in rest, rest
        assert [line for line in rest.splitlines() if line.strip()] == ["gdnconsole: interrupted"], rest
    finally:
        if proc.poll() is None:
            proc.kill()
        pgid = _server_pgid(tmp_path)
        if pgid is not None:
            kill_group(pgid)


def test_adopting_our_own_server_exits_0(cli_env: dict[str, str], tmp_path: Path) -> None:
    started = run(cli_env, "launch", "simbox", "--wait", "started", "--json")
    try:
        assert started.returncode == 0, started.stderr
        pid = (
            json.loads(started.stdout).get("attempt")
            and json.loads((tmp_path / "simhome" / ".gdnconsole-server.json").read_text())["pid"]
        )
        again = run(cli_env, "adopt", "simbox", "--yes")
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip() == f"pid {pid} on simbox is gdnconsole's already: nothing to adopt"
        as_json = run(cli_env, "adopt", "simbox", "--yes", "--json")
        assert as_json.returncode == 0 and json.loads(as_json.stdout)["already"] is True
    finally:
        pgid = _server_pgid(tmp_path)
        if pgid is not None:
            kill_group(pgid)


def test_ctrl_c_at_adopts_question_exits_130_not_aborted(cli_env: dict[str, str]) -> None:
    """`adopt` asks on a terminal (a pty here); Ctrl-C there is an interruption, not click's "Aborted!"."""
    host = config_hosts.load(Path(cli_env["GDNCONSOLE_CONFIG"])).hosts["simbox"]
    assert host.profile is not None
    by_hand = start_by_hand(host, port=host.profile.port)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*GDNCONSOLE, "adopt", "simbox"], env=cli_env, stdin=slave, stdout=slave, stderr=slave
    )
    os.close(slave)
    try:
        said = b""
        while b"Adopt it?" not in said:  # the question is on the terminal: it waits for an answer
            ready, _, _ = select.select([master], [], [], 60)
            assert ready, said
            said += os.read(master, 4096)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
        with contextlib.suppress(OSError):  # the pty ends with its last writer
            while select.select([master], [], [], 1)[0]:
                chunk = os.read(master, 4096)
                if not chunk:
                    break
                said += chunk
        text = said.decode(errors="replace")
        assert code == 130, text
        assert "Aborted!" not in text and text.rstrip().endswith("gdnconsole: interrupted"), text
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        kill_group(by_hand.pid)


def _connected_to(port: int) -> bool:
    """Some socket of this machine has an established connection to ``port`` (the prompt's request)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "01" and fields[2].rsplit(":", 1)[-1] == f"{port:04X}":
                return True
    return False


def test_ctrl_c_during_a_prompt_exits_130_in_one_line(cli_env: dict[str, str], tmp_path: Path) -> None:
    config = Path(cli_env["GDNCONSOLE_CONFIG"])  # the server reads the request and never answers
    config.write_text(config.read_text().replace("speed = 50.0\n", 'speed = 50.0\nchat_fault = "hang"\n', 1))
    port = config_hosts.load(config).hosts["simbox"].profiles["final"].port
    try:
        ready = run(cli_env, "launch", "simbox", "--json", "--timeout", "60")
        assert ready.returncode == 0, ready.stderr
        proc = subprocess.Popen(
            [*GDNCONSOLE, "prompt", "simbox", "hi", "--timeout", "120"],
            env=cli_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = 600  # looks at /proc, each a fraction of a second: the request is sent by then
            while not _connected_to(port) and proc.poll() is None and deadline:
                deadline -= 1
                select.select([], [], [], 0.05)
            assert _connected_to(port) and proc.poll() is None
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 130, (proc.returncode, err)
            assert [line for line in err.splitlines() if line.strip()] == ["gdnconsole: interrupted"], err
        finally:
            if proc.poll() is None:
                proc.kill()
    finally:
        pgid = _server_pgid(tmp_path)
        if pgid is not None:
            kill_group(pgid)
