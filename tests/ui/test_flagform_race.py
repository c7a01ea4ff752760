"""The flag form saves what the fields hold at the key press, even with typing still being processed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from gdnconsole.config import hosts as config_hosts
from gdnconsole.config.hosts import Host
from gdnconsole.host.session import HostSession
from gdnconsole.tune.sweep import Options
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.screens.promptpanel import PromptScreen
from gdnconsole.ui.screens.tune import TuneScreen
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, fixed_clock, on_screen, until
from tests.ui.form_helpers import HOSTS, form_app, form_session, hosts_file, open_form


async def burst(pilot: Pilot[None], *keys: str) -> None:
    """Keys as one read from a terminal delivers them: queued together, none handled before the next is
    sent (Pilot's ``press`` waits for each key's messages, which hides the race)."""
    driver = pilot.app._driver
    assert driver is not None
    for key in keys:
        driver.send_message(events.Key(key, key if len(key) == 1 else None))
    await pilot.pause()


def saved_profile(path: Path) -> config_hosts.Profile:
    return config_hosts.load(path).hosts["ct129"].profiles["topk-only"]


async def test_ctrl_s_right_after_typing_saves_what_was_typed(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        field = form.query_one("#ff-num_steps", Input)
        field.focus()
        await pilot.pause()
        await burst(pilot, "3", "ctrl+s")  # the save runs before the field's Changed message is handled
        assert await until(pilot, lambda: path.read_text() != HOSTS, 5)
        assert await until(pilot, lambda: not form.dirty, 5)
        assert saved_profile(path).speculative.num_steps == 3


async def test_ctrl_s_after_a_programmatic_edit_saves_it(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        form.query_one("#ff-tp", Input).value = "4"
        form.query_one("#ff-env", TextArea).load_text("SGLANG_ENABLE_SPEC_V2=0")
        await pilot.press("ctrl+s")
        assert await until(pilot, lambda: path.read_text() != HOSTS, 5)
        profile = saved_profile(path)
        assert (profile.tp, profile.env) == (4, {"SGLANG_ENABLE_SPEC_V2": "0"})


async def test_ctrl_r_on_the_tune_screen_runs_the_grid_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Options] = []
    monkeypatch.setattr(TuneScreen, "_start", lambda self, options: started.append(options))
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("u")
        assert await until(pilot, lambda: on_screen(app, TuneScreen), 5)
        grid = app.screen.query_one("#tune-grid", Input)
        grid.value = "num_steps=1 eagle_topk=1 num_draft_tokens="
        grid.focus()
        grid.cursor_position = len(grid.value)
        await pilot.pause()
        await burst(pilot, "2", "ctrl+r")  # the run reads the grid before its last key is handled
        assert await until(pilot, lambda: bool(started), 5), [n.message for n in app._notifications]
        [combo] = started[0].combos
        assert combo.label.endswith("2") and "num_draft_tokens" not in str(app._notifications)


async def test_ctrl_r_on_the_prompt_panel_takes_the_field_as_typed(tmp_path: Path) -> None:
    session = HostSession(Host(name="bare", ssh=None, local=True), mirror=tmp_path / "mirror.log")
    app = DashboardApp([session], start=False, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p")
        assert await until(pilot, lambda: on_screen(app, PromptScreen), 5)
        screen = app.screen
        field = screen.query_one("#pf-max", Input)
        field.value = ""
        field.focus()
        await pilot.pause()
        await burst(pilot, "0", "ctrl+r")  # max tokens 0: refused, never sent as the server's default
        assert await until(pilot, lambda: screen.query_one("#pf-max").has_class("-invalid"), 5)
        assert isinstance(screen, PromptScreen) and screen.running is None
