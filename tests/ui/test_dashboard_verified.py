"""VERIFIED on the dashboard: set by a real answer, shown in the status bar and the timeline, and lost
visibly when the server stops answering."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from gdnconsole.host.serving import ProbeTiming
from gdnconsole.host.session import HostSession
from tests.host.test_session import FAST_BACKOFF, sim_host, sim_server
from tests.ui.dashboard_helpers import SIZE, dashboard, status_text, until

__all__ = ["sim_server"]  # fixture

QUICK = ProbeTiming(backoff=(0.05, 0.1, 0.2), healthy_every=0.2, health_timeout=1.0)


def timeline_text(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.dashboard.host_pane(0).log_pane.timeline.render())


async def test_verified_shows_and_is_lost_visibly(tmp_path: Path, sim_server) -> None:
    host = sim_host(tmp_path)
    session = HostSession(
        host, sample_interval=0.1, backoff=FAST_BACKOFF, mirror=tmp_path / "mirror.log", probe=QUICK
    )
    app = dashboard(session)
    async with app.run_test(size=SIZE) as pilot:
        server = sim_server(host)
        assert await until(pilot, lambda: "✔ VERIFIED" in status_text(app), 60), status_text(app)
        assert await until(pilot, lambda: "✓ verified" in timeline_text(app)), timeline_text(app)
        os.kill(server.pid, signal.SIGSTOP)  # the process lives, and answers nothing
        try:
            assert await until(pilot, lambda: "✖ VERIFIED LOST" in status_text(app), 30), status_text(app)
            assert "health check failed" in status_text(app)
            assert "verify failed" in timeline_text(app)
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert await until(pilot, lambda: "✔ VERIFIED" in status_text(app), 30), status_text(app)
