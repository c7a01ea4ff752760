"""Several hosts: overview rows, tabs switched by keys and clicks; help and the command palette list every
binding; the host picker; the GPU and status lines rendered from fixed session state."""

from __future__ import annotations

import re
from pathlib import Path

from textual.binding import Binding
from textual.command import CommandList
from textual.widgets import ContentSwitcher

from gdnconsole.config.hosts import Host
from gdnconsole.host.link import LinkState
from gdnconsole.host.session import HostSession
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.askname import AskNameScreen
from gdnconsole.ui.dialogs.confirm import ConfirmScreen
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.dialogs.hostkey import HostKeyScreen
from gdnconsole.ui.screens.dashboard import DashboardScreen, OverviewRow
from gdnconsole.ui.screens.flagform import FlagFormScreen
from gdnconsole.ui.screens.hostpicker import HostPickerScreen
from gdnconsole.ui.screens.journal import JournalScreen
from gdnconsole.ui.widgets.logpane import LogPane
from gdnconsole.ui.widgets.logview import LogView
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import (
    SIZE,
    crashed_session,
    fixed_clock,
    gpu_text,
    help_table_text,
    local_host,
    refused_session,
    serving_session,
    status_text,
    until,
)


def fixed_app(*sessions: HostSession) -> DashboardApp:
    return DashboardApp(list(sessions), start=False, clock=fixed_clock)


def overview(app: DashboardApp) -> list[str]:
    return [str(row.render()) for row in app.dashboard.query(OverviewRow)]


async def test_two_hosts_two_tabs_and_overview_rows(tmp_path: Path) -> None:
    app = fixed_app(serving_session(tmp_path), crashed_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tabs = app.dashboard.query_one("#hosts", ContentSwitcher)
        assert len(tabs.children) == 2 and tabs.current == "host-0"
        rows = overview(app)
        assert rows[0].startswith("▶1 ct129") and "● connected" in rows[0] and "serving" in rows[0]
        assert "2/2 GPUs 88.1/96.0 GiB" in rows[0] and "45.5 tok/s accept 1.85" in rows[0]
        assert rows[1].startswith(" 2 ct130") and "failed in graphs" in rows[1] and "tok/s" not in rows[1]
        await pilot.press("right_square_bracket")
        assert tabs.current == "host-1" and overview(app)[1].startswith("▶2")
        assert isinstance(app.focused, LogView) and app.focused in app.dashboard.host_pane(1).query(LogView)
        await pilot.press("right_square_bracket")  # wraps around
        assert tabs.current == "host-0"
        await pilot.press("left_square_bracket")
        assert tabs.current == "host-1"
        await pilot.press("1")
        assert tabs.current == "host-0"
        await pilot.click("#overview-1")
        assert tabs.current == "host-1"


async def test_one_host_has_no_overview(tmp_path: Path) -> None:
    app = fixed_app(serving_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.dashboard.query(OverviewRow)
        status = status_text(app)
        assert status.startswith("ct129 │ ● connected 3 ms │ SGLang 0.5.11 │ server pid 4242 up 12m34s")
        assert "● serving" in status and "45.5 tok/s accept 1.85" in status


async def test_gpu_panel_from_fixed_state(tmp_path: Path) -> None:
    app = fixed_app(serving_session(tmp_path), crashed_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = gpu_text(app, 0)
        assert " 0 RTX A6000 TP0" in text and " 1 RTX A6000 TP1" in text
        assert "weights 25.6" in text and "KV 2.6" in text and "mamba 13.5" in text and "graphs 0.4" in text
        assert "44.1/48.0 GiB  87%" in text and "not the server" not in text
        await pilot.press("2")  # a hidden tab has no width to render at
        await settle(pilot)
        text = gpu_text(app, 1)
        assert " 0 RTX A6000 –" in text  # no rank: the server is gone
        assert "⚠ pid 6001 python3 holds 1.9 GiB and is not the server" in text
        assert "⚠ pid 5120 sglang::scheduler_TP1 (its server is gone) holds 30.3 GiB" in text


async def test_failed_link_is_shown_without_a_prompt(tmp_path: Path) -> None:
    app = fixed_app(refused_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "✖ auth failed" in status_text(app)
        assert "authentication failed: Permission denied" in gpu_text(app)
        assert not isinstance(app.screen, HostKeyScreen)


async def test_a_session_that_crashed_says_so(tmp_path: Path) -> None:
    session = refused_session(tmp_path)
    session._set_link(
        LinkState.CRASHED, "ct131: the link failed unexpectedly: KeyError: 'x' (traceback in LOG)"
    )
    app = fixed_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "✖ gdnconsole bug (r: retry)" in status_text(app)
        assert "the link failed unexpectedly: KeyError: 'x' (traceback in LOG)" in gpu_text(app)


async def test_help_lists_every_binding(tmp_path: Path) -> None:
    app = fixed_app(serving_session(tmp_path), crashed_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        table = help_table_text(app)
        for owner in (DashboardScreen, LogPane, LogView, HostKeyScreen, FlagFormScreen, JournalScreen,
                      ConfirmScreen, AskNameScreen):  # fmt: skip
            for binding in owner.BINDINGS:
                assert isinstance(binding, Binding) and binding.id and binding.id in table
        assert re.search(r"^E +First error", table, re.M)  # the dashboard's `e` edits the flags
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)


async def test_command_palette_offers_the_same_actions(tmp_path: Path) -> None:
    app = fixed_app(serving_session(tmp_path), crashed_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        for title in ("Next host", "Reconnect", "Help", "Follow", "Filter", "First error", "Host 2"):
            assert title in commands
        assert "dash.next_host" in commands["Next host"].help
        await pilot.press("ctrl+p", *"Host", "space", "2")  # the real palette, searching

        def offered() -> bool:
            found = app.screen.query(CommandList)
            return bool(found) and any("Host 2" in str(o.prompt) for o in found.first().options)

        assert await until(pilot, offered, 5)
        await pilot.press("enter")
        assert await until(
            pilot, lambda: app.dashboard.query_one("#hosts", ContentSwitcher).current == "host-1", 5
        )


async def test_host_picker_opens_marked_hosts(tmp_path: Path) -> None:
    fixed = {"ct129": serving_session(tmp_path, "ct129", 0), "ct130": crashed_session(tmp_path, "ct130", 1)}

    def factory(host: Host, index: int) -> HostSession:
        return fixed[host.name]

    choices = [local_host("ct129"), local_host("ct130"), local_host("ct131")]
    app = DashboardApp(choices=choices, factory=factory, start=False, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HostPickerScreen)
        await pilot.press("space", "space", "enter")  # mark ct129 and ct130, open them
        await settle(pilot)
        assert [s.host.name for s in app.dashboard.sessions] == ["ct129", "ct130"]
        assert len(overview(app)) == 2


async def test_a_toast_is_plain_text_whatever_a_host_or_log_said(tmp_path: Path) -> None:
    """A fatal summary with "[/]" was read as markup (a MarkupError, or a style applied), and one with
    ESC reached the terminal: every toast is plain text with its control characters made visible."""
    app = fixed_app(serving_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.notify("server crashed: [bold]oops[/] \x1b[2Jcleared", title="a\x07b")
        await settle(pilot)
        [toast] = [n for n in app._notifications if "oops" in n.message]
        assert toast.message == "server crashed: [bold]oops[/] ^[[2Jcleared" and not toast.markup
        assert toast.title == "a^Gb"
