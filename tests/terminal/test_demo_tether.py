"""`gdnconsole demo` in a real terminal leaves no server behind, however its console ends: killed with
SIGKILL (no code of its own runs) or its terminal closed (SIGHUP), after its tether was killed (the
console starts another), or with the whole tmux server while its state folder is removed (the tether
holds the server's identity itself). A tmux server of our own, a demo host of our own (hosts file,
simulator home, port)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gdnconsole.config import hosts as config_hosts
from gdnconsole.host import simulated
from gdnconsole.host.agent import PIDFILE_NAME
from gdnconsole.host.state import ServerRecord
from tests import needs
from tests.host.launchkit import sim_hosts_file

needs.require("tmux", module_level=True)

SOCKET = f"gdntether-{os.getpid()}"
WAIT_S = 60.0


def tmux(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["tmux", "-u", "-L", SOCKET, "-f", os.devnull, *args],
        env={k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")},
        capture_output=True,
        text=True,
        check=check,
        timeout=10,
    )


def alive(pid: int) -> bool:
    """Running (a zombie that nobody reaped yet has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def eventually(what: str, check: Callable[[], object], timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.1)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    """The environment of a demo of our own, and where its pid file will be."""
    config = sim_hosts_file(tmp_path, "demo", simulate={"gpus": 2, "speed": 20.0}, speculative=None)
    env = {
        "GDNCONSOLE_CONFIG": str(config),
        "GDNCONSOLE_JOURNAL_DIR": str(tmp_path / "journal"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TERM": "xterm-256color",
    }
    host = config_hosts.load(config).hosts["demo"]
    tmux("start-server", ";", "set-option", "-g", "exit-empty", "off")
    yield env, simulated.log_path(host).parent / PIDFILE_NAME
    tmux("kill-server", check=False)


def start_demo(env: dict[str, str]) -> int:
    """`gdnconsole demo` in a tmux pane; its pid once its server runs."""
    command = shlex.join(
        ["env", *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m", "gdnconsole", "demo"]
    )
    tmux("new-session", "-d", "-s", "demo", "-x", "120", "-y", "40", command)
    return int(tmux("display-message", "-p", "-t", "demo", "#{pane_pid}").stdout)


def server_of(pidfile: Path) -> int:
    eventually("the demo's server starts", pidfile.exists)
    record = ServerRecord.parse(json.loads(pidfile.read_text()))
    assert record is not None and alive(record.pid)
    return record.pid


@pytest.mark.parametrize("end", ["SIGKILL", "closed terminal"])
def test_a_demo_console_that_dies_takes_its_server_with_it(
    demo: tuple[dict[str, str], Path], end: str
) -> None:
    env, pidfile = demo
    console = start_demo(env)
    server = server_of(pidfile)
    if end == "SIGKILL":
        os.kill(console, signal.SIGKILL)  # nothing of the console runs after this
    else:
        tmux("kill-session", "-t", "demo")  # the terminal goes away: SIGHUP
    eventually("the server is stopped", lambda: not alive(server))


def tether_of(console: int) -> int | None:
    """The console's tether: its child running demo/tether.py."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if fields[1] == str(console) and b"tether" in cmdline and fields[0] not in ("Z", "X"):
            return int(entry.name)
    return None


def holds_a_server(tether: int | None) -> bool:
    """The tether names itself by the number of servers it holds (`gdntether 1`)."""
    try:
        return tether is not None and Path(f"/proc/{tether}/comm").read_text().split()[-1] == "1"
    except OSError:
        return False


def test_a_killed_tether_is_replaced_and_the_new_one_stops_the_server(
    demo: tuple[dict[str, str], Path],
) -> None:
    env, pidfile = demo
    console = start_demo(env)
    server = server_of(pidfile)
    eventually("the tether runs", lambda: tether_of(console) is not None)
    first = tether_of(console)
    assert first is not None
    os.kill(first, signal.SIGKILL)
    eventually("a new tether runs", lambda: tether_of(console) not in (None, first))
    eventually("the new tether is told of the server", lambda: holds_a_server(tether_of(console)))
    os.kill(console, signal.SIGKILL)
    eventually("the server is stopped", lambda: not alive(server))


def test_a_killed_tmux_whose_state_folder_went_too_leaves_no_server(
    demo: tuple[dict[str, str], Path],
) -> None:
    env, pidfile = demo
    console = start_demo(env)
    server = server_of(pidfile)
    eventually("the tether is told of the server", lambda: holds_a_server(tether_of(console)))
    # The files a stop would look the server up in: its pid file, the console's state and data. (Not the
    # whole simulated home: the simulated server ends by itself without it, which a real one does not.)
    pidfile.unlink()
    for folder in ("XDG_STATE_HOME", "XDG_DATA_HOME", "GDNCONSOLE_JOURNAL_DIR"):
        shutil.rmtree(env[folder], ignore_errors=True)
    tmux("kill-server", check=False)
    eventually("the server is stopped", lambda: not alive(server))
