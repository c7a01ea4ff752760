"""Helpers for the dashboard's Pilot tests: sessions on simulated hosts, waiting on what the screen shows."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen

from gdnconsole.config.hosts import Host, Profile
from gdnconsole.host.link import LinkState, SshTarget
from gdnconsole.host.session import HostSession
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.help import HelpScreen, bindings_table
from gdnconsole.ui.widgets.gpupanel import GpuPanel
from gdnconsole.ui.widgets.statusbar import HostStatusBar
from tests.host.test_session import FAST_BACKOFF
from tests.ui.fixtures import startup

SIZE = (120, 36)


def session_for(host: Host, tmp_path: Path, index: int = 0, ssh: SshTarget | None = None) -> HostSession:
    return HostSession(
        host, ssh=ssh, sample_interval=0.1, backoff=FAST_BACKOFF, mirror=tmp_path / f"mirror{index}.log"
    )


def dashboard(*sessions: HostSession, **options: object) -> DashboardApp:
    return DashboardApp(list(sessions), **options)  # type: ignore[arg-type]


async def until(pilot: Pilot[None], predicate: Callable[[], bool], timeout: float = 20.0) -> bool:
    """Let the app run until ``predicate`` holds (each pause handles the messages queued so far)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await pilot.pause(0.05)
    return True


def on_screen(app: App[Any], which: str | type[Screen[Any]]) -> bool:
    """The screen ``which`` (an id, or a class) is on top and mounted. A screen is on top as soon as it
    is pushed, its children only once it has composed: a wait on the top alone can read it empty."""
    screen = app.screen
    shown = screen.id == which if isinstance(which, str) else isinstance(screen, which)
    return shown and screen.is_mounted


def gpu_text(app: DashboardApp, index: int = 0) -> str:
    return str(app.dashboard.host_pane(index).query_one(GpuPanel).render())


def help_table_text(app: App[None]) -> str:
    """The help screen on top of ``app``, as the plain text of its table (200 columns wide)."""
    screen = app.screen
    assert isinstance(screen, HelpScreen)
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(bindings_table(screen.sections, screen.keymap))
    return console.export_text()


def status_text(app: DashboardApp, index: int = 0) -> str:
    return str(app.dashboard.host_pane(index).query_one(HostStatusBar).render())


# -- hosts whose state is set by hand (snapshots, rendering tests) ----------------------------------------

CLOCK = 1_800_000_000.0  # the fixed "now" of the snapshots


def fixed_clock() -> float:
    return CLOCK


def local_host(name: str) -> Host:
    profile = Profile(name="qwen36-mtp", model="Qwen/Qwen3.6-27B", tp=2, port=30000)
    return Host(name=name, ssh=None, local=True, profiles={profile.name: profile})


def mamba_line(second: int, rank: str) -> str:
    return (
        f"[2026-11-30 09:00:{second:02d} {rank}] Mamba Cache is allocated. max_mamba_cache_size: 96, "
        "conv_state size: 0.27GB, ssm_state size: 8.72GB intermediate_ssm_state_cache size: 4.36GB "
        "intermediate_conv_window_cache size: 0.14GB "
    )


def served_log() -> list[str]:
    """The healthy ct129 startup, serving, with the mamba pools a hybrid GDN model allocates."""
    out: list[str] = []
    for line in startup(0, crash=False):
        out.append(line)
        if "KV Cache is allocated" in line:
            out.append(mamba_line(41, "TP0" if " TP0]" in line else "TP1"))
    return out


def hello(host: str) -> dict[str, Any]:
    gpus = [{"index": i, "uuid": f"GPU-{i}", "name": "NVIDIA RTX A6000", "total_mib": 49140} for i in (0, 1)]
    return {
        "type": "hello",
        "hostname": host,
        "python": "3.11.7",
        "sglang": "0.5.11",
        "nvml": {"source": "pynvml", "reason": None},
        "gpus": gpus,
    }


def gpu(index: int, used: int, util: int, procs: list[tuple[int, int, str]]) -> dict[str, Any]:
    return {
        "index": index,
        "uuid": f"GPU-{index}",
        "name": "NVIDIA RTX A6000",
        "total_mib": 49140,
        "used_mib": used,
        "free_mib": 49140 - used,
        "util_pct": util,
        "processes": [{"pid": pid, "used_mib": mib, "name": name} for pid, mib, name in procs],
    }


def server(pid: int, started: float) -> dict[str, Any]:
    child = lambda n: {"pid": pid + 8 + n, "rank": f"TP{n}", "title": f"sglang::scheduler_TP{n}"}  # noqa: E731
    return {
        "pid": pid,
        "pgid": pid,
        "port": 30000,
        "start_time": started,
        "cmdline": ["python3", "-m", "sglang.launch_server", "--tp", "2"],
        "children": [child(0), child(1)],
    }


def feed_log(session: HostSession, lines: list[str]) -> None:
    data = "".join(line + "\n" for line in lines)
    size = len(data.encode())
    session.handle({"type": "log", "offset": 0, "end": size, "size": size, "inode": 1, "data": data})


def serving_session(tmp_path: Path, name: str = "ct129", index: int = 0) -> HostSession:
    """ct129 serving: TP0 and TP1 on GPUs 0 and 1, nothing else holding memory."""
    session = HostSession(local_host(name), mirror=tmp_path / f"mirror{index}.log")
    session.handle(hello(name))
    session.rtt_ms = 3.2
    session.handle({"type": "gpus", "gpus": [gpu(0, 45120, 87, [(4250, 44600, "sglang::scheduler_TP0")]),
                                            gpu(1, 45118, 85, [(4251, 44598, "sglang::scheduler_TP1")])]})  # fmt: skip
    session.handle({"type": "processes", "servers": [server(4242, CLOCK - 754)], "orphans": []})
    feed_log(session, served_log())
    return session


def crashed_session(tmp_path: Path, name: str = "ct130", index: int = 1) -> HostSession:
    """ct130 after a crash: no server, a rank left behind holding GPU 1, a stray python on GPU 0."""
    session = HostSession(local_host(name), mirror=tmp_path / f"mirror{index}.log")
    session.handle(hello(name))
    session.rtt_ms = 41.0
    orphan = {"pid": 5120, "rank": "TP1", "title": "sglang::scheduler_TP1"}
    session.handle({"type": "gpus", "gpus": [gpu(0, 2410, 0, [(6001, 1900, "/usr/bin/python3")]),
                                            gpu(1, 31480, 0, [(5120, 31000, "sglang::scheduler_TP1")])]})  # fmt: skip
    session.handle({"type": "processes", "servers": [], "orphans": [orphan]})
    feed_log(session, startup(5, crash=True))
    return session


def refused_session(tmp_path: Path, name: str = "ct131", index: int = 2) -> HostSession:
    session = HostSession(local_host(name), mirror=tmp_path / f"mirror{index}.log")
    session._set_link(LinkState.AUTH_FAILED, "authentication failed: Permission denied")
    return session
