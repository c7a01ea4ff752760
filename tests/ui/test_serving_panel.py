"""The serving strip on each host's tab and the serving screen (`v`), on the dashboard (Pilot).

The session's watch is fed as the agent's frames would feed it (``figures.take`` of a ``serving`` frame, or
a feed of rounds set by hand, tests/ui/servingshot.py), then the session notifies "figures": the strip of
the tab on screen repaints, a hidden tab's does not until it is shown, and the dashboard wants the figures
of the host on screen only.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.text import Text
from textual.widgets import Static

from gdnconsole.host.link import LinkState
from gdnconsole.host.session import HostSession
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.screens.dashboard import DashboardScreen
from gdnconsole.ui.screens.serving import ServingScreen
from gdnconsole.ui.widgets.servingstrip import ServingStrip
from tests.host.test_session import sim_host
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import (
    SIZE,
    crashed_session,
    dashboard,
    fixed_clock,
    on_screen,
    serving_session,
    session_for,
    until,
)
from tests.ui.servingshot import fed, message, rounds, tuned_store, with_figures
from tests.ui.test_keymap import help_rows, palette

WIDE = (160, 40)


def app_of(*sessions: HostSession, journal: Path | None = None) -> DashboardApp:
    return DashboardApp(list(sessions), start=False, clock=fixed_clock, journal_dir=journal)


def strip_of(app: DashboardApp, index: int = 0) -> ServingStrip:
    dashboard = app.screen
    assert isinstance(dashboard, DashboardScreen)
    return dashboard.host_pane(index).serving_strip


def shown(strip: ServingStrip) -> str | None:
    """The strip's text as painted, None while it is hidden."""
    if not strip.display:
        return None
    return str(strip.content).strip()


def rendered(widget: Static) -> str:
    console = Console(width=200, record=True)
    console.print(widget.content)
    return console.export_text()


async def test_the_strip_shows_each_poll_of_the_host_on_screen(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    app = app_of(session)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        strip = strip_of(app)
        assert shown(strip) is None  # no figures yet: the row is the log's
        for round_ in rounds(3):
            session.figures.take(message(round_))  # the agent's frames, through the watch
        await settle(pilot)
        text = shown(strip)
        assert text == (
            "serving 25/96 · queue 2 · mamba 38% binds · 966 tok/s · TTFT p90 880 ms (1m) · accept 2.94 · /metrics"
        )


async def test_a_stale_poll_is_marked_with_its_age(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    app = app_of(session)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        with_figures(session, fed(stale_s=12.0))
        await settle(pilot)
        text = shown(strip_of(app))
        assert text is not None and text.endswith("/metrics · stale 12.0 s: /metrics: timed out after 2.0 s")


async def test_no_strip_without_a_server(tmp_path: Path) -> None:
    session = crashed_session(tmp_path, index=0)
    app = app_of(session)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        with_figures(session, fed())  # figures of the server before it ended
        await settle(pilot)
        assert shown(strip_of(app)) is None


async def test_a_hidden_tab_does_no_work_until_shown(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    first, second = serving_session(tmp_path), serving_session(tmp_path / "b", name="ct130", index=1)
    app = app_of(first, second)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        with_figures(second, fed())
        await settle(pilot)
        assert strip_of(app, 1).line is None  # tab 2 is not on screen: not painted
        await pilot.press("2")
        await settle(pilot)
        assert (shown(strip_of(app, 1)) or "").startswith("serving 71/96")


async def test_only_the_host_on_screen_is_wanted(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    first, second = serving_session(tmp_path), serving_session(tmp_path / "b", name="ct130", index=1)
    app = app_of(first, second)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        dashboard = app.screen
        assert isinstance(dashboard, DashboardScreen)
        assert not first.figures.wanted and not second.figures.wanted  # sessions it does not run
        dashboard.start = True  # as if it ran them: switching tabs moves the want
        await pilot.press("2")
        await settle(pilot)
        assert second.figures.owners == {dashboard} and not first.figures.wanted
        await pilot.press("1")
        await settle(pilot)
        assert first.figures.owners == {dashboard} and not second.figures.wanted


async def test_a_dashboard_that_runs_its_sessions_wants_the_host_on_screen(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    first = session_for(sim_host(tmp_path), tmp_path)
    second = session_for(sim_host(tmp_path / "b"), tmp_path / "b", index=1)
    app = dashboard(first, second)
    async with app.run_test(size=SIZE) as pilot:
        assert await until(pilot, lambda: first.link is LinkState.CONNECTED), first.link_message
        assert first.figures.owners == {app.screen} and not second.figures.wanted
        await pilot.press("2")
        assert await until(pilot, lambda: second.figures.wanted)
        assert not first.figures.wanted


async def test_the_serving_screen_shows_ranks_both_windows_sparks_and_tune(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    tuned_store(tmp_path / "journal", "ct129", session.host.profiles["qwen36-mtp"], session.host.python)
    app = app_of(session, journal=tmp_path / "journal")
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        with_figures(session, fed())
        await pilot.press("v")
        assert await until(pilot, lambda: on_screen(app, ServingScreen), 5)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ServingScreen)
        status = rendered(screen.query_one("#serving-status", Static))
        assert "SGLang 0.5.23 · from /metrics · 2 DP ranks · 1.2 s old" in status
        ranks = rendered(screen.query_one("#serving-ranks", Static)).splitlines()
        assert ranks[0].split() == ["DP", "running", "queued", "KV", "mamba", "binds", "tok/s", "cache",
                                    "hit", "accept", "aborted", "retracted"]  # fmt: skip
        assert [line.split() for line in ranks[2:4]] == [
            ["0", "34/48", "6", "42%", "58%", "mamba", "1070.0", "61%", "2.89", "2", "0"],
            ["1", "37/48", "1", "44%", "61%", "mamba", "1163.0", "58%", "2.92", "—", "1"],
        ]
        latency = rendered(screen.query_one("#serving-latency", Static))
        heads = latency.splitlines()[0].split()
        assert heads == ["1", "min", "5", "min"]
        ttft = next(line for line in latency.splitlines() if line.strip().startswith("TTFT"))
        assert ttft.split() == ["TTFT", "1.3", "s", "2.0", "s", "3.8", "s", "72", "658", "ms", "1.7", "s",
                                "3.4", "s", "216"]  # fmt: skip
        accept = rendered(screen.query_one("#serving-accept", Static))
        assert "2.91 live" in accept and "measured by tune (tune's best: s" in accept
        running = rendered(screen.query_one("#spark-running .spark-figures", Static))
        assert running.split()[:2] == ["71", "req"]
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)


async def test_the_serving_screen_repaints_on_each_poll(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    app = app_of(session)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await pilot.press("v")
        assert await until(pilot, lambda: on_screen(app, ServingScreen), 5)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ServingScreen)
        assert "no figures yet" in rendered(screen.query_one("#serving-status", Static))
        assert "no tune sweep of this profile as it is" in rendered(
            screen.query_one("#serving-accept", Static)
        )
        with_figures(session, fed(stale_s=12.0))
        await settle(pilot)
        status = rendered(screen.query_one("#serving-status", Static))
        assert "stale 12.0 s: /metrics: timed out after 2.0 s" in status


async def test_help_and_palette_list_the_serving_key(tmp_path: Path) -> None:
    app = app_of(serving_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        dashboard = app.screen
        offered = {binding_id: key for _title, binding_id, key in palette(dashboard) if binding_id}
        assert offered["dash.serving"] == "v"
        await pilot.press("question_mark")
        await settle(pilot)
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        rows = help_rows(help_screen)
        assert rows[("Serving figures", "dash.serving")] == {"v"}
        assert rows[("Close", "serving.close")] == {"escape", "q", "v"}


async def test_the_strip_takes_the_new_theme_s_colours(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    app = app_of(session)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        with_figures(session, fed())
        await settle(pilot)
        strip = strip_of(app)
        before = strip.content
        app.theme = "gdn-light"
        await settle(pilot)
        after = strip.content
        assert isinstance(before, Text) and isinstance(after, Text)
        assert after.plain == before.plain and after.spans != before.spans


async def test_the_strip_goes_when_the_server_ends(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    app = app_of(session)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        with_figures(session, fed())
        await settle(pilot)
        assert shown(strip_of(app)) is not None
        session.handle({"type": "processes", "servers": [], "orphans": []})
        await settle(pilot)
        assert shown(strip_of(app)) is None
