"""The pid file beside the log, read back by the agent (its folder may be /tmp, writable by others): a
FIFO, a link, another user's file, deep nesting or a start time too large for a float is no record, said
as one (``server: null``), never a hang or an error in place of the answer; the console parses what the
agent relays without a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from gdnconsole.host import agent
from gdnconsole.host.state import ServerRecord
from tests.host.test_agent import Agent

if TYPE_CHECKING:
    from tests.conftest import SimHost, SimHostFactory


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def agent_on(
    sim_host: SimHostFactory, tmp_path: Path
) -> Iterator[Callable[[Callable[[Path], None]], dict[str, object]]]:
    """Plant something at the pid file, then ask a real agent for it: its answer."""
    started: list[Agent] = []

    def ask(plant: Callable[[Path], None]) -> dict[str, object]:
        host: SimHost = sim_host()
        log = tmp_path / "sglang.log"
        log.write_text("")
        plant(tmp_path / agent.PIDFILE_NAME)
        started.append(Agent(host.env))
        return started[-1].request("pidfile", op="pidfile", id=1, log=str(log))

    yield ask
    for a in started:
        a.kill()


def record(pid: int, **fields: object) -> str:
    return json.dumps({"pid": pid, "start_time": 0.0, "argv": ["python"], "log": "x", **fields})


def test_a_fifo_at_the_pid_file_is_no_record(agent_on: Callable[..., dict[str, object]]) -> None:
    assert agent_on(os.mkfifo)["server"] is None


def test_deep_nesting_in_the_pid_file_is_no_record(agent_on: Callable[..., dict[str, object]]) -> None:
    assert agent_on(lambda p: p.write_text("[" * 100_000))["server"] is None


def test_a_link_at_the_pid_file_is_not_followed(
    agent_on: Callable[..., dict[str, object]], tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(record(sleeper.pid))
    assert agent_on(lambda p: p.symlink_to(elsewhere))["server"] is None


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_another_users_pid_file_is_not_ours(
    agent_on: Callable[..., dict[str, object]], sleeper: subprocess.Popen[bytes]
) -> None:
    """Else they could name any process of ours (pid and start time are in /proc) for `stop` to end."""

    def plant(path: Path) -> None:
        path.write_text(record(sleeper.pid))
        os.chown(path, 65534, 65534)

    assert agent_on(plant)["server"] is None


def test_a_start_time_too_large_for_a_float_is_answered(
    agent_on: Callable[..., dict[str, object]], sleeper: subprocess.Popen[bytes]
) -> None:
    reply = agent_on(lambda p: p.write_text(record(sleeper.pid, start_time=10**400)))
    assert reply["alive"] is False
    parsed = ServerRecord.parse(reply["server"])
    assert parsed is not None and parsed.pid == sleeper.pid and parsed.start_time is None


@pytest.mark.parametrize("field", ["start_time", "time"])
def test_the_console_parses_a_record_with_a_huge_number(field: str) -> None:
    parsed = ServerRecord.parse({"pid": 7, field: 10**400})
    assert parsed is not None and getattr(parsed, field) is None
