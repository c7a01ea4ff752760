"""How the dashboard fits 80x24, 120x36, 160x40 and 200x50 with everything at once: a VERIFY FAILED with a
long reason, a launch's progress note in the status bar, and four toasts (regenerate with
`pytest tests/ui/test_fit_snapshots.py --snapshot-update`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.screens.launchcontrol import Progress
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import fixed_clock, serving_session

SnapCompare = Callable[..., bool]
NOTE = "waiting for GPU memory to be released: GPU 0 31480 MiB, GPU 1 30990 MiB, then loading weights"


def crowded(tmp_path: Path) -> DashboardApp:
    session = serving_session(tmp_path)
    session.prober.sync()
    session.serving.verified = False
    session.serving.reason = "ReadTimeout after 30 s: the server took the request and did not answer"
    return DashboardApp([session], start=False, clock=fixed_clock)


async def with_note_and_toasts(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, DashboardApp)
    dashboard = app.dashboard
    dashboard.launches.progress[0] = Progress("relaunch", NOTE, fixed_clock() - 12)
    dashboard._launch_changed(0)
    for n, severity in enumerate(("information", "warning", "information", "error"), 1):
        app.notify(f"toast {n}: something the console said about ct129", severity=severity, timeout=600)  # type: ignore[arg-type]
        await pilot.pause()
    await settle(pilot)


@pytest.mark.parametrize("size", [(80, 24), (120, 36), (160, 40), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_crowded_dashboard(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(crowded(tmp_path), terminal_size=size, run_before=with_note_and_toasts)
