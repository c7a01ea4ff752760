"""The dashboard against live simulated hosts: GPUs, ranks and memory split, leftovers, no NVML, unknown
host keys over a real sshd, several hosts in tabs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from gdnconsole.host import simulated
from gdnconsole.host.link import LinkState
from gdnconsole.ui.dialogs.hostkey import HostKeyScreen
from tests.host.test_session import sim_host, sim_server, target
from tests.sshhosts import SshdHost, sshd
from tests.ui.dashboard_helpers import SIZE, dashboard, gpu_text, on_screen, session_for, status_text, until

__all__ = ["sim_server", "sshd"]  # fixtures


async def test_server_ranks_on_gpus_with_memory_split(tmp_path: Path, sim_server) -> None:
    host = sim_host(tmp_path)
    session = session_for(host, tmp_path)
    app = dashboard(session)
    async with app.run_test(size=SIZE) as pilot:
        assert await until(pilot, lambda: "RTX A6000" in gpu_text(app))
        assert "● connected" in status_text(app) and "SGLang 0.5.11" in status_text(app)
        assert "no server" in status_text(app)
        server = sim_server(host)

        def split_shown() -> bool:
            text = gpu_text(app)
            startup = session.log.tracker.current
            return bool(
                startup and startup.ready and " 0 RTX A6000 TP0" in text and " 1 RTX A6000 TP1" in text
            ) and all(part in text for part in ("weights 2", "KV ", "graphs ", "free "))

        assert await until(pilot, split_shown, 40), gpu_text(app)
        assert f"server pid {server.pid} up " in status_text(app)
        assert "not the server" not in gpu_text(app)
        pane = app.dashboard.host_pane(0).log_pane
        assert await until(pilot, lambda: pane.view.total > 50 and pane.timeline_data is not None)
        assert pane.view.tail  # following the mirror


async def test_leftover_process_is_flagged(tmp_path: Path) -> None:
    host = sim_host(tmp_path)
    env = {**os.environ, **simulated.environment(host)}
    holder = subprocess.Popen(
        [sys.executable, "-m", "gdnsim.hold", "--gpu", "1", "--mib", "8000"],
        env=env,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"ready"
        app = dashboard(session_for(host, tmp_path))
        async with app.run_test(size=SIZE) as pilot:
            assert await until(pilot, lambda: f"pid {holder.pid}" in gpu_text(app)), gpu_text(app)
            text = gpu_text(app)
            assert f"⚠ pid {holder.pid} python" in text and "holds 7.8 GiB and is not the server" in text
            line = next(ln for ln in text.splitlines() if ln.startswith(" 1 "))
            assert "▓" in line  # the held memory has its own hatched part of GPU 1's bar
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()


async def test_no_gpu_data_without_nvml_or_smi(tmp_path: Path) -> None:
    app = dashboard(session_for(sim_host(tmp_path, nvml="absent", nvidia_smi=False), tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        assert await until(pilot, lambda: "no GPU data" in gpu_text(app)), gpu_text(app)
        assert "● connected" in status_text(app)


async def test_unknown_host_asks_and_connects_when_accepted(tmp_path: Path, sshd: SshdHost) -> None:
    known = tmp_path / "known_hosts"
    host = sim_host(tmp_path, ssh=sshd)
    session = session_for(host, tmp_path, ssh=target(sshd, known_hosts=known))
    app = dashboard(session)
    async with app.run_test(size=SIZE) as pilot:
        assert await until(pilot, lambda: on_screen(app, HostKeyScreen))
        dialog = app.screen
        assert isinstance(dialog, HostKeyScreen) and dialog.fingerprint == session.fingerprint
        assert "unknown host key" in status_text(app) and not known.exists()
        await pilot.press("y")
        assert await until(pilot, lambda: session.link is LinkState.CONNECTED), session.link_message
        assert await until(pilot, lambda: "● connected" in status_text(app))
        assert known.read_text().startswith(f"[{sshd.host}]:{sshd.port} ")


async def test_unknown_host_declined_stays_disconnected(tmp_path: Path, sshd: SshdHost) -> None:
    known = tmp_path / "known_hosts"
    session = session_for(sim_host(tmp_path, ssh=sshd), tmp_path, ssh=target(sshd, known_hosts=known))
    app = dashboard(session)
    async with app.run_test(size=SIZE) as pilot:
        assert await until(pilot, lambda: on_screen(app, HostKeyScreen))
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, HostKeyScreen)
        assert session.link is LinkState.UNKNOWN_HOST and not known.exists()
        assert "fingerprint" in gpu_text(app)  # the message stays on screen
        await pilot.press("r")  # asks again
        assert await until(pilot, lambda: on_screen(app, HostKeyScreen))
