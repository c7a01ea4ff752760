"""L, S and R on the dashboard against a local simulated host: the launcher starts real (simulated)
servers; the confirmations show what will be stopped and the flags that change; a rejected launch
offers the form on its field. Every server started is killed by its process group at the end."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.widgets import Static

from gdnconsole.cli.launch import stop_owned
from gdnconsole.config.hosts import Host, Speculative
from gdnconsole.host import launcher
from gdnconsole.host.journal import Journal
from gdnconsole.host.session import HostSession
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.confirm import ConfirmScreen
from gdnconsole.ui.screens.flagform import FlagFormScreen
from tests.host.launchkit import alive, kill_group, launch_host
from tests.ui.dashboard_helpers import SIZE, on_screen, session_for, status_text, until
from tests.ui.form_helpers import field_error

NOTES: dict[int, list[str]] = {}


@contextlib.asynccontextmanager
async def launching(tmp_path: Path, host: Host, **options: object) -> AsyncIterator[DashboardApp]:
    """The dashboard on ``host``, its journal in tmp_path; kills what it launched, by process group."""
    session = session_for(host, tmp_path)
    groups: set[int] = set()

    def remember(topic: str) -> None:
        record = session.launched
        if topic == "launched" and record is not None and record.pgid is not None:
            groups.add(record.pgid)

    session.subscribe(remember)
    app = DashboardApp([session], journal_dir=tmp_path / "journal", **options)  # type: ignore[arg-type]
    notify = app.notify

    def kept(message: str, **kwargs: object) -> None:  # every notification, for a failed wait's message
        NOTES.setdefault(id(app), []).append(message)
        notify(message, **kwargs)  # type: ignore[arg-type]

    app.notify = kept  # type: ignore[method-assign]
    try:
        yield app
    finally:
        for pgid in groups:
            kill_group(pgid)


def session_of(app: DashboardApp) -> HostSession:
    return app.sessions[0]


def journal_of(app: DashboardApp) -> Journal:
    return app.dashboard.journal(0)


def said(app: DashboardApp) -> str:
    """The status bar and the notifications shown, for a failed wait's message."""
    return "\n".join([status_text(app), *NOTES.get(id(app), [])])


def dialog_text(app: DashboardApp) -> str:
    return "\n".join(str(s.render()) for s in app.screen.query(Static))


async def connect(pilot, app: DashboardApp) -> None:  # type: ignore[no-untyped-def]
    session = session_of(app)
    assert await until(pilot, lambda: session.complete and session.pidfile_seen, 30), session.link_message


async def launch_ready(pilot, app: DashboardApp) -> int:  # type: ignore[no-untyped-def]
    """Press L and wait until the attempt is ready; the server's pid."""
    await pilot.press("L")
    assert await until(pilot, lambda: "✔ attempt 1 ready" in status_text(app), 60), said(app)
    pid = session_of(app).launched_pid
    assert pid is not None
    assert await until(pilot, lambda: session_of(app).server is not None, 20)
    return pid


async def test_launch_then_stop_with_confirmation(tmp_path: Path) -> None:
    async with launching(tmp_path, launch_host(tmp_path)) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        pid = await launch_ready(pilot, app)
        attempts = journal_of(app).attempts()
        assert [(a.number, a.outcome in ("ready", "verified"), a.pid) for a in attempts] == [(1, True, pid)]
        # The verification prompt follows ready: a real answer makes the attempt "verified".
        assert await until(pilot, lambda: journal_of(app).attempts()[-1].outcome == "verified", 30)
        assert await until(pilot, lambda: "✔ attempt 1 verified" in status_text(app), 5), status_text(app)
        await pilot.press("L")  # a server runs: L does not start another
        await pilot.pause()
        assert len(journal_of(app).attempts()) == 1
        await pilot.press("S")
        assert await until(pilot, lambda: on_screen(app, "confirm-stop"), 5)
        text = dialog_text(app)
        assert f"server pid {pid} · process group" in text and f"pid {pid}" in text and "up " in text
        assert "sglang::scheduler_TP0" in text and "SIGKILL to the process group after 30 s" in text
        await pilot.press("n")  # nothing happens
        await pilot.pause()
        assert session_of(app).launched_pid == pid
        await pilot.press("S")
        assert await until(pilot, lambda: on_screen(app, "confirm-stop"), 5)
        await pilot.press("y")
        assert await until(pilot, lambda: session_of(app).server is None, 40)
        assert journal_of(app).attempts()[-1].outcome == "verified"  # what it reached; stopping keeps it
        await session_of(app).stop()


async def test_relaunch_shows_the_flag_diff_and_replaces_the_server(tmp_path: Path) -> None:
    host = launch_host(tmp_path, release_lag_s=1.5)  # the old server's memory lingers a while
    async with launching(tmp_path, host) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        old = await launch_ready(pilot, app)
        profile = app.dashboard.profile(0)
        app.dashboard.profiles[0] = dataclasses.replace(profile, mem_fraction=0.8)
        await pilot.press("R")
        assert await until(pilot, lambda: on_screen(app, "confirm-relaunch"), 5)
        text = dialog_text(app)
        assert "+ --mem-fraction-static 0.8" in text and f"server pid {old}" in text
        await pilot.press("y")
        seen: list[str] = []

        def ready_again() -> bool:
            seen.append(status_text(app))
            return "✔ attempt 2 ready" in seen[-1] or "✔ attempt 2 verified" in seen[-1]

        assert await until(pilot, ready_again, 60), said(app)
        assert any("◐ relaunch: " in line for line in seen)  # the stages went by in the status bar
        new = session_of(app).launched_pid
        assert new is not None and new != old
        attempts = journal_of(app).attempts()
        assert all(a.outcome in ("ready", "verified") for a in attempts) and len(attempts) == 2
        assert "+ --mem-fraction-static 0.8" in attempts[-1].diff
        # The relaunch rotated the log (LOG.1): our own doing, so no toast says the log was replaced.
        assert session_of(app).log.resets >= 1
        assert not [n for n in NOTES.get(id(app), []) if "truncated or replaced" in n], NOTES[id(app)]
        await session_of(app).stop()


async def test_rejected_launch_offers_the_form_on_the_field(tmp_path: Path) -> None:
    host = launch_host(tmp_path)
    bad = dataclasses.replace(host.profiles["final"], speculative=Speculative("NEXTN", None, 1, 2))
    host = dataclasses.replace(host, profiles={"final": bad})
    async with launching(tmp_path, host) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        await pilot.press("L")
        assert await until(pilot, lambda: on_screen(app, "confirm-rejected"), 10)
        text = dialog_text(app)
        assert "nothing was started" in text and "spec.topk_without_steps" in text
        assert session_of(app).server is None
        assert journal_of(app).attempts()[-1].outcome == "rejected"
        await pilot.press("y")
        assert await until(pilot, lambda: on_screen(app, FlagFormScreen), 5)
        form = app.screen
        assert isinstance(form, FlagFormScreen)
        assert await until(pilot, lambda: bool(field_error(form, "eagle_topk")), 5)
        assert app.focused is not None and app.focused.id == "ff-eagle_topk"
        await session_of(app).stop()


async def test_readonly_hides_the_launch_keys(tmp_path: Path) -> None:
    async with (
        launching(tmp_path, launch_host(tmp_path), readonly=True) as app,
        app.run_test(size=SIZE) as pilot,
    ):
        await connect(pilot, app)
        actions = {b.action for _ns, b, enabled, _t in app.screen.active_bindings.values() if enabled}
        assert "edit" in actions and not actions & {"launch", "relaunch", "stop"}
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert "Edit flags" in titles and "Launch" not in titles
        await pilot.press("L")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen) and session_of(app).server is None
        await session_of(app).stop()


async def test_a_server_that_crashes_after_ready_is_journaled_crashed(tmp_path: Path) -> None:
    # crash-serving: the first real request (the verification prompt) kills the scheduler.
    async with (
        launching(tmp_path, launch_host(tmp_path, scenario="crash-serving")) as app,
        app.run_test(size=SIZE) as pilot,
    ):
        await connect(pilot, app)
        await pilot.press("L")
        assert await until(pilot, lambda: journal_of(app).attempts()[-1:] != [], 20)

        def crashed() -> bool:
            last = journal_of(app).attempts()[-1]
            return last.outcome == "crashed" and last.fatal is not None

        assert await until(pilot, crashed, 60), said(app)
        assert "✖ attempt 1 crashed" in status_text(app)
        await session_of(app).stop()


async def test_a_bug_in_a_launch_is_said_as_one_and_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _console_log: Path
) -> None:
    """Not "launch failed: …" as if the host had refused: a bug toast, its traceback in the console log."""

    async def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("pid")

    monkeypatch.setattr(launcher, "launch", broken)
    async with launching(tmp_path, launch_host(tmp_path)) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        await pilot.press("L")
        assert await until(pilot, lambda: any("failed unexpectedly" in n for n in NOTES.get(id(app), [])), 10)
        [note] = [n for n in NOTES[id(app)] if "failed unexpectedly" in n]
        assert "launch failed unexpectedly: KeyError: 'pid'" in note and str(_console_log) in note
        logged = _console_log.read_text()
        assert "Traceback" in logged and "KeyError: 'pid'" in logged and "in broken" in logged
        assert 0 not in app.dashboard.launches.progress  # not left "launching…"
        await session_of(app).stop()


async def test_a_relaunch_the_rules_reject_asks_nothing_first(tmp_path: Path) -> None:
    """ctrl+l in the form with a rule error: the rejection at once, not the relaunch question first (whose
    diff does not mention the error), and the running server left alone."""
    host = launch_host(tmp_path)
    bad = dataclasses.replace(host.profiles["final"], speculative=Speculative("NEXTN", None, 1, 2))
    async with launching(tmp_path, host) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        pid = await launch_ready(pilot, app)
        app.dashboard.launches.relaunch(0, bad)  # what the form's ctrl+l does with its profile
        assert await until(pilot, lambda: on_screen(app, "confirm-rejected"), 10), app.screen.id
        assert "spec.topk_without_steps" in dialog_text(app)
        assert journal_of(app).attempts()[-1].outcome == "rejected"
        assert session_of(app).launched_pid == pid  # nothing was stopped
        await pilot.press("n")
        await session_of(app).stop()


async def test_r_on_a_connected_host_makes_the_link_anew(tmp_path: Path) -> None:
    """`r` on a connected host said "already connecting" and did nothing: now it reconnects, at once."""
    async with launching(tmp_path, launch_host(tmp_path)) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        session = session_of(app)
        assert session.connects == 1
        await pilot.press("r")
        assert await until(pilot, lambda: session.connects == 2 and session.complete, 20), said(app)
        notes = NOTES.get(id(app), [])
        assert "simbox: reconnecting" in " ".join(notes) and "already connecting" not in " ".join(notes)
        assert session.down_since is None  # not a failure
        await session.stop()


async def test_a_relaunch_follows_the_new_startup_even_when_the_log_was_scrolled_up(tmp_path: Path) -> None:
    async with launching(tmp_path, launch_host(tmp_path)) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        await launch_ready(pilot, app)
        view = app.dashboard.host_pane(0).log_pane.view
        await pilot.press("up", "up", "up")  # reading an older line: the view stops sticking to the tail
        assert not view.tail
        await pilot.press("R")
        assert await until(pilot, lambda: on_screen(app, "confirm-relaunch"), 5)
        await pilot.press("y")
        assert await until(
            pilot,
            lambda: "attempt 2 ready" in status_text(app) or "attempt 2 verified" in status_text(app),
            60,
        ), said(app)
        assert await until(pilot, lambda: view.tail and view.cursor == view.rows.count - 1, 10), (
            view.tail,
            view.cursor,
        )
        await session_of(app).stop()


async def test_the_demo_launches_through_the_agent_and_its_end_stops_what_it_started(tmp_path: Path) -> None:
    """`gdnconsole demo`: its server is a launch like any other (journaled, its own process group), a
    relaunch is a relaunch (no question to adopt the demo's own server), and at the end the server the
    demo started last is stopped, not the first one (which a relaunch already ended)."""
    host = launch_host(tmp_path)
    async with launching(tmp_path, host, launch={0: "final"}) as app:  # kills what is left, at its end
        async with app.run_test(size=SIZE) as pilot:
            session = session_of(app)
            assert await until(pilot, lambda: "✔ attempt 1" in status_text(app), 60), said(app)
            first = session.launched_pid
            assert first is not None and journal_of(app).attempts()[0].pid == first
            await pilot.press("R")
            assert await until(pilot, lambda: on_screen(app, "confirm-relaunch"), 5), app.screen.id
            await pilot.press("y")
            assert await until(pilot, lambda: "✔ attempt 2" in status_text(app), 60), said(app)
            second = session.launched_pid
            assert second is not None and second != first
            await app.action_quit()
        said_at_end = await asyncio.to_thread(stop_owned, host)  # what `gdnconsole demo` does at its end
        assert said_at_end.startswith(f"stopped the demo server, pid {second} (sigterm"), said_at_end
        assert not alive(first) and not alive(second)  # stop returns once the agent saw it end
        nothing = await asyncio.to_thread(stop_owned, host)
        assert nothing == "nothing to stop: no server gdnconsole launched or adopted runs on simbox"
