"""Helpers for the launch tests: simulated hosts with the ct129 profiles, a connected session, and the
clean-up of every server a test launched (by the process group the agent reported, nothing else)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from gdnconsole.config.hosts import Host, Profile, Speculative
from gdnconsole.host import simulated
from gdnconsole.host.journal import Journal
from gdnconsole.host.session import HostSession
from gdnconsole.host.simhome import prepare_home
from tests.host.test_session import CT129_ARGS, FAST_BACKOFF, free_port, running, sim_host, target
from tests.sshhosts import SshdHost

MODEL = "Qwen/Qwen3.6-27B"
FINAL = Speculative(algorithm="NEXTN", num_steps=1, eagle_topk=1, num_draft_tokens=2)
FINAL_ARGS = ("--mamba-scheduler-strategy", "extra_buffer")
FINAL_ENV = {"SGLANG_ENABLE_SPEC_V2": "1"}


def profile(name: str = "final", **changes: Any) -> Profile:
    base = Profile(
        name=name, model=MODEL, tp=2, port=free_port(), speculative=FINAL, args=FINAL_ARGS, env=FINAL_ENV
    )
    return dataclasses.replace(base, **changes)


def launch_host(tmp_path: Path, ssh: SshdHost | None = None, **table: object) -> Host:
    host = sim_host(tmp_path, ssh=ssh, **table)
    final = profile()
    return dataclasses.replace(host, profiles={"final": final}, default_profile="final")


def set_scenario(host: Host, **table: object) -> None:
    """Change the simulated host's settings (servers started from now on read them)."""
    assert host.simulate is not None
    merged = {**host.simulate.table, **table}
    prepare_home(simulated.sim_home(host), merged)


def journal_for(tmp_path: Path, host: Host) -> Journal:
    return Journal(host.name, tmp_path / "journal" / f"{host.name}.jsonl")


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def connected(
    host: Host, ssh: SshdHost | None = None, *, reap: bool = True
) -> AsyncIterator[HostSession]:
    """A running session on ``host``, complete (hello, GPUs, processes, log, pid file) before the test
    goes on; every server launched through it is killed by its process group at the end (unless
    ``reap`` is false: a later session takes it over)."""
    session = HostSession(host, ssh=target(ssh) if ssh else None, sample_interval=0.2, backoff=FAST_BACKOFF)
    groups: set[int] = set()

    def remember(topic: str) -> None:
        record = session.launched
        if topic == "launched" and record is not None and record.pgid is not None:
            groups.add(record.pgid)

    session.subscribe(remember)
    try:
        async with running(session):
            assert await session.wait_until(lambda: session.complete and session.pidfile_seen, 30), (
                session.link_message
            )
            yield session
    finally:
        for pgid in groups if reap else ():
            kill_group(pgid)


def alive(pid: int) -> bool:
    """Running and not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def start_by_hand(host: Host, *, port: int, append: bool = True) -> subprocess.Popen[bytes]:
    """A server started by hand on the simulated host, writing to the host's log as `>> log` (or `> log`)
    does: another writer than this console. The caller ends it with ``kill_group``."""
    workdir = simulated.workdir(host)
    workdir.mkdir(parents=True, exist_ok=True)
    with (workdir / host.log).open("ab" if append else "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "sglang.launch_server", *CT129_ARGS, "--port", str(port)],
            env={**os.environ, **simulated.environment(host)},
            cwd=workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def sim_hosts_file(
    tmp_path: Path,
    name: str = "simbox",
    *,
    simulate: dict[str, object] | None = None,
    speculative: tuple[int, int, int] | None = (1, 1, 2),
    profile: str = "final",
    profile_lines: str = "",
) -> Path:
    """A hosts file with one simulated local host (home in tmp_path) and one ct129-like launch profile,
    as the commands read it: ``simulate`` adds to or overrides the host's table, ``speculative`` is NEXTN's
    (steps, topk, draft tokens) or None, ``profile_lines`` are more TOML lines of the profile."""
    table = {"speed": 50.0, "release_lag_s": 0.0, **(simulate or {}), "home": str(tmp_path / "simhome")}
    sim = "\n".join(f"{key} = {value!r}" if not isinstance(value, str) else f'{key} = "{value}"'
                    for key, value in table.items())  # fmt: skip
    text = f"""
[hosts.{name}]
local = true
python = "{sys.executable}"

[hosts.{name}.simulate]
{sim}

[hosts.{name}.profiles.{profile}]
model = "{MODEL}"
tp = 2
port = {free_port()}
args = ["--mamba-scheduler-strategy", "extra_buffer"]
{profile_lines}
"""
    if speculative is not None:
        steps, topk, draft = speculative
        text += f"""
[hosts.{name}.profiles.{profile}.speculative]
algorithm = "NEXTN"
num_steps = {steps}
eagle_topk = {topk}
num_draft_tokens = {draft}
"""
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    return path
