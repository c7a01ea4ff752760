"""The server's log is opened as ours alone: someone who can write to its folder (/tmp) may plant a link,
a FIFO or a file of their own at the log's name; a launch then refuses in one line, and nothing is written
through the link, waited on, or given to another user's file. A new log is created 0600."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gdnconsole.host import agent, foreground, launcher, simulated
from gdnconsole.sglang.launch import LaunchSpec
from tests.host.launchkit import connected, journal_for, launch_host

SLEEPER = [sys.executable, "-c", "print('server up', flush=True); import time; time.sleep(60)"]


@pytest.fixture(autouse=True)
def _open_umask() -> Iterator[None]:
    old = os.umask(0o022)  # `nohup … > log` would give 0644 here
    yield
    os.umask(old)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere" / "victim"
    path.parent.mkdir()
    path.write_text("untouched\n")
    return path


def started(log: Path) -> int:
    proc = agent.start_detached(SLEEPER, {}, None, str(log))
    try:
        os.killpg(proc.pid, 9)
    finally:
        proc.wait()
    return proc.pid


def test_emptying_a_linked_log_refuses_and_leaves_the_target(tmp_path: Path, victim: Path) -> None:
    log = tmp_path / "sglang.log"
    log.symlink_to(victim)
    with pytest.raises(agent.BadRequest, match=r"sglang\.log is a symbolic link: not written"):
        agent.rotate_log(str(log), rotate=False)
    assert victim.read_text() == "untouched\n"


def test_a_dangling_link_at_the_log_creates_nothing_through_it(tmp_path: Path) -> None:
    log, target = tmp_path / "sglang.log", tmp_path / "elsewhere" / "bashrc"
    target.parent.mkdir()
    log.symlink_to(target)
    with pytest.raises(agent.BadRequest, match="is a symbolic link"):
        agent.rotate_log(str(log), rotate=True)
        started(log)
    assert not target.exists()
    assert log.is_symlink()  # left for the operator to see, not moved to .1


def test_a_link_planted_after_the_rotation_is_not_followed(tmp_path: Path, victim: Path) -> None:
    log = tmp_path / "sglang.log"
    agent.rotate_log(str(log), rotate=True)
    log.symlink_to(victim)  # between the rotation and the server's start
    with pytest.raises(agent.BadRequest, match="is a symbolic link"):
        started(log)
    assert victim.read_text() == "untouched\n"


def test_a_link_at_the_rotated_name_is_replaced_never_written_through(tmp_path: Path, victim: Path) -> None:
    log = tmp_path / "sglang.log"
    log.write_text("the old server's log\n")
    Path(f"{log}.1").symlink_to(victim)
    agent.rotate_log(str(log), rotate=True)
    assert Path(f"{log}.1").read_text() == "the old server's log\n"
    assert not Path(f"{log}.1").is_symlink()
    assert victim.read_text() == "untouched\n"


def test_a_directory_at_the_rotated_name_is_said_in_one_line(tmp_path: Path) -> None:
    log = tmp_path / "sglang.log"
    log.write_text("old\n")
    Path(f"{log}.1").mkdir()
    with pytest.raises(
        agent.BadRequest, match=r"cannot keep the old log as .*sglang\.log\.1: Is a directory"
    ):
        agent.rotate_log(str(log), rotate=True)


def test_a_fifo_at_the_log_is_refused_not_waited_on(tmp_path: Path) -> None:
    """Opening a FIFO to write waits for a reader: the agent (and its console) would hang for good."""
    log = tmp_path / "sglang.log"
    os.mkfifo(log)
    with pytest.raises(agent.BadRequest, match="is not a regular file"):
        agent.rotate_log(str(log), rotate=False)
    with pytest.raises(agent.BadRequest, match="is not a regular file"):
        started(log)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_another_users_file_at_the_log_is_not_written_into(tmp_path: Path) -> None:
    log = tmp_path / "sglang.log"
    log.write_text("theirs\n")
    log.chmod(0o666)
    os.chown(log, 65534, 65534)
    with pytest.raises(agent.BadRequest, match=r"belongs to another user \(uid 65534\)"):
        started(log)
    assert log.read_text() == "theirs\n"


def test_a_new_log_is_private_and_the_server_writes_to_it(tmp_path: Path) -> None:
    log = tmp_path / "sglang.log"
    proc = agent.start_detached([*SLEEPER[:2], "print('server up', flush=True)"], {}, None, str(log))
    assert proc.wait(30) == 0
    assert log.read_text() == "server up\n"
    assert stat.S_IMODE(log.stat().st_mode) == agent.LOG_MODE == 0o600


async def test_a_launch_onto_a_linked_log_is_refused_in_one_line(tmp_path: Path, victim: Path) -> None:
    """Through the console: the agent's refusal reaches the launch as one line naming the log; no server
    starts, and the link's target keeps its bytes."""
    host = launch_host(tmp_path)
    async with connected(host) as session:
        log = simulated.log_path(host)
        log.unlink(missing_ok=True)
        log.symlink_to(victim)
        with pytest.raises(launcher.LaunchRefused) as refused:
            await launcher.launch(
                session, host.profiles["final"], check=False, journal=journal_for(tmp_path, host)
            )
        assert session.launched is None
    message = str(refused.value)
    assert "\n" not in message
    assert f"the log {log} is a symbolic link: not written" in message
    assert victim.read_text() == "untouched\n"


def test_the_plain_demo_refuses_a_linked_log(tmp_path: Path, victim: Path) -> None:
    log = tmp_path / "demo" / "sglang_serve.log"
    log.parent.mkdir()
    log.symlink_to(victim)
    spec = LaunchSpec(python=sys.executable, args=())
    with pytest.raises(foreground.LogRefused, match="is a symbolic link"):
        foreground.start(spec, env={}, cwd=tmp_path, log=log)
    assert victim.read_text() == "untouched\n"


def test_the_plain_demo_log_is_emptied_and_private(tmp_path: Path) -> None:
    """The demo's server (here one that cannot find SGLang and says so) writes a log of its own."""
    log, fresh = tmp_path / "sglang_serve.log", tmp_path / "fresh.log"
    log.write_text("the last demo's lines\n")
    spec = LaunchSpec(python=sys.executable, args=())
    for path in (log, fresh):
        foreground.start(spec, env={"PYTHONPATH": ""}, cwd=tmp_path, log=path).wait(30)
    assert "the last demo's lines" not in log.read_text()
    assert "sglang" in log.read_text()
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
