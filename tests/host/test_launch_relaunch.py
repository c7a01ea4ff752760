"""Relaunch under every state of the old server, over SSH to the simulated host (asyncssh in-process
server running real subprocesses), plus the processes a relaunch must leave alone or refuse for."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gdnconsole.host import launcher, simulated
from gdnconsole.host.journal import Journal
from gdnconsole.host.session import HostSession
from tests.host.launchkit import alive, connected, journal_for, launch_host, set_scenario
from tests.sshhosts import AsyncsshHost

FINAL_TIMEOUT = 30.0


async def start_ready(session: HostSession, journal: Journal) -> launcher.Attempt:
    attempt = await launcher.launch(session, session.host.profiles["final"], check=False, journal=journal)
    return await launcher.settle(session, attempt, timeout=FINAL_TIMEOUT, journal=journal)


async def relaunch_ready(session: HostSession, journal: Journal, progress: list[str]) -> launcher.Attempt:
    attempt = await launcher.relaunch(
        session, session.host.profiles["final"], check=False, journal=journal, on_progress=progress.append
    )
    assert attempt.outcome == "running" and attempt.pid is not None
    return await launcher.settle(session, attempt, timeout=FINAL_TIMEOUT, journal=journal)


def group_gone(pgid: int) -> bool:
    """No live member left (zombies waiting for init to reap them hold nothing and run nothing)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return False
    return True


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts itself (decoys, leftovers): killed by their own group at the end."""
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def start_hold(
    procs: list[subprocess.Popen[bytes]], host_env: dict[str, str], *args: str
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "gdnsim.hold", *args],
        env=host_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    procs.append(proc)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    return proc


def sim_env(host: object) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(simulated.environment(host))  # type: ignore[arg-type]
    return env


@pytest.mark.parametrize("when", ["loading", "serving"])
async def test_relaunch_while_loading_or_serving(
    tmp_path: Path, asyncssh_host: AsyncsshHost, when: str
) -> None:
    host = launch_host(tmp_path, ssh=asyncssh_host, speed=2.0 if when == "loading" else 50.0)
    journal = journal_for(tmp_path, host)
    async with connected(host, asyncssh_host) as session:
        first = await launcher.launch(session, host.profiles["final"], check=False, journal=journal)
        assert first.pid is not None
        if when == "loading":
            assert await session.wait_until(
                lambda: launcher.observe(session, first).stage in ("loading", "loaded", "memory"), 20
            )
        else:
            first = await launcher.settle(session, first, timeout=FINAL_TIMEOUT, journal=journal)
            assert first.outcome == "ready"
        set_scenario(host, speed=50.0)
        progress: list[str] = []
        second = await relaunch_ready(session, journal, progress)
        assert second.outcome == "ready" and second.pid != first.pid
        assert group_gone(first.pid) and any("stopping" in p for p in progress)
        outcomes = [a.outcome for a in journal.attempts()]
        assert outcomes == (["stopped", "ready"] if when == "loading" else ["ready", "ready"])


@pytest.mark.parametrize("how", ["relaunch", "launch"])  # R with no server left launches (launchcontrol)
@pytest.mark.parametrize("scenario", ["oom-graph", "crash-serving"])
async def test_relaunch_after_a_crash(
    tmp_path: Path, asyncssh_host: AsyncsshHost, scenario: str, how: str
) -> None:
    host = launch_host(tmp_path, ssh=asyncssh_host, scenario=scenario)
    journal = journal_for(tmp_path, host)
    async with connected(host, asyncssh_host) as session:
        first = await start_ready(session, journal)
        if scenario == "crash-serving":
            assert first.outcome == "ready"
            port = host.profiles["final"].port
            async with httpx.AsyncClient() as client:
                with contextlib.suppress(httpx.HTTPError):
                    await client.post(
                        f"http://127.0.0.1:{port}/v1/chat/completions",
                        json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                        timeout=10,
                    )
            # A ready server that dies is "crashed" the moment the agent reports its exit.
            assert await session.wait_until(lambda: launcher.observe(session, first).outcome == "crashed", 20)
            journal.update(first)
        assert first.outcome == "crashed" and first.fatal and first.fatal.summary, first
        assert session.launched_pid is None  # the agent told the session at once: no timeout involved
        set_scenario(host, scenario="ok")
        second = await (
            relaunch_ready(session, journal, []) if how == "relaunch" else start_ready(session, journal)
        )
        assert second.outcome == "ready"
        assert [a.outcome for a in journal.attempts()] == ["crashed", "ready"]


async def test_a_hung_capture_is_stopped_and_replaced(tmp_path: Path, asyncssh_host: AsyncsshHost) -> None:
    host = launch_host(tmp_path, ssh=asyncssh_host, scenario="hang-graph")
    journal = journal_for(tmp_path, host)
    async with connected(host, asyncssh_host) as session:
        first = await launcher.launch(session, host.profiles["final"], check=False, journal=journal)
        assert await session.wait_until(lambda: launcher.observe(session, first).stage == "graphs", 20)
        assert first.pid is not None
        result = await launcher.stop(session, grace=1.0, journal=journal)
        assert result.how in ("sigterm", "sigkill") and group_gone(first.pid)
        set_scenario(host, scenario="ok")
        second = await start_ready(session, journal)
        assert second.outcome == "ready"
        assert [a.outcome for a in journal.attempts()] == ["stopped", "ready"]


IGNORES_SIGTERM = (
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "subprocess.Popen([sys.executable, '-c', 'import signal, time; "
    "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'])\n"
    "print('up', flush=True)\n"
    "time.sleep(600)\n"
)


async def test_a_server_that_ignores_sigterm_gets_sigkill_of_its_group(
    tmp_path: Path, asyncssh_host: AsyncsshHost
) -> None:
    """A drain that never ends (here: SIGTERM ignored by the server and its child): after the grace the
    whole process group is killed, the child included."""
    host = launch_host(tmp_path, ssh=asyncssh_host)
    journal = journal_for(tmp_path, host)
    async with connected(host, asyncssh_host) as session:
        reply = await session.request(
            {
                "op": "launch",
                "argv": [sys.executable, "-c", IGNORES_SIGTERM],
                "env": {},
                "cwd": None,
                "log": session.log.path,
                "owner": "test",
            },
            "launched",
        )
        pid = reply["server"]["pid"]
        assert await session.wait_until(lambda: "up" in session.log.recent(), 10)
        progress: list[str] = []
        result = await launcher._stop(session, 0.5, journal, progress.append)
        assert (result.pid, result.how) == (pid, "sigkill") and result.elapsed >= 0.5
        assert any("SIGKILL" in p for p in progress) and group_gone(pid)
        assert session.exits[pid].returncode == -signal.SIGKILL


async def test_decoys_named_like_sglang_survive_a_relaunch(
    tmp_path: Path, asyncssh_host: AsyncsshHost, spawned: list[subprocess.Popen[bytes]]
) -> None:
    host = launch_host(tmp_path, ssh=asyncssh_host)
    journal = journal_for(tmp_path, host)
    env = sim_env(host)
    titled = start_hold(spawned, env, "--gpu", "0", "--mib", "10", "--title", "sglang::scheduler_TP0")
    texty = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", "sglang serve", "--model-path", "x"],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    spawned.append(texty)
    async with connected(host, asyncssh_host) as session:
        first = await start_ready(session, journal)
        plan = launcher.stop_plan(session)
        assert plan.pid == first.pid and {p.pid for p in plan.untouched} >= {titled.pid}
        second = await relaunch_ready(session, journal, [])
        assert second.outcome == "ready"
        await launcher.stop(session, grace=5, journal=journal)
    assert alive(titled.pid) and alive(texty.pid)


async def test_a_leftover_holding_memory_refuses_the_relaunch_and_names_it(
    tmp_path: Path, asyncssh_host: AsyncsshHost, spawned: list[subprocess.Popen[bytes]]
) -> None:
    host = launch_host(tmp_path, ssh=asyncssh_host)
    journal = journal_for(tmp_path, host)
    async with connected(host, asyncssh_host) as session:
        first = await start_ready(session, journal)
        leftover = start_hold(spawned, sim_env(host), "--gpu", "1", "--mib", "20000")
        assert await session.wait_until(
            lambda: any(p.pid == leftover.pid for g in session.gpus for p in g.processes), 10
        )
        with pytest.raises(launcher.LaunchRefused, match=f"pid {leftover.pid} .* holds 20000 MiB on GPU 1"):
            await launcher.relaunch(session, host.profiles["final"], check=False, journal=journal)
        assert first.pid is not None and alive(first.pid)  # refused before anything was stopped
        refused = journal.attempts()[-1]  # journaled as the host's refusal, with its reason
        assert len(journal.attempts()) == 2 and refused.outcome == "refused" and refused.fatal is not None
        assert f"pid {leftover.pid}" in refused.fatal.summary


async def test_a_new_session_finds_the_launched_server_from_its_pid_file(
    tmp_path: Path, asyncssh_host: AsyncsshHost
) -> None:
    host = launch_host(tmp_path, ssh=asyncssh_host)
    journal = journal_for(tmp_path, host)
    async with connected(host, asyncssh_host, reap=False) as session:
        first = await start_ready(session, journal)
    async with connected(host, asyncssh_host) as again:
        assert again.launched_pid == first.pid
        result = await launcher.stop(again, grace=5, journal=journal)
        assert result.pid == first.pid and again.launched_pid is None
