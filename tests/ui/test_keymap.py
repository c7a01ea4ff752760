"""Key remapping: the [keys] table checked against each screen's bindings (unknown ids, key names,
conflicts), merged over the built-in keymap, and shown the same way by the footer, help and the palette.

The agreement test (issue 7 §4): on each screen, with a user keymap in force,
- every command the palette offers (description, binding id, key) is a row of the help screen with that
  id and description, and its key is among that row's keys;
- every key the footer shows enabled (description, key) is a command of the palette with that key
  (the footer's own "palette" key aside, and disabled keys aside: the palette offers only what runs);
- in read-only mode none of the three lists launch, relaunch, stop, the form's launch or the journal's
  re-run.
Modal screens (confirmations, the host key dialog) have no footer: their palette is checked against help.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.binding import Binding
from textual.screen import Screen

from gdnconsole.cli.main import main
from gdnconsole.config import hosts as config_hosts
from gdnconsole.ui import keymap
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.commands import binding_commands
from gdnconsole.ui.dialogs.confirm import ConfirmScreen
from gdnconsole.ui.dialogs.filtersearch import FilterScreen
from gdnconsole.ui.dialogs.help import HelpScreen, key_label
from gdnconsole.ui.dialogs.hostkey import HostKeyScreen
from gdnconsole.ui.screens.dashboard import DASHBOARD_KEYMAP, DashboardScreen
from gdnconsole.ui.screens.flagform import FlagFormScreen
from gdnconsole.ui.screens.journal import JournalScreen
from gdnconsole.ui.screens.logscreen import LogScreen, LogViewApp
from gdnconsole.ui.screens.promptpanel import PromptScreen
from gdnconsole.ui.widgets.keybar import KeyBar
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, fixed_clock, help_table_text, serving_session, status_text
from tests.ui.fixtures import ct129_lines, write_log

USER = {"dash.prompt": "P", "dash.gpus": "G", "log.filter": "ctrl+f", "journal.export": "M"}
LAUNCHING = {"dash.launch", "dash.relaunch", "dash.stop", "form.launch", "journal.rerun"}


# -- key names -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("P", "P"),
        ("?", "question_mark"),
        ("/", "slash"),
        ("ctrl+f", "ctrl+f"),
        ("shift+ctrl+x", "ctrl+shift+x"),
        ("alt+up", "alt+up"),
        ("f5", "f5"),
        ("f24", "f24"),
        ("pageup", "pageup"),
        ("space", "space"),
        ("question_mark", "question_mark"),
        ("ctrl+i", "tab"),
    ],
)
def test_key_names_are_normalized_as_textual_names_them(key: str, name: str) -> None:
    assert keymap.normalize_key(key) == name


@pytest.mark.parametrize("key", ["", "ctrl+", "ctrl+F", "hyperdrive", "f25", "ctrl+ctrl+x", "cmd+x", ","])
def test_what_is_not_a_key(key: str) -> None:
    assert keymap.normalize_key(key) is None


# -- the rules -----------------------------------------------------------------------------------------


def problem(user: dict[str, str]) -> keymap.Problem:
    found = keymap.problems(user)
    assert len(found) == 1, found
    return found[0]


def test_a_good_keymap_has_no_problem_and_merges_over_the_built_in_one() -> None:
    assert keymap.problems(USER) == []
    assert keymap.merged(USER, "dashboard") == {**DASHBOARD_KEYMAP, **USER}
    assert keymap.merged(USER, "log view") == {"log.filter": "ctrl+f"}  # only the ids the log view has
    assert keymap.merged({"dash.help": "?,f1"}, "dashboard")["dash.help"] == "question_mark,f1"


def test_unknown_binding_id_says_did_you_mean() -> None:
    found = problem({"dash.promt": "P"})
    assert (found.binding_id, found.problem, found.hint) == (
        "dash.promt",
        "unknown binding id",
        "did you mean 'dash.prompt'?",
    )


def test_a_value_that_is_not_a_key() -> None:
    found = problem({"log.filter": "ctrl+F"})
    assert found.problem.startswith("expected a key such as") and found.problem.endswith('found "ctrl+F"')
    assert found.hint == "with a modifier a letter is lowercase: ctrl+shift+f"
    assert problem({"log.filter": "ctrl+f,,x"}).hint == "an empty key between commas"
    assert problem({"log.filter": "ctrl+f,hyper"}).hint == '"hyper" is not a key name'


def test_a_remapped_key_on_another_bindings_default_key_names_both() -> None:
    found = problem({"dash.prompt": "?"})
    assert found.problem == '"?" is also the key of dash.help on the dashboard screen'
    found = problem({"dash.quit": "x"})  # the log pane's "go to the fatal error", active on the dashboard
    assert found.problem == '"x" is also the key of log.fatal on the dashboard screen'
    found = problem({"log.timeline": "ctrl+q"})  # Textual's own quit
    assert found.problem == "\"ctrl+q\" is also the key of the built-in 'quit' action on the dashboard screen"
    found = problem({"journal.rerun": "enter"})  # the journal table's own enter
    assert "on the journal screen" in found.problem


def test_two_remapped_keys_on_one_screen_conflict_and_separate_screens_do_not() -> None:
    assert problem({"dash.prompt": "F12"}).hint == 'key names are lowercase: "f12"'
    found = problem({"dash.prompt": "f12", "dash.journal": "f12"})  # said at the later line
    assert (found.binding_id, found.problem) == (
        "dash.journal",
        '"f12" is also the key of dash.prompt on the dashboard screen',
    )
    # The flag form and the journal are separate screens: one key may serve both.
    assert keymap.problems({"form.copy": "ctrl+y", "journal.export": "ctrl+y"}) == []
    # The dashboard's built-in E for the log pane's "first error" is taken into account...
    assert (
        problem({"dash.prompt": "E"}).problem
        == '"E" is also the key of log.first_error on the dashboard screen'
    )
    # ...but the log view has no E: there, `e` is the first error.
    assert keymap.problems({"log.first_error": "ctrl+e"}) == []


def test_a_key_kept_as_it_was_is_no_conflict() -> None:
    # The prompt panel's close and cancel share escape by design; saying so again changes nothing.
    assert keymap.problems({"prompt.close": "escape"}) == []


def test_text_fields_keep_their_printable_keys() -> None:
    found = problem({"form.save": "s"})
    assert found.problem == '"s" would type into the text fields of the flag form'
    assert keymap.problems({"form.save": "ctrl+w"}) == []


# -- the hosts file and the CLI --------------------------------------------------------------------------

FILE = """\
[console]
bell = true

[keys]
"dash.prompt" = "P"
log.filter = "ctrl+f"
"dash.promt" = "x"
"""


def test_the_error_names_file_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(FILE)
    cfg = config_hosts.load(path)
    assert cfg.console.keys == {"dash.prompt": "P", "log.filter": "ctrl+f", "dash.promt": "x"}
    with pytest.raises(config_hosts.ConfigError) as caught:
        keymap.checked(cfg)
    assert str(caught.value) == (
        f"{path}:7: keys.\"dash.promt\": unknown binding id (did you mean 'dash.prompt'?)"
    )
    path.write_text(FILE.replace('"dash.promt" = "x"\n', ""))
    assert keymap.checked(config_hosts.load(path)) == {
        **DASHBOARD_KEYMAP,
        "dash.prompt": "P",
        "log.filter": "ctrl+f",
    }


def test_the_dashboard_command_refuses_a_bad_keymap_before_opening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text('[keys]\n"dash.prompt" = "?"\n')
    monkeypatch.setenv("GDNCONSOLE_CONFIG", str(path))
    opened: list[object] = []
    monkeypatch.setattr("gdnconsole.ui.app.run_dashboard", lambda *a, **kw: opened.append(kw))
    monkeypatch.setattr("gdnconsole.cli.opener.interactive", lambda: True)
    result = CliRunner().invoke(main, ["demo-host-that-is-not-reached"])
    assert result.exit_code == 2 and not opened
    assert f'{path}:2: keys."dash.prompt": "?" is also the key of dash.help' in result.output
    path.write_text('[console]\nbell = true\nreadonly = true\n[keys]\n"dash.prompt" = "P"\n')
    result = CliRunner().invoke(main, ["localhost"])  # an SSH target that resolves
    assert result.exit_code == 0, result.output
    assert opened[-1]["keymap"] == {**DASHBOARD_KEYMAP, "dash.prompt": "P"}  # type: ignore[index]
    assert opened[-1]["bell"] is True and opened[-1]["readonly"] is True  # type: ignore[index]


# -- the keymap in force: keys, footer, help, palette ------------------------------------------------


def footer(screen: Screen[object]) -> set[tuple[str, str]]:
    """(description, key label) of each enabled key the footer shows, the palette's own key aside."""
    return {
        (key.description, key_label(Binding(key.key, key.action)))
        for bar in screen.query(KeyBar)
        for key in bar.items()
        if key.enabled and key.action != "command_palette"
    }


def palette(screen: Screen[object]) -> set[tuple[str, str, str]]:
    """(description, binding id, key label) of each command the palette offers for the screen's keys."""
    out: set[tuple[str, str, str]] = set()
    for command in binding_commands(screen):
        m = re.fullmatch(r"key (?P<key>.+?)(?:  ·  (?P<id>\S+))?", command.help)
        assert m, command.help
        out.add((command.title, m["id"] or "", m["key"]))
    return out


def help_rows(help_screen: HelpScreen) -> dict[tuple[str, str], set[str]]:
    """(description, binding id) → the keys the help screen lists for it."""
    rows: dict[tuple[str, str], set[str]] = {}
    for _title, bindings in help_screen.sections:
        for binding in bindings:
            if isinstance(binding, Binding):
                keys = set(key_label(binding, help_screen.keymap).split(", "))
                rows.setdefault((binding.description, binding.id or ""), set()).update(keys)
    return rows


def agree(
    screen: Screen[object], help_screen: HelpScreen, readonly: bool = False
) -> set[tuple[str, str, str]]:
    offered = palette(screen)
    rows = help_rows(help_screen)
    for description, binding_id, key in offered:
        assert (description, binding_id) in rows, (description, binding_id, "not in help")
        assert key in rows[(description, binding_id)], (
            description,
            binding_id,
            key,
            rows[(description, binding_id)],
        )
    by_key = {(description, key) for description, _id, key in offered}
    for shown in footer(screen):
        assert shown in by_key, (shown, "in the footer, not in the palette")
    if readonly:
        assert not {binding_id for _d, binding_id, _k in offered} & LAUNCHING
        assert not {binding_id for (_d, binding_id) in rows} & LAUNCHING
        assert not {d for d, _k in footer(screen)} & {
            "Launch",
            "Relaunch",
            "Stop server",
            "Launch this",
            "Re-run",
        }
    return offered


async def dashboard_help(pilot, app: DashboardApp) -> HelpScreen:  # type: ignore[no-untyped-def]
    await pilot.press(USER.get("dash.help", "question_mark"))
    await settle(pilot)
    assert isinstance(app.screen, HelpScreen)
    help_screen = app.screen
    await pilot.press("escape")
    await settle(pilot)
    return help_screen


@pytest.mark.parametrize("readonly", [False, True])
async def test_footer_help_and_palette_agree_on_every_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, readonly: bool
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the prompt panel's history
    app = DashboardApp(
        [serving_session(tmp_path)], start=False, clock=fixed_clock, readonly=readonly,
        journal_dir=tmp_path / "journal", keymap=keymap.merged(USER, "dashboard"),
    )  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        help_screen = await dashboard_help(pilot, app)
        assert isinstance(app.screen, DashboardScreen)
        offered = agree(app.screen, help_screen, readonly)
        assert ("Prompt", "dash.prompt", "P") in offered and ("Filter", "log.filter", "ctrl+f") in offered
        assert ("First error", "log.first_error", "E") in offered
        assert ("Prompt", "P") in footer(app.screen)
        assert ("Launch", "dash.launch", "L") in offered or readonly
        for key, screen_type in (("e", FlagFormScreen), ("j", JournalScreen), ("P", PromptScreen)):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, screen_type), (key, app.screen)
            offered = agree(app.screen, help_screen, readonly)
            if screen_type is JournalScreen:
                assert ("Export Markdown", "journal.export", "M") in offered
            app.pop_screen()
            await settle(pilot)
        for dialog in (ConfirmScreen("Stop?", []), HostKeyScreen("ct129", "SHA256:abc", "unknown host")):
            app.push_screen(dialog)
            await settle(pilot)
            agree(app.screen, help_screen, readonly)
            app.pop_screen()
            await settle(pilot)


async def test_remapped_keys_work_and_old_ones_do_not(tmp_path: Path) -> None:
    app = DashboardApp(
        [serving_session(tmp_path)], start=False, clock=fixed_clock,
        keymap=keymap.merged(USER, "dashboard"),
    )  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("g")
        assert not app.dashboard.has_class("-no-gpus")
        await pilot.press("G")
        assert app.dashboard.has_class("-no-gpus")
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        table = help_table_text(app)
        assert re.search(r"^P +Prompt +dash\.prompt", table, re.M)
        assert re.search(r"^ctrl\+f +Filter +log\.filter", table, re.M)
        assert "ct129" in status_text(app)


async def test_the_log_view_takes_the_keymap_for_its_ids(tmp_path: Path) -> None:
    path = write_log(tmp_path / "sglang_serve.log", ct129_lines())
    app = LogViewApp(path, poll_interval=None, keymap=keymap.merged(USER, "log view"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, LogScreen)
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, LogScreen)  # f is no longer the filter
        await pilot.press("ctrl+f")
        await settle(pilot)
        assert isinstance(app.screen, FilterScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert ("Filter", "ctrl+f") in footer(app.screen)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        help_screen = app.screen
        await pilot.press("escape")
        await settle(pilot)
        offered = agree(app.screen, help_screen)
        assert ("Filter", "log.filter", "ctrl+f") in offered


def test_log_view_takes_the_keymap_and_only_warns_about_a_bad_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path / "sglang_serve.log", ct129_lines())
    path = tmp_path / "hosts.toml"
    monkeypatch.setenv("GDNCONSOLE_CONFIG", str(path))
    calls: list[dict[str, object]] = []
    monkeypatch.setattr("gdnconsole.ui.screens.logscreen.run_log_view", lambda *a, **kw: calls.append(kw))
    monkeypatch.setattr("gdnconsole.cli.opener.interactive", lambda: True)  # CliRunner's output is a pipe
    path.write_text('[keys]\n"log.filter" = "ctrl+f"\n"dash.prompt" = "P"\n')
    result = CliRunner().invoke(main, ["log", "view", str(log)])
    assert result.exit_code == 0 and calls[-1]["keymap"] == {"log.filter": "ctrl+f"}
    path.write_text('[keys]\n"log.filter" = "x"\n')  # the log view's "go to the fatal error"
    result = CliRunner().invoke(main, ["log", "view", str(log)])
    assert result.exit_code == 0 and "keymap" not in calls[-1]
    assert f'warning: {path}:2: keys."log.filter": "x" is also the key of log.fatal' in result.output
