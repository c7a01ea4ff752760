"""The dashboard's L on a port another process listens on: refused before anything starts, the toast
naming the port and who holds it (the check is the launcher's, so R and the tune sweep make it too)."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.host.launchkit import launch_host
from tests.ui.dashboard_helpers import SIZE, until
from tests.ui.test_launch_keys import NOTES, connect, journal_of, launching, session_of


async def test_l_on_a_taken_port_says_who_holds_it(tmp_path: Path) -> None:
    host = launch_host(tmp_path)
    assert host.profile is not None
    port = host.profile.port
    with socket.socket() as holder:  # this test's own process listens there
        holder.bind(("127.0.0.1", port))
        holder.listen()
        async with launching(tmp_path, host) as app, app.run_test(size=SIZE) as pilot:
            await connect(pilot, app)
            await pilot.press("L")
            wanted = f"port {port} on simbox (127.0.0.1) is held by pid "

            def refused() -> bool:
                return any(wanted in note for note in NOTES.get(id(app), []))

            assert await until(pilot, refused, 30), NOTES.get(id(app))
            [note] = [n for n in NOTES[id(app)] if wanted in n]
            assert "nothing was started" in note
            assert session_of(app).launched is None
            assert [a.outcome for a in journal_of(app).attempts()] == ["refused"]
            await session_of(app).stop()
