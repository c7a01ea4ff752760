"""The one registry of screens and their keys (ui/screenlist.py), read by the screens' BINDINGS, the keymap,
help and the palette:

- each screen, dialog and widget binds exactly the registry's keys;
- the dashboard's help lists every screen of the dashboard app, each titled with the key that opens it
  (`tune (u)` too), and every binding of each;
- on the dashboard and on each screen a dashboard key opens, the palette offers every binding of that
  screen that can run now (a binding its screen disables, such as "Apply best" before a sweep, aside);
- a key remapped in [keys] is the key of help's row, of help's title for the screen it opens, of the
  palette's command, and the key that works.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from textual.actions import parse
from textual.binding import Binding, BindingType
from textual.screen import Screen

from gdnconsole.ui import keymap, screenlist
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.askname import AskNameScreen
from gdnconsole.ui.dialogs.confirm import ConfirmScreen
from gdnconsole.ui.dialogs.filtersearch import FilterScreen, SearchScreen
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.dialogs.hostkey import HostKeyScreen
from gdnconsole.ui.screens.dashboard import DashboardScreen
from gdnconsole.ui.screens.flagform import FlagFormScreen
from gdnconsole.ui.screens.hostpicker import HostPickerScreen
from gdnconsole.ui.screens.journal import JournalScreen
from gdnconsole.ui.screens.logscreen import LogScreen
from gdnconsole.ui.screens.promptpanel import RECALL_KEYS, PromptScreen
from gdnconsole.ui.screens.serving import ServingScreen
from gdnconsole.ui.screens.tune import TuneScreen
from gdnconsole.ui.widgets.logpane import LogPane
from gdnconsole.ui.widgets.logview import LogView
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, crashed_session, fixed_clock, serving_session
from tests.ui.test_keymap import help_rows, palette

SCREEN_CLASSES: dict[str, type[Screen[object]]] = {
    "dashboard": DashboardScreen,
    "flag form": FlagFormScreen,
    "journal": JournalScreen,
    "prompt panel": PromptScreen,
    "tune": TuneScreen,
    "serving": ServingScreen,
    "confirmation": ConfirmScreen,
    "new profile name": AskNameScreen,
    "host key dialog": HostKeyScreen,
    "host picker": HostPickerScreen,
    "log view": LogScreen,
    "filter dialog": FilterScreen,
    "search prompt": SearchScreen,
    "help": HelpScreen,
}
# A remapped key for a screen's opener and one for a key of that screen.
REMAPPED = {"dash.tune": "U", "tune.close": "f9", "journal.export": "M"}


def shape(bindings: Iterable[BindingType]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for b in bindings:
        assert isinstance(b, Binding)
        out.append((b.key, b.action, b.description, b.show, b.key_display, b.priority, b.id))
    return out


def ids(bindings: Iterable[BindingType]) -> list[str]:
    return [b.id for b in bindings if isinstance(b, Binding) and b.id]


def test_every_screen_binds_the_registry_s_keys() -> None:
    assert set(SCREEN_CLASSES) == set(screenlist.BY_NAME)
    for name, screen_class in SCREEN_CLASSES.items():
        assert shape(screen_class.BINDINGS) == shape(screenlist.spec(name).own), name
    assert shape(LogPane.BINDINGS) == shape(screenlist.LOG_PANE_KEYS)
    assert shape(LogView.BINDINGS) == shape(screenlist.LOG_LINES_KEYS)
    assert shape(RECALL_KEYS) == shape(screenlist.RECALL_KEYS)


def test_every_opener_is_a_dashboard_binding_and_every_id_is_known_to_the_keymap() -> None:
    dashboard = ids(screenlist.DASHBOARD)
    openers = {s.name: s.opener for s in screenlist.SCREENS if s.opener}
    assert openers == {
        "flag form": "dash.edit",
        "journal": "dash.journal",
        "prompt panel": "dash.prompt",
        "tune": "dash.tune",
        "serving": "dash.serving",
    }
    assert set(openers.values()) <= set(dashboard)
    every = {i for s in screenlist.SCREENS for i in ids(s.active())}
    assert every == keymap.binding_ids()


def test_each_help_lists_its_screens() -> None:
    """The dashboard's help: every screen of the dashboard app but the host picker (shown before it),
    with every binding; the log view's: its own screens; another screen's: itself."""
    for app, main in screenlist.MAIN.items():
        listed = ids(b for _title, keys in screenlist.help_sections(main, {}, []) for b in keys)
        for item in screenlist.SCREENS:
            if app in item.apps and item.in_app_help:
                assert set(ids(item.active())) <= set(listed), (app, item.name)
    picker = ids(b for _t, keys in screenlist.help_sections("host picker", {}, []) for b in keys)
    assert picker == ids(screenlist.HOST_PICKER)
    assert "picker.mark" not in ids(b for _t, k in screenlist.help_sections("dashboard", {}, []) for b in k)


def test_read_only_help_leaves_out_each_screens_launching_keys() -> None:
    sections = screenlist.help_sections("dashboard", {}, [], readonly=True)
    listed = set(ids(b for _title, keys in sections for b in keys))
    assert not listed & {"dash.launch", "dash.relaunch", "dash.stop", "dash.tune", "form.launch",
                         "journal.rerun", "tune.run", "tune.relaunch"}  # fmt: skip
    assert {"dash.edit", "tune.apply", "tune.close", "journal.export"} <= listed


def offered_ids(screen: Screen[object]) -> dict[str, str]:
    """Binding id → key of each command the palette offers on ``screen``."""
    return {binding_id: key for _title, binding_id, key in palette(screen) if binding_id}


def runs_now(screen: Screen[object], binding: Binding) -> bool:
    """Whether the screen lets the binding's action run now (its check_action)."""
    _namespace, action, params = parse(binding.action)
    return screen.check_action(action, params) is not False


def assert_palette_offers(screen: Screen[object], bindings: Iterable[BindingType]) -> None:
    offered = offered_ids(screen)
    for binding in bindings:
        assert isinstance(binding, Binding) and binding.id
        if runs_now(screen, binding):
            assert binding.id in offered, (type(screen).__name__, binding.id, sorted(offered))


def help_title(help_screen: HelpScreen, start: str) -> str:
    return next(title for title, _keys in help_screen.sections if title.startswith(start))


@pytest.mark.parametrize("user", [{}, REMAPPED], ids=["built-in", "remapped"])
async def test_help_palette_and_keymap_list_every_screen_from_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user: dict[str, str]
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the prompt panel's history
    assert keymap.problems(user) == []
    keys = keymap.merged(user, "dashboard")
    app = DashboardApp(
        [serving_session(tmp_path), crashed_session(tmp_path)], start=False, clock=fixed_clock,
        journal_dir=tmp_path / "journal", keymap=keys,
    )  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        help_screen = app.screen
        rows = help_rows(help_screen)
        listed = {binding_id for _description, binding_id in rows}
        await pilot.press("escape")
        await settle(pilot)
        dashboard = app.screen
        assert isinstance(dashboard, DashboardScreen)
        assert_palette_offers(dashboard, screenlist.spec("dashboard").active())
        for item in screenlist.SCREENS:
            if "dashboard" in item.apps and item.in_app_help:
                assert set(ids(item.active())) <= listed, item.name
            if item.opener is None:
                continue
            opener = next(b for b in screenlist.DASHBOARD if b.id == item.opener)
            key = keys.get(item.opener, opener.key).split(",")[0]
            shown = screenlist.key_label(Binding(key, opener.action))
            assert help_title(help_screen, item.name) == f"{item.name} ({shown})"
            assert offered_ids(dashboard)[item.opener] == shown  # the palette's command that opens it
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, SCREEN_CLASSES[item.name]), (item.name, key, app.screen)
            assert_palette_offers(app.screen, item.own)
            offered = offered_ids(app.screen)
            for (_description, binding_id), row_keys in rows.items():
                if binding_id in user and binding_id in ids(item.own):  # remapped: help and palette say so
                    remapped = screenlist.key_label(Binding(keys[binding_id], ""))
                    assert row_keys == set(remapped.split(", ")), (binding_id, row_keys)
                    assert offered.get(binding_id, remapped) == remapped
            app.pop_screen()
            await settle(pilot)
        if user:
            assert help_title(help_screen, "tune") == "tune (U)"
            assert rows[("Tune speculative flags", "dash.tune")] == {"U"}
            assert rows[("Stop / close", "tune.close")] == {"f9"}
            assert offered_ids(dashboard)["dash.tune"] == "U"
            await pilot.press("u")  # the old key no longer opens it
            await settle(pilot)
            assert app.screen is dashboard
        else:
            assert help_title(help_screen, "tune") == "tune (u)"


async def test_the_tune_screen_s_remapped_key_works_and_the_palette_says_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    app = DashboardApp(
        [serving_session(tmp_path)], start=False, clock=fixed_clock, journal_dir=tmp_path / "journal",
        keymap=keymap.merged(REMAPPED, "dashboard"),
    )  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("U")
        await settle(pilot)
        assert isinstance(app.screen, TuneScreen)
        assert offered_ids(app.screen)["tune.close"] == "f9"
        await pilot.press("f9")
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)
