"""A second process writing into the same log (a server started by hand that fails) does not take the
dashboard's timeline over: it shows our server's startup and figures, and says, whole, what the other
writer's startup did."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.ui.widgets.timeline import Timeline
from tests.host.launchkit import kill_group, launch_host, start_by_hand
from tests.sshhosts import free_loopback_port as free_port
from tests.ui.dashboard_helpers import SIZE, until
from tests.ui.test_launch_keys import connect, launch_ready, launching, session_of


async def test_another_writers_failed_startup_does_not_take_the_timeline(tmp_path: Path) -> None:
    host = launch_host(tmp_path)
    async with launching(tmp_path, host) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        ours = await launch_ready(pilot, app)
        session = session_of(app)
        timeline = app.screen.query_one(Timeline)
        assert await until(pilot, lambda: timeline.data is not None and timeline.data.pid == ours, 20)
        weights = timeline.data.weights_gb if timeline.data else None
        other = start_by_hand(host, port=free_port())  # the same log, appended to: not enough memory
        try:
            assert other.wait(timeout=60) != 0
            tracker = session.log.tracker

            def second_failed() -> bool:
                last = tracker.current
                return len(tracker.startups) >= 2 and last is not None and last.fatal is not None

            assert await until(pilot, second_failed, 30)
            assert await until(
                pilot, lambda: timeline.data is not None and timeline.data.later is not None, 10
            )
            data = timeline.data
            assert data is not None and data.pid == ours and data.fatal is None, data
            assert data.weights_gb == weights  # our figures, not the failed startup's
            assert data.count == len(tracker.startups) and data.index == len(tracker.startups) - 2
            last = tracker.startups[-1]
            who = f"pid {last.pid}" if last.pid is not None else "another process"
            assert data.later == (
                f"startup {last.index + 1}, by {who}, failed in {last.fatal.stage.label if last.fatal else ''}: "
                "another writer to this log, not this server"
            )
            shown = " ".join(str(timeline.render()).split())  # wrapped to the widget's width, never cut
            assert " ".join(data.later.split()) in shown, shown
        finally:
            kill_group(other.pid)
        await session.stop()
