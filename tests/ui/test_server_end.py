"""The timeline speaks of the server, not only of the log: it ends when the server ends, and a startup
that another process wrote into the same log is marked as such (issue 15) and does not take the
timeline over (issue 26)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from gdnconsole.ui.widgets.timeline import Timeline
from tests.host.launchkit import kill_group, launch_host, start_by_hand
from tests.sshhosts import free_loopback_port
from tests.ui.dashboard_helpers import SIZE, on_screen, until
from tests.ui.test_launch_keys import connect, launch_ready, launching, session_of


def timeline_text(app: object) -> str:
    timeline = app.query_one(Timeline)  # type: ignore[attr-defined]
    assert isinstance(timeline, Static)
    return str(timeline.render())


async def test_after_a_stop_the_timeline_says_the_server_ended_not_serving(tmp_path: Path) -> None:
    async with launching(tmp_path, launch_host(tmp_path)) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        pid = await launch_ready(pilot, app)
        assert "■" not in timeline_text(app)
        await pilot.press("S")
        assert await until(pilot, lambda: on_screen(app, "confirm-stop"), 5)
        await pilot.press("y")
        assert await until(pilot, lambda: f"■ server pid {pid} stopped" in timeline_text(app), 40), (
            timeline_text(app)
        )
        text = timeline_text(app)
        assert "● serving" not in text and "ended in " in text  # its ranks ended too
        await session_of(app).stop()


async def test_a_startup_another_process_wrote_in_the_same_log_is_marked_as_not_the_servers(
    tmp_path: Path,
) -> None:
    host = launch_host(tmp_path)
    async with launching(tmp_path, host) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        ours = await launch_ready(pilot, app)
        other = start_by_hand(host, port=free_loopback_port())  # `>> log`: the same log
        try:
            assert other.wait(timeout=60) != 0  # our server holds the GPUs: not enough memory
            # Our startup stays on show, and the other writer's is said above it (issue 26).
            marked = "another writer to this log, not this server"
            assert await until(pilot, lambda: marked in " ".join(timeline_text(app).split()), 30), (
                timeline_text(app)
            )
            shown = app.query_one(Timeline).data
            assert "startup 1/2" in timeline_text(app) and shown is not None and shown.pid == ours
        finally:
            kill_group(other.pid)
        await session_of(app).stop()
