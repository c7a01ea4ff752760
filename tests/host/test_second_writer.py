"""Another writer to the same log (a second console, a server started by hand) must not speak for this
console's server: the status is that of the server's own startup, the one whose uvicorn line names it."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.cli.status import session_json
from gdnconsole.host import launcher
from tests.host.launchkit import connected, journal_for, kill_group, launch_host, start_by_hand
from tests.sshhosts import free_loopback_port as free_port


async def test_a_server_that_dies_in_the_same_log_does_not_make_ours_look_crashed(tmp_path: Path) -> None:
    host = launch_host(tmp_path)
    journal = journal_for(tmp_path, host)
    async with connected(host) as session:
        attempt = await launcher.launch(session, host.profiles["final"], journal=journal)
        attempt = await launcher.settle(session, attempt, until="verified", timeout=60, journal=journal)
        assert attempt.outcome == "verified", attempt
        ours = session.launched_pid
        other = start_by_hand(host, port=free_port())  # the same log, appended to, as `>> log` does
        try:
            assert other.wait(timeout=60) != 0  # our server holds the GPUs: not enough memory
            tracker = session.log.tracker

            def second_failed() -> bool:
                last = tracker.current
                return len(tracker.startups) >= 2 and last is not None and last.fatal is not None

            assert await session.wait_until(second_failed, 30)
            assert "Not enough memory" in tracker.current.fatal.summary  # the log's last startup failed
            assert session.startup is not tracker.current and session.startup.pid == ours
            server = session_json(session)["server"]
            assert (server["pid"], server["stage"], server["fatal"]) == (ours, "serving", None)
            assert launcher.observe(session, attempt).outcome == "verified"  # not "crashed"
        finally:
            kill_group(other.pid)
