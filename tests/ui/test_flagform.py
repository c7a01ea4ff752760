"""The flag form: editing, the live command line, rule errors on their field, nothing typed lost, saving
back into a commented hosts file, save as new, switching profiles, unsaved changes, copying."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from textual.widgets import Input, Select, TextArea

from gdnconsole.config import hosts as config_hosts
from gdnconsole.config.hosts import Speculative
from gdnconsole.host.journal import default_dir
from gdnconsole.ui.dialogs.askname import AskNameScreen
from gdnconsole.ui.dialogs.confirm import ConfirmScreen
from gdnconsole.ui.screens.dashboard import DashboardScreen
from tests.host.launchkit import launch_host
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, dashboard, on_screen, session_for, until
from tests.ui.form_helpers import (
    HOSTS,
    command,
    field_error,
    form_app,
    form_session,
    hosts_file,
    open_form,
    shown,
    type_into,
)


async def test_form_shows_the_active_profile_and_its_command_line(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        assert form.query_one("#ff-model", Input).value == "Qwen/Qwen3.6-27B"
        assert form.query_one("#ff-algorithm", Select).value == "NEXTN"
        assert form.query_one("#ff-mamba", Select).value == "extra_buffer"
        assert command(form).startswith(
            "$ env SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path Qwen/Qwen3.6-27B"
        )
        assert "--mamba-scheduler-strategy extra_buffer" in command(form)
        await type_into(pilot, form, "tp", "4")
        assert "--tp-size 4" in command(form)


async def test_topk_without_steps_is_an_error_on_the_field_and_fixing_clears_it(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)

        def marked() -> str:
            return field_error(form, "eagle_topk") or field_error(form, "num_steps")

        assert await until(pilot, lambda: bool(marked()), 5)
        assert "--speculative-num-steps" in marked() and "spec.topk_without_steps" in marked()
        assert "✖ 1 error" in shown(form, "#ff-verdicts")
        await type_into(pilot, form, "num_steps", "1")
        assert await until(pilot, lambda: not marked(), 5), marked()
        assert await until(pilot, lambda: "✔ accepted" in shown(form, "#ff-verdicts"), 5)
        assert "--speculative-num-steps 1" in command(form)


async def test_an_invalid_number_is_marked_and_kept(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await type_into(pilot, form, "port", "30o00")
        assert "whole number" in field_error(form, "port")
        assert form.query_one("#ff-port", Input).value == "30o00"  # never reset
        assert "fix the marked fields" in command(form)
        await pilot.press("ctrl+s")  # refused, and the file is untouched
        await settle(pilot)
        assert path.read_text() == HOSTS
        assert form.query_one("#ff-port", Input).value == "30o00"


async def test_extra_args_are_shown_as_parsed(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        args = form.query_one("#ff-args", TextArea)
        args.load_text("--chat-template 'a b;$(touch x)'\n--disable-radix-")
        args.focus()
        args.move_cursor(args.document.end)
        await pilot.press(*"cache")  # and typed, as a user would finish it
        await settle(pilot)
        assert "→ 3 arguments: ‹--chat-template› ‹a b;$(touch x)› ‹--disable-radix-cache›" in shown(
            form, "#ff-args-parsed"
        )
        assert "--chat-template 'a b;$(touch x)' --disable-radix-cache" in command(form)


async def test_save_keeps_the_comments(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    session = form_session(tmp_path, path)
    app = form_app(session, path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await type_into(pilot, form, "num_steps", "1")
        assert form.dirty
        await pilot.press("ctrl+s")
        assert await until(pilot, lambda: path.read_text() != HOSTS, 5)
        before, after = HOSTS.splitlines(), path.read_text().splitlines()
        changed = [(old, new) for old, new in zip(before, after, strict=True) if old != new]
        assert len(changed) == 1, changed  # every comment, blank line and other key as it was
        assert changed[0][0].startswith("speculative = {") and "num_steps = 1" in changed[0][1]
        assert await until(pilot, lambda: not form.dirty, 5)
        assert session.host.profiles["topk-only"].speculative.num_steps == 1


async def test_save_as_new_profile(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    session = form_session(tmp_path, path)
    app = form_app(session, path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await type_into(pilot, form, "num_steps", "2")
        await pilot.press("ctrl+n")
        assert await until(pilot, lambda: on_screen(app, AskNameScreen), 5)
        name_field = app.screen.query_one(Input)
        name_field.value = ""
        await pilot.press(*"final", "enter")  # taken: refused
        await settle(pilot)
        assert isinstance(app.screen, AskNameScreen)
        name_field.value = ""
        await pilot.press(*"steps2", "enter")
        assert await until(pilot, lambda: "[hosts.ct129.profiles.steps2]" in path.read_text(), 5)
        text = path.read_text()
        assert text.startswith(HOSTS.rstrip("\n").rsplit("\n# trailing comment", 1)[0])  # all else kept
        assert "# trailing comment" in text
        saved = config_hosts.load(path).hosts["ct129"].profiles
        assert saved["steps2"].speculative.num_steps == 2 and saved["topk-only"].speculative.num_steps is None
        assert await until(pilot, lambda: form.query_one("#ff-profile", Select).value == "steps2", 5)
        assert "steps2" in session.host.profiles


async def test_switching_profiles_and_the_unsaved_changes_prompt(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        profiles = form.query_one("#ff-profile", Select)
        profiles.value = "final"  # clean: switches at once
        assert await until(pilot, lambda: form.query_one("#ff-num_steps", Input).value == "1", 5)
        assert form.base.name == "final"
        await type_into(pilot, form, "port", "30001")
        profiles.value = "topk-only"  # dirty: asks first
        assert await until(pilot, lambda: on_screen(app, ConfirmScreen), 5)
        await pilot.press("n")  # keep editing: the choice goes back, the text stays
        assert await until(pilot, lambda: profiles.value == "final", 5)
        assert form.query_one("#ff-port", Input).value == "30001"
        await pilot.press("escape")  # close with unsaved changes: asks
        assert await until(pilot, lambda: on_screen(app, ConfirmScreen), 5)
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is form
        await pilot.press("escape")
        assert await until(pilot, lambda: on_screen(app, ConfirmScreen), 5)
        await pilot.press("y")
        assert await until(pilot, lambda: on_screen(app, DashboardScreen), 5)
        assert path.read_text() == HOSTS
        assert app.dashboard.profile(0).name == "final"  # the profile the form ended on, as saved


async def test_copy_the_command_line(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await pilot.press("ctrl+o")
        assert app.clipboard == command(form).removeprefix("$ ")
        assert app.clipboard.startswith("env SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server ")
        # The terminal may drop the clipboard write (tmux, SSH): the command is in a file too, ours alone.
        written = default_dir() / f"{form.session.host.name}-command.sh"
        assert await until(pilot, written.exists, 5)
        assert written.read_text() == app.clipboard + "\n" and written.stat().st_mode & 0o777 == 0o600
        said = [str(n.message) for n in app._notifications]
        assert any("sent to the terminal clipboard" in m and str(written) in m for m in said), said


async def test_mamba_flag_follows_the_hosts_sglang(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path, sglang="0.5.23"), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        assert "--mamba-radix-cache-strategy extra_buffer" in command(form)
        assert "--mamba-scheduler-strategy" not in command(form)


async def test_check_on_host_shows_both_verdicts(tmp_path: Path) -> None:
    pytest.importorskip("gdnconsole.host.hostcheck")  # the rules helper's host check
    host = launch_host(tmp_path)
    topk_only = dataclasses.replace(
        host.profiles["final"], name="topk-only", speculative=Speculative("NEXTN", None, 1, 2)
    )
    host = dataclasses.replace(host, profiles={"topk-only": topk_only}, default_profile="topk-only")
    session = session_for(host, tmp_path)
    app = dashboard(session)
    async with app.run_test(size=SIZE) as pilot:
        assert await until(pilot, lambda: session.hello is not None, 20)
        form = await open_form(pilot)
        assert await until(pilot, lambda: "✖ 1 error" in shown(form, "#ff-verdicts"), 5)
        await pilot.press("ctrl+t")
        # "running its argument checks" shows meanwhile, but may be gone before a poll sees it: wait for the end.
        assert await until(pilot, lambda: form.verdict is not None, 90)
        verdicts = shown(form, "#ff-verdicts")
        assert "our rules" in verdicts and "✖ AssertionError" in verdicts, verdicts
        assert "disagree" not in verdicts
        await type_into(pilot, form, "num_steps", "1")
        assert await until(pilot, lambda: "✔ accepted" in shown(form, "#ff-verdicts"), 5)
        assert "for an earlier version of this form" in shown(form, "#ff-verdicts")
        await pilot.press("ctrl+t")
        assert await until(pilot, lambda: form.verdict is not None and form.verdict.ok, 90), shown(
            form, "#ff-verdicts"
        )
        assert shown(form, "#ff-verdicts").count("✔ accepted") == 2
        await session.stop()


async def test_an_api_key_typed_into_args_is_not_shown_back(tmp_path: Path) -> None:
    """The parsed args and the command line mask the key; only the copy (to run it) has the real one."""
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        args = form.query_one("#ff-args", TextArea)
        args.load_text("--api-key sk-live-123")
        await settle(pilot)
        assert "sk-live-123" not in shown(form, "#ff-args-parsed") and "<redacted:" in shown(
            form, "#ff-args-parsed"
        )
        assert "sk-live-123" not in command(form) and "--api-key '<redacted:" in command(form)
        await pilot.press("ctrl+o")
        assert "--api-key sk-live-123" in app.clipboard
