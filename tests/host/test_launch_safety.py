"""What reaches the server is exactly the profile (no shell anywhere), and the launch lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gdnconsole.host import launcher, simulated
from gdnconsole.host.agent import LOCK_NAME
from tests.host.launchkit import connected, journal_for, launch_host, profile
from tests.sshhosts import AsyncsshHost, SshdHost


def payloads(marks: Path) -> list[str]:
    """Values that would each create a file if any shell ever saw them."""
    return [
        f"a b; touch {marks}/semicolon",
        f"$(touch {marks}/dollar)",
        f"`touch {marks}/backtick`",
        f"'\"quote\" ' && touch {marks}/and",
        f"line\ntouch {marks}/newline",
    ]


async def test_no_shell_over_asyncssh(tmp_path: Path, asyncssh_host: AsyncsshHost) -> None:
    await values_reach_the_server_as_one_argument_each(tmp_path, asyncssh_host)


async def test_no_shell_over_openssh(tmp_path: Path, sshd: SshdHost) -> None:
    await values_reach_the_server_as_one_argument_each(tmp_path, sshd)


async def values_reach_the_server_as_one_argument_each(tmp_path: Path, ssh: SshdHost) -> None:
    """Spaces, quotes, ;, $(), backticks and newlines in the model path, env and extra args: each value
    is exactly one argument (or one variable) of the server, and no shell ever runs any of it."""
    marks = tmp_path / "marks"
    marks.mkdir()
    values = payloads(marks)
    model = f"/models/Qwen3.6-27B {values[0]} {values[3]}"
    env = {"SGLANG_PAYLOAD": values[1] + values[4], "SGLANG_OTHER": values[2]}
    args = ("--served-model-name", values[4], "--chat-template", values[2])
    host = launch_host(tmp_path, ssh=ssh)
    prof = profile(model=model, env=env, args=args)
    async with connected(host, ssh) as session:
        attempt = await launcher.launch(session, prof, check=False, journal=journal_for(tmp_path, host))
        assert attempt.pid is not None
        cmdline = Path(f"/proc/{attempt.pid}/cmdline").read_bytes().split(b"\0")[:-1]
        environ = dict(
            item.decode().split("=", 1)
            for item in Path(f"/proc/{attempt.pid}/environ").read_bytes().split(b"\0")
            if item
        )
    assert [a.decode() for a in cmdline] == attempt.argv
    assert attempt.argv[attempt.argv.index("--model-path") + 1] == model
    assert attempt.argv[-4:] == list(args)
    assert {k: environ[k] for k in env} == env
    assert list(marks.iterdir()) == []


def write_lock(host: object, body: dict[str, object]) -> Path:
    lock = simulated.log_path(host).parent / LOCK_NAME  # type: ignore[arg-type]
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps(body))
    return lock


async def test_a_held_lock_refuses_the_launch_naming_its_owner(
    tmp_path: Path, asyncssh_host: AsyncsshHost
) -> None:
    host = launch_host(tmp_path, ssh=asyncssh_host)
    simulated.environment(host)
    lock = write_lock(host, {"owner": "alice@laptop pid 4242", "pid": os.getpid(), "time": time.time()})
    async with connected(host, asyncssh_host) as session:
        with pytest.raises(launcher.LaunchRefused, match="alice@laptop pid 4242"):
            await launcher.launch(
                session, host.profiles["final"], check=False, journal=journal_for(tmp_path, host)
            )
        assert session.launched is None and lock.exists()


@pytest.mark.parametrize("stale", ["dead-owner", "too-old"])
async def test_a_stale_lock_is_recovered(tmp_path: Path, asyncssh_host: AsyncsshHost, stale: str) -> None:
    host = launch_host(tmp_path, ssh=asyncssh_host)
    simulated.environment(host)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    body = {"owner": "bob@old", "pid": gone.pid, "time": time.time()}
    if stale == "too-old":
        body = {"owner": "bob@old", "pid": os.getpid(), "time": time.time() - 3600}
    lock = write_lock(host, body)
    async with connected(host, asyncssh_host) as session:
        reply = await session.request(
            {
                "op": "launch",
                "argv": [sys.executable, "-c", "import time; time.sleep(60)"],
                "env": {},
                "log": session.log.path,
                "owner": "me",
            },
            "launched",
        )
        assert reply["stale_lock"]["owner"] == "bob@old" and reply["stale_lock"]["reason"]
        assert not lock.exists()  # released once the server started
        # The pid file now names a live server: a second launch is refused until it is stopped.
        with pytest.raises(launcher.LaunchRefused, match="still runs here"):
            await launcher.launch(
                session, host.profiles["final"], check=False, journal=journal_for(tmp_path, host)
            )
        result = await launcher.stop(session, grace=2)
        assert result.pid == reply["server"]["pid"]
