"""Alerts (ui/alerts.py): the per-host state machine as pure logic, then once on the dashboard through
Pilot, toasts and the bell."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gdnconsole.host.link import LinkState
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.models.alerts import SLOW_STARTUP_S, HostAlerts, Look
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, fixed_clock, serving_session, until

UP = Look(connected=True, pid=4242)
SERVER = (4242, 0)


def said(alerts: HostAlerts, *looks: Look) -> list[tuple[str, str, str, bool]]:
    out = []
    for look in looks:
        out += [(a.kind, a.message, a.severity, a.bell) for a in alerts.observe(look)]
    return out


def test_the_first_complete_look_is_the_baseline() -> None:
    alerts = HostAlerts("ct129")
    old = dataclasses.replace(UP, ready=True, serving=SERVER, verified=True, fatal=None, exits=((4000, 1),))
    assert said(alerts, old, old) == []


def test_ready_then_verified_once_each_and_the_bell_only_after_a_slow_startup() -> None:
    alerts = HostAlerts("ct129")
    quick = dataclasses.replace(UP, ready=True, startup_s=12.0)
    assert said(alerts, UP, quick, quick) == [
        ("ready", "ct129: server ready (pid 4242) after 12s", "information", False)
    ]
    verified = dataclasses.replace(quick, serving=SERVER, verified=True, latency_ms=830.0)
    assert said(alerts, verified, verified) == [
        ("verified", "ct129: VERIFIED: the model answered in 830 ms", "information", False)
    ]
    slow = HostAlerts("ct129")
    took = SLOW_STARTUP_S + 32
    ready = dataclasses.replace(UP, ready=True, startup_s=took)
    events = said(slow, UP, ready, dataclasses.replace(ready, serving=SERVER, verified=True))
    assert [(kind, bell) for kind, _m, _s, bell in events] == [
        ("ready", True),
        ("verified", False),
    ]  # one bell
    assert events[0][1] == "ct129: server ready (pid 4242) after 1m02s"


def test_verify_failed_and_verified_lost() -> None:
    alerts = HostAlerts("ct129")
    ready = dataclasses.replace(UP, ready=True)
    failed = dataclasses.replace(ready, serving=SERVER, verified=False, reason="timed out after 60 s")
    assert said(alerts, ready, failed)[-1:] == [
        ("verify-failed", "ct129: VERIFY FAILED: timed out after 60 s", "error", True)
    ]
    alerts = HostAlerts("ct129")
    verified = dataclasses.replace(ready, serving=SERVER, verified=True)
    lost = dataclasses.replace(verified, verified=False, reason="health check: HTTP 503")
    events = said(alerts, verified, lost, lost)
    assert events == [("verified-lost", "ct129: VERIFIED LOST: health check: HTTP 503", "error", True)]
    # A new server starts over: its VERIFY FAILED is not a loss.
    other = dataclasses.replace(lost, pid=5000, generation=1, serving=(5000, 1), reason="empty answer")
    assert said(alerts, other)[-1][0] == "verify-failed"


def test_a_crash_is_said_once_from_the_log_or_the_exit() -> None:
    alerts = HostAlerts("ct129")
    fatal = dataclasses.replace(UP, fatal="torch.OutOfMemoryError: CUDA out of memory (log line 212)")
    exited = dataclasses.replace(fatal, pid=None, exits=((4242, 1),))
    assert said(alerts, UP, fatal, exited) == [
        ("crashed", "ct129: server crashed: torch.OutOfMemoryError: CUDA out of memory (log line 212)",
         "error", True)
    ]  # fmt: skip
    alerts = HostAlerts("ct129")
    assert said(alerts, UP, dataclasses.replace(UP, pid=None, exits=((4242, -6),))) == [
        ("crashed", "ct129: server 4242 exited: exit status -6, nothing fatal in its log yet", "error", True)
    ]
    alerts = HostAlerts("ct129")  # stopped from elsewhere: said, without the bell
    assert said(alerts, UP, dataclasses.replace(UP, pid=None, exits=((4242, None),))) == [
        ("exited", "ct129: server 4242 exited: stopped outside this console", "warning", False)
    ]
    alerts = HostAlerts("ct129")  # stopped by this console: nothing to say
    assert said(alerts, UP, dataclasses.replace(UP, pid=None, exits=((4242, -15),), expected_exit=True)) == []
    # An old crash in the log is the baseline, but the exit of its server is still news, with its cause.
    alerts = HostAlerts("ct129")
    assert said(alerts, fatal, exited)[0][1].startswith("ct129: server 4242 exited: torch.OutOfMemoryError")


def test_link_lost_and_back_are_said_on_every_look_even_while_catching_up() -> None:
    alerts = HostAlerts("ct129")
    down = Look(connected=False, link_message="connection reset", complete=False)
    back = dataclasses.replace(UP, complete=False)
    assert said(alerts, UP, down, down, back, UP) == [
        ("link-lost", "ct129: link lost: connection reset", "warning", True),
        ("link-back", "ct129: link back", "information", False),
    ]
    assert said(HostAlerts("ct129"), UP, dataclasses.replace(down, stopping=True)) == []  # quitting
    assert said(HostAlerts("ct129"), Look(connected=False), UP) == []  # a first connect is not a return


def test_what_happened_during_an_outage_is_said_when_the_log_is_caught_up() -> None:
    alerts = HostAlerts("ct129")
    catching_up = Look(connected=True, complete=False, ready=True, pid=4242)
    events = said(
        alerts, UP, Look(connected=False), catching_up, dataclasses.replace(catching_up, complete=True)
    )
    assert [kind for kind, *_ in events] == ["link-lost", "link-back", "ready"]


async def test_the_dashboard_toasts_and_rings(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    app = DashboardApp([session], start=False, clock=fixed_clock, bell=True)
    toasts: list[tuple[str, str]] = []
    bells: list[int] = []
    app.notify = lambda message, **kw: toasts.append((message, str(kw.get("severity", ""))))  # type: ignore[assignment,method-assign]
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert toasts == [] and bells == []  # a server serving when the console opened is not news
        session._set_link(LinkState.DOWN, "connection reset")
        assert await until(pilot, lambda: len(toasts) == 1, 5)
        assert toasts == [("ct129: link lost: connection reset", "warning")] and bells == [1]
        session._set_link(LinkState.CONNECTED)
        assert await until(pilot, lambda: len(toasts) == 2, 5)
        assert toasts[1] == ("ct129: link back", "information") and bells == [1]
        session.handle({"type": "server_exit", "pid": 4242, "pgid": 4242, "returncode": -6, "t": 0.0})
        assert await until(pilot, lambda: len(toasts) == 3, 5)
        assert toasts[2] == (
            "ct129: server 4242 exited: exit status -6, nothing fatal in its log yet",
            "error",
        )
        assert bells == [1, 1]
        session.handle({"type": "server_exit", "pid": 4242, "pgid": 4242, "returncode": -6, "t": 0.0})
        await settle(pilot)
        assert len(toasts) == 3  # once per event


async def test_no_bell_unless_configured(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    app = DashboardApp([session], start=False, clock=fixed_clock)
    bells: list[int] = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session._set_link(LinkState.DOWN, "connection reset")
        await settle(pilot)
        assert bells == []
