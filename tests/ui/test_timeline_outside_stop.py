"""A dashboard opened after the server was stopped from elsewhere (`gdnconsole stop`, another console)
does not show the log's last startup as serving: the host's processes say its server is gone."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.host import launcher
from gdnconsole.ui import theme
from gdnconsole.ui.widgets.hostpane import ending
from gdnconsole.ui.widgets.timeline import render_timeline, timeline_data
from tests.host.launchkit import connected, journal_for, launch_host


async def test_a_server_stopped_before_the_dashboard_opened_reads_as_ended(tmp_path: Path) -> None:
    host = launch_host(tmp_path)
    journal = journal_for(tmp_path, host)
    async with connected(host) as first:
        attempt = await launcher.launch(first, host.profiles["final"], journal=journal)
        attempt = await launcher.settle(first, attempt, until="ready", timeout=60, journal=journal)
        assert attempt.outcome == "ready" and attempt.pid is not None, attempt
        await launcher.stop(first, grace=10, journal=journal)
    async with connected(host) as later:  # the dashboard opened afterwards: it never saw the exit
        tracker = later.log.tracker
        assert await later.wait_until(lambda: bool(tracker.startups) and tracker.startups[-1].ready, 30)
        data = timeline_data(tracker.startups)
        assert data is not None and data.pid == attempt.pid
        said = ending(later, data)
        assert said is not None and said.kind == "ended", said
        assert str(attempt.pid) in said.text
        _, palette = theme.load()
        text = render_timeline(data, palette, ending=said).plain
        assert "● serving" not in text and f"server pid {attempt.pid}" in text, text
