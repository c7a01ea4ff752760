"""The dashboard is told, it does not poll: the log pane of the tab on screen shows what the session read
as soon as the session says so; a hidden tab does nothing until it is shown, then catches up; a host's
change repaints its own overview row only. Sessions get agent messages by hand (no link)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gdnconsole.host.link import LinkState
from gdnconsole.host.session import HostSession
from gdnconsole.sglang.stages import Stage
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.widgets.hostpane import HostPane
from gdnconsole.ui.widgets.overview import OverviewRow
from gdnconsole.ui.widgets.statusbar import overview_rows
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import (
    SIZE,
    crashed_session,
    fixed_clock,
    gpu,
    refused_session,
    serving_session,
)


def fixed_app(*sessions: HostSession) -> DashboardApp:
    return DashboardApp(list(sessions), start=False, clock=fixed_clock)


def append_log(session: HostSession, lines: list[str]) -> None:
    """The agent's next log message: these lines after what the session has read."""
    data = "".join(line + "\n" for line in lines).encode()
    start = session.log.offset
    end = start + len(data)
    session.handle({"type": "log", "offset": start, "end": end, "size": end, "inode": 1, "raw": data})


def last_row(app: DashboardApp, index: int) -> str:
    view = app.dashboard.host_pane(index).log_pane.view
    return view.render_line(view.cursor - view.scroll_offset.y).text.strip()


async def test_a_line_the_session_read_is_shown_without_a_poll(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    app = fixed_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.dashboard.host_pane(0).log_pane
        before = pane.view.total
        assert pane.poll_interval is None  # the pane is told when the session read more: it never polls
        append_log(session, ["[2026-11-30 09:01:00] pushed, not polled"])
        await settle(pilot)
        assert pane.view.total == before + 1 and pane.view.tail
        assert last_row(app, 0).endswith("pushed, not polled")


async def test_a_hidden_tab_does_no_log_work_until_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown, hidden = serving_session(tmp_path), crashed_session(tmp_path)
    app = fixed_app(shown, hidden)
    refreshed: list[int] = []
    refresh = HostPane.refresh_host

    def counted(pane: HostPane) -> None:
        refreshed.append(app.dashboard.panes.index(pane))
        refresh(pane)

    monkeypatch.setattr(HostPane, "refresh_host", counted)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.dashboard.host_pane(1).log_pane
        total = pane.view.total
        refreshed.clear()
        append_log(hidden, ["[2026-11-30 09:07:00] written while nobody looked"])
        hidden.handle({"type": "gpus", "gpus": [gpu(0, 2410, 0, []), gpu(1, 4, 0, [])]})
        await settle(pilot)
        assert pane.view.total == total and 1 not in refreshed  # hidden: nothing read, nothing painted
        assert pane.first_error is not None  # yet what the log says is current (the session's parse)
        await pilot.press("2")
        await settle(pilot)
        assert pane.view.total == total + 1 and pane.view.tail and 1 in refreshed
        assert last_row(app, 1).endswith("written while nobody looked")
        assert "no GPU data" not in str(app.dashboard.host_pane(1).gpu_panel.render())


async def test_a_log_rotated_by_someone_else_goes_on_with_a_line_that_says_so(tmp_path: Path) -> None:
    """logrotate at midnight, or `> log`: the server that wrote the old file writes the new one, so its
    startup, its stage and what was proved of it still hold; a line says where the file restarted, as
    `tail -F` does. (This console's own launch starts the mirror anew: tests/ui/test_launch_keys.py.)"""
    session = serving_session(tmp_path)
    app = fixed_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.dashboard.host_pane(0).log_pane
        total, served = pane.view.total, pane.timeline_data
        session.handle({"type": "log_reset", "reason": "truncated", "inode": 1})
        append_log(session, ["[2026-11-30 09:20:00] Decode batch, #running-req: 1"])
        await settle(pilot)
        assert pane.view.total == total + 2 and last_row(app, 0).endswith("#running-req: 1")
        marker = f"gdnconsole: {session.log.path} was truncated (copytruncate, or `> log`)"
        assert marker in session.log.doc.path.read_text()  # type: ignore[union-attr]
        data = pane.timeline_data  # the same startup, still serving
        assert (
            served is not None
            and data is not None
            and (data.index, data.stage) == (served.index, Stage.SERVING)
        )


async def test_a_change_repaints_its_own_overview_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = [serving_session(tmp_path), crashed_session(tmp_path), refused_session(tmp_path)]
    app = fixed_app(*sessions)
    updated: list[int] = []
    update = OverviewRow.update

    def counted(row: OverviewRow, *args: Any, **kwargs: Any) -> None:
        updated.append(row.index)
        update(row, *args, **kwargs)

    monkeypatch.setattr(OverviewRow, "update", counted)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        updated.clear()
        sessions[1].handle({"type": "gpus", "gpus": [gpu(0, 2410, 0, []), gpu(1, 4, 0, [])]})
        await settle(pilot)
        assert updated == [1]
        updated.clear()
        sessions[1].handle({"type": "gpus", "gpus": [gpu(0, 2410, 0, []), gpu(1, 4, 0, [])]})
        await settle(pilot)
        assert updated == []  # the same sample again: the row's text did not change


@pytest.mark.parametrize("width", [160, 80, 44])
async def test_overview_rows_are_those_of_overview_rows(tmp_path: Path, width: int) -> None:
    """Kept one host at a time, the rows are what laying out all hosts at once gives, as hosts change."""
    sessions = [serving_session(tmp_path), crashed_session(tmp_path), refused_session(tmp_path)]
    app = fixed_app(*sessions)

    def shown() -> list[str]:
        return [str(row.render()) for row in app.dashboard.query(OverviewRow)]

    def expected() -> list[str]:
        active = app.dashboard.active_index
        labels = [f"{'▶' if i == active else ' '}{i + 1}" for i in range(len(sessions))]
        return [row.plain for row in overview_rows(sessions, app.palette, labels, width - 2)]

    async with app.run_test(size=(width, SIZE[1])) as pilot:
        await settle(pilot)
        assert shown() == expected()
        sessions[2]._set_link(LinkState.CONNECTED)  # a longer link cell: the columns move
        await settle(pilot)
        assert shown() == expected()
        await pilot.press("3")
        await settle(pilot)
        assert shown() == expected()
        sessions[0]._set_link(LinkState.DOWN, "the connection was lost")
        await settle(pilot)
        assert shown() == expected()
