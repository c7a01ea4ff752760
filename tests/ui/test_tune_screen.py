"""The tune screen (`u` on the dashboard) against a local simulated host: a sweep runs from the grid on
screen, the table ranks what it measured and lists what the rules rejected, ctrl+b saves the best into
the profile after a confirmation, and escape mid-sweep stops the sweep's server."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, Static

from gdnconsole.config import hosts as config_hosts
from gdnconsole.ui.dialogs.confirm import ConfirmScreen
from gdnconsole.ui.screens.tune import TuneScreen
from tests.host.launchkit import alive, launch_host
from tests.ui.dashboard_helpers import SIZE, on_screen, until
from tests.ui.test_launch_keys import connect, launch_ready, launching, session_of

FAST = {"tokens_per_s": 400.0}


def hosts_file(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "hosts.toml"
    path.write_text(
        f"""[hosts.simbox]
local = true

[hosts.simbox.profiles.final]
model = "Qwen/Qwen3.6-27B"
tp = 2
port = {port}
"""
    )
    return path


def rows(screen: TuneScreen) -> list[list[str]]:
    table = screen.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def fill(pilot, screen: TuneScreen, grid: str) -> None:  # type: ignore[no-untyped-def]
    screen.query_one("#tune-grid", Input).value = grid
    screen.query_one("#tune-batch", Input).value = "1"
    screen.query_one("#tune-requests", Input).value = "2"
    await pilot.press("ctrl+r")


async def test_a_sweep_from_the_screen_and_apply_best(tmp_path: Path) -> None:
    host = launch_host(tmp_path, **FAST)
    config = hosts_file(tmp_path, host.profiles["final"].port)
    async with launching(tmp_path, host, config_path=str(config)) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        await pilot.press("u")
        assert await until(pilot, lambda: on_screen(app, TuneScreen))
        screen = app.screen
        assert isinstance(screen, TuneScreen)
        await fill(pilot, screen, "num_steps=1 eagle_topk=1 num_draft_tokens=2,300")
        assert await until(
            pilot, lambda: screen.sweep is not None and not screen.running and bool(screen.sweep.results), 60
        )
        table = rows(screen)
        assert [r[:2] for r in table] == [
            ["baseline", "measured"],
            ["s1 k1 d2", "measured"],
            ["s1 k1 d300", "rejected"],
        ]
        assert "mamba.track_interval_below_draft_tokens" in table[2][-1]
        assert "s1 k1 d2" in str(screen.query_one("#tune-chart", Static).render())
        assert "done: 2 measured, 1 rejected · best s1 k1 d2 at batch 1" in screen.last_message
        assert not session_of(app).launched_alive  # the sweep stopped its last server

        await pilot.press("ctrl+b")
        assert await until(pilot, lambda: on_screen(app, ConfirmScreen))
        await pilot.press("y")
        assert await until(pilot, lambda: screen.applied is not None, 10)
        saved = config_hosts.load(config).hosts["simbox"].profiles["final"].speculative
        assert (saved.algorithm, saved.num_steps, saved.eagle_topk, saved.num_draft_tokens) == (
            "NEXTN",
            1,
            1,
            2,
        )
        await pilot.press("escape")
        assert await until(pilot, lambda: not isinstance(app.screen, TuneScreen))
        assert app.dashboard.profile(0).speculative.num_steps == 1

        await pilot.press("u")  # opened again: the last sweep, from the store, until a new run replaces it
        assert await until(pilot, lambda: on_screen(app, TuneScreen) and app.screen is not screen)
        again = app.screen
        assert isinstance(again, TuneScreen)
        assert await until(pilot, lambda: again.sweep is not None, 5)
        assert [r[:3] for r in rows(again)] == [r[:3] for r in table]  # combination, status, tokens/s
        assert again.last_message.startswith("last sweep, ")
        assert "done: 2 measured, 1 rejected · best s1 k1 d2 at batch 1" in again.last_message
        assert again.query_one("#tune-grid", Input).value == "num_steps=1 eagle_topk=1 num_draft_tokens=2,300"


async def test_escape_mid_sweep_stops_the_sweeps_server(tmp_path: Path) -> None:
    host = launch_host(tmp_path, **FAST)
    async with launching(tmp_path, host) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        session = session_of(app)
        await pilot.press("u")
        assert await until(pilot, lambda: on_screen(app, TuneScreen))
        screen = app.screen
        assert isinstance(screen, TuneScreen)
        await fill(pilot, screen, "num_steps=1,2,3 eagle_topk=1 num_draft_tokens=2")
        assert await until(pilot, lambda: len(screen.sweep.results) >= 1 and session.launched_alive, 60)  # type: ignore[union-attr]
        pid = session.launched_pid
        await pilot.press("escape")
        assert await until(pilot, lambda: not screen.running, 30)
        assert isinstance(app.screen, TuneScreen) and screen.last_message.startswith("interrupted")
        assert pid is not None and not alive(pid)


async def test_a_sweep_over_our_running_server_asks_first(tmp_path: Path) -> None:
    host = launch_host(tmp_path, **FAST)
    async with launching(tmp_path, host) as app, app.run_test(size=SIZE) as pilot:
        await connect(pilot, app)
        pid = await launch_ready(pilot, app)
        await pilot.press("u")
        assert await until(pilot, lambda: on_screen(app, TuneScreen))
        screen = app.screen
        assert isinstance(screen, TuneScreen)
        await fill(pilot, screen, "num_steps=1 eagle_topk=1 num_draft_tokens=2")
        assert await until(pilot, lambda: on_screen(app, "confirm-tune-run"))
        assert f"pid {pid}" in str(app.screen.query_one("#confirm-title", Static).render())
        await pilot.press("n")
        assert await until(pilot, lambda: app.screen is screen)
        assert screen.sweep is None and not screen.running and alive(pid)  # nothing ran, nothing stopped
