"""How the dashboard looks, from sessions whose state is set by fixed agent messages and a fixed clock
(regenerate with `pytest tests/ui --snapshot-update`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from gdnconsole.host.link import LinkState
from gdnconsole.host.session import HostSession
from gdnconsole.ui.app import DashboardApp
from tests.ui.conftest import after, settle
from tests.ui.dashboard_helpers import (
    SIZE,
    crashed_session,
    fixed_clock,
    local_host,
    refused_session,
    serving_session,
)

SnapCompare = Callable[..., bool]
SMALL = (80, 24)


def fixed_app(*sessions: HostSession) -> DashboardApp:
    return DashboardApp(list(sessions), start=False, clock=fixed_clock)


def three_hosts(tmp_path: Path) -> DashboardApp:
    return fixed_app(serving_session(tmp_path), crashed_session(tmp_path), refused_session(tmp_path))


def test_one_host_serving(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(fixed_app(serving_session(tmp_path)), terminal_size=SIZE, run_before=after())


def test_three_hosts(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(three_hosts(tmp_path), terminal_size=SIZE, run_before=after())


def test_leftovers_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    app = three_hosts(tmp_path)
    assert snap_compare(app, terminal_size=SMALL, run_before=after("2"))


def test_unknown_host_dialog(snap_compare: SnapCompare, tmp_path: Path) -> None:
    session = HostSession(local_host("ct129"), mirror=tmp_path / "mirror.log")

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        session.fingerprint = "SHA256:3q2+7w1bZk6cFh0tYw0Xl8y4Yv4o3cD0mQ9sLr2pNnE"
        session._set_link(
            LinkState.UNKNOWN_HOST,
            f"ct129 is not in /root/.ssh/known_hosts; its host key fingerprint is {session.fingerprint}. "
            "Accept it only if it matches the key of the real host.",
        )
        await settle(pilot)

    assert snap_compare(fixed_app(session), terminal_size=SIZE, run_before=run_before)
