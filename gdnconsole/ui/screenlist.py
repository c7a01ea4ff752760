"""The one registry of the console's screens and their keys: what the keymap checks a ``[keys]`` table
against (ui/keymap.py), what the help screen lists (ui/dialogs/help.py), and what each screen binds (its
``BINDINGS`` are read from here), so the palette, which offers the keys active on a screen, says the same.

The bindings are data here, and this module imports nothing of the console, so that listing them loads
no screen: each screen's module loads when it opens (the flag form brings SGLang's flag tables;
bench/bench_first_frame.py), and reads its keys from here. Textual's own widget keys (a DataTable's) are
read from Textual when asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from textual.binding import Binding, BindingType

AppName = Literal["dashboard", "log view"]
Keymap = Mapping[str, str]  # binding id → keys, as given to ``App.set_keymap``
Section = tuple[str, Sequence[BindingType]]  # a title of the help screen and the keys under it

# The dashboard's `e` edits the launch flags; the log pane's "first error" moves to `E` there (the log
# view keeps `e`). Applied as the dashboard app's keymap, so footer, help and palette all say `E`.
DASHBOARD_KEYMAP: Mapping[str, str] = {"log.first_error": "E"}


@dataclass(frozen=True)
class Part:
    """Keys active on a screen: ``bindings``, or those of ``source``, a Textual widget
    (``textual.widgets:DataTable``) read when asked for. ``title``: its section in help; None for
    Textual's widget keys (scrolling a table), which help leaves out but the keymap checks. ``widget``:
    the keys of a widget on the screen (the log pane, the prompt box), not of the screen itself."""

    title: str | None
    bindings: tuple[BindingType, ...] = ()
    source: str = ""
    widget: bool = False

    def loaded(self) -> tuple[BindingType, ...]:
        if not self.source:
            return self.bindings
        module, name = self.source.split(":")
        return tuple(getattr(importlib.import_module(module), name).BINDINGS)


@dataclass(frozen=True)
class ScreenSpec:
    """One screen or dialog: the bindings active together on it, in the apps whose keymap applies.

    ``opener``: the id of the dashboard binding that opens it (help titles it "tune (u)" in the keys in
    force); ``typing``: it has text fields, so a remapped key must not type a character; ``launching``:
    the actions a read-only console has not; ``in_app_help``: listed by the help of its app's main screen
    (the host picker, shown before any dashboard, lists itself only)."""

    name: str
    apps: tuple[AppName, ...]
    parts: tuple[Part, ...]
    opener: str | None = None
    typing: bool = False
    launching: frozenset[str] = frozenset()
    in_app_help: bool = True

    @property
    def own(self) -> list[BindingType]:
        """The screen's own bindings, for its ``BINDINGS``."""
        return list(next(p for p in self.parts if not (p.source or p.widget)).bindings)

    def active(self) -> list[BindingType]:
        """Every binding active on the screen but the app's and Textual's own."""
        return [binding for part in self.parts for binding in part.loaded()]


def _host_bindings() -> tuple[Binding, ...]:
    return tuple(
        Binding(str(n), f"host({n - 1})", f"Host {n}", show=False, id=f"dash.host_{n}") for n in range(1, 10)
    )


# The most used first: the key bar keeps this order and leaves out the last ones when narrow.
DASHBOARD = (
    Binding("e", "edit", "Edit flags", id="dash.edit"),
    Binding("L", "launch", "Launch", id="dash.launch"),
    Binding("R", "relaunch", "Relaunch", id="dash.relaunch"),
    Binding("S", "stop", "Stop server", id="dash.stop"),
    Binding("p", "prompt", "Prompt", id="dash.prompt"),
    Binding("j", "journal", "Journal", id="dash.journal"),
    Binding("u", "tune", "Tune speculative flags", show=False, id="dash.tune"),
    Binding("v", "serving", "Serving figures", show=False, id="dash.serving"),
    Binding("right_square_bracket", "next_host", "Next host", key_display="]", id="dash.next_host"),
    Binding("left_square_bracket", "previous_host", "Previous host", show=False, id="dash.previous_host"),
    *_host_bindings(),
    Binding("q", "quit", "Quit", id="dash.quit"),
    Binding("r", "reconnect", "Reconnect", id="dash.reconnect"),
    Binding("g", "toggle_gpus", "Show / hide the GPU panel", show=False, id="dash.gpus"),
    Binding("question_mark,f1", "help", "Help", key_display="?", id="dash.help"),
)

FLAG_FORM = (
    Binding("ctrl+s", "save", "Save", id="form.save", priority=True),
    Binding("ctrl+n", "save_as", "Save as new", id="form.save_as", priority=True),
    Binding("ctrl+o", "copy", "Copy command", id="form.copy", priority=True),
    Binding("ctrl+t", "check_host", "Check on host", id="form.check_host", priority=True),
    Binding("ctrl+l", "launch", "Launch this", id="form.launch", priority=True),
    Binding("ctrl+r", "reveal", "Reveal secrets", id="form.reveal", priority=True),
    Binding("escape", "close", "Close", id="form.close"),
)

JOURNAL = (
    Binding("r", "rerun", "Re-run", id="journal.rerun"),
    Binding("e", "load_form", "Load into form", id="journal.form"),
    Binding("m", "export", "Export Markdown", id="journal.export"),
    Binding("ctrl+r", "reveal", "Reveal secrets", id="journal.reveal"),
    Binding("escape,q,j", "close", "Close", key_display="esc", id="journal.close"),
)

PROMPT_PANEL = (
    Binding("ctrl+r,f5", "run", "Run", priority=True, id="prompt.run"),
    Binding("ctrl+g", "burst", "Burst", priority=True, id="prompt.burst"),
    Binding("escape,ctrl+c", "cancel", "Cancel", key_display="esc", priority=True, id="prompt.cancel"),
    Binding("ctrl+t", "thinking", "Thinking", priority=True, id="prompt.thinking"),
    Binding("f2", "next_preset", "Next preset", priority=True, id="prompt.preset"),
    Binding("alt+up", "recall_older", "Earlier prompt", show=False, id="prompt.older"),
    Binding("alt+down", "recall_newer", "Later prompt", show=False, id="prompt.newer"),
    Binding("f1", "help", "Help", id="prompt.help"),
    Binding("escape", "close", "Close", key_display="esc", id="prompt.close"),
)
# The prompt box's own ↑ / ↓ (TextArea keys), listed in help beside the panel's keys.
RECALL_KEYS = (
    Binding("up", "cursor_up", "Earlier prompt (first line)", id="prompt.box_up"),
    Binding("down", "cursor_down", "Later prompt (last line)", id="prompt.box_down"),
)

TUNE = (
    Binding("ctrl+r,f5", "run", "Run sweep", priority=True, id="tune.run"),
    Binding("ctrl+b", "apply_best", "Apply best", priority=True, id="tune.apply"),
    Binding("ctrl+l", "relaunch", "Relaunch what ran before", priority=True, id="tune.relaunch"),
    Binding("escape", "stop_or_close", "Stop / close", key_display="esc", id="tune.close"),
)

SERVING = (Binding("escape,q,v", "close", "Close", key_display="esc", id="serving.close"),)

HOST_PICKER = (
    Binding("space", "mark", "Mark", id="picker.mark"),
    Binding("enter", "open", "Open", id="picker.open", priority=True),
    Binding("question_mark,f1", "help", "Help", key_display="?", id="picker.help"),
    Binding("q,escape", "quit", "Quit", key_display="q", id="picker.quit"),
)

LOG_VIEW = (
    Binding("question_mark,f1", "help", "Help", key_display="?", id="log.help"),
    Binding("q", "quit", "Quit", id="log.quit"),
)

HELP = (Binding("escape,q,question_mark,f1", "close", "Close help", id="help.close"),)

# The log pane's keys (LogPane) and its lines' (LogView): on the dashboard and in the log view.
LOG_PANE_KEYS = (
    Binding("F", "toggle_follow", "Follow", id="log.follow"),
    Binding("f", "filter", "Filter", id="log.filter"),
    Binding("slash", "search", "Search", key_display="/", id="log.search"),
    Binding("n", "search_next", "Next match", key_display="n/N", id="log.search_next"),
    Binding("N", "search_prev", "Previous match", show=False, id="log.search_prev"),
    Binding("e", "first_error", "First error", id="log.first_error"),
    Binding("x", "fatal", "Go to the fatal error", show=False, id="log.fatal"),
    Binding("t", "toggle_timeline", "Show / hide the timeline", show=False, id="log.timeline"),
    Binding("escape", "cancel", "Stop / clear filter", show=False, id="log.cancel"),
)
LOG_LINES_KEYS = (
    Binding("up", "cursor_up", "Up", show=False, id="log.cursor_up"),
    Binding("down", "cursor_down", "Down", show=False, id="log.cursor_down"),
    Binding("pageup", "page_up", "Page up", show=False, id="log.page_up"),
    Binding("pagedown", "page_down", "Page down", show=False, id="log.page_down"),
    Binding("home", "first", "First line", show=False, id="log.first"),
    Binding("end", "last", "Last line, resume following", show=False, id="log.last"),
    Binding("left", "left", "Scroll left", show=False, id="log.left"),
    Binding("right", "right", "Scroll right", show=False, id="log.right"),
    Binding("enter", "toggle_fold", "Fold", id="log.fold"),
    Binding("c", "copy_line", "Copy", id="log.copy"),
    Binding("w", "toggle_wrap", "Wrap", id="log.wrap"),
    Binding("T", "toggle_short_time", "Short timestamps (HH:MM:SS)", show=False, id="log.short_time"),
)

CONFIRM = (
    Binding("y", "answer(True)", "Yes", id="confirm.yes"),
    Binding("n,escape", "answer(False)", "No", id="confirm.no"),
)
ASK_NAME = (Binding("escape", "cancel", "Cancel", id="askname.cancel"),)
HOST_KEY = (
    Binding("y", "answer(True)", "Trust the key", id="hostkey.yes"),
    Binding("n,escape", "answer(False)", "Do not connect", id="hostkey.no"),
)
FILTER = (
    Binding("escape", "cancel", "Cancel", id="filter.cancel"),
    Binding("ctrl+s", "apply", "Apply", id="filter.apply"),
)
SEARCH = (Binding("escape", "cancel", "Cancel", id="search.cancel"),)

LOG_PANE = Part("log view", LOG_PANE_KEYS, widget=True)
LOG_LINES = Part("log lines", LOG_LINES_KEYS, widget=True)
TABLE = Part(None, source="textual.widgets:DataTable")
BOTH: tuple[AppName, ...] = ("dashboard", "log view")

SCREENS: tuple[ScreenSpec, ...] = (
    ScreenSpec(
        "dashboard", ("dashboard",), (Part("dashboard", DASHBOARD), LOG_PANE, LOG_LINES),
        launching=frozenset({"launch", "relaunch", "stop", "tune"}),
    ),
    ScreenSpec(
        "flag form", ("dashboard",), (Part("flag form", FLAG_FORM),), opener="dash.edit", typing=True,
        launching=frozenset({"launch"}),
    ),
    ScreenSpec(
        "journal", ("dashboard",), (Part("journal", JOURNAL), TABLE), opener="dash.journal",
        launching=frozenset({"rerun"}),
    ),
    ScreenSpec(
        "prompt panel", ("dashboard",),
        (Part("prompt panel", PROMPT_PANEL), Part("prompt box", RECALL_KEYS, widget=True)),
        opener="dash.prompt", typing=True,
    ),
    ScreenSpec(
        "tune", ("dashboard",), (Part("tune", TUNE), TABLE), opener="dash.tune", typing=True,
        launching=frozenset({"run", "relaunch"}),
    ),
    ScreenSpec("serving", ("dashboard",), (Part("serving", SERVING),), opener="dash.serving"),
    ScreenSpec(
        "confirmation", ("dashboard",),
        (Part("confirmations", CONFIRM),),
    ),
    ScreenSpec(
        "new profile name", ("dashboard",),
        (Part("new profile name", ASK_NAME),), typing=True,
    ),
    ScreenSpec(
        "host key dialog", ("dashboard",),
        (Part("host key dialog", HOST_KEY),),
    ),
    ScreenSpec(
        "host picker", ("dashboard",),
        (Part("host picker", HOST_PICKER), Part(None, source="textual.widgets:OptionList")),
        in_app_help=False,
    ),
    ScreenSpec("log view", ("log view",), (LOG_PANE, Part("log view", LOG_VIEW), LOG_LINES)),
    ScreenSpec(
        "filter dialog", BOTH,
        (Part("filter dialog", FILTER),), typing=True,
    ),
    ScreenSpec(
        "search prompt", BOTH,
        (Part("search prompt", SEARCH),), typing=True,
    ),
    ScreenSpec("help", BOTH, (Part("this help", HELP),)),
)  # fmt: skip
BY_NAME = {spec.name: spec for spec in SCREENS}

# Each app's main screen; its help lists every screen of its app (in_app_help).
MAIN: Mapping[AppName, str] = {"dashboard": "dashboard", "log view": "log view"}


def spec(name: str) -> ScreenSpec:
    return BY_NAME[name]


@cache
def textual_keys() -> tuple[BindingType, ...]:
    """The app's and Textual's own keys (ctrl+q, ctrl+p, tab…), active on every screen."""
    from textual.app import App
    from textual.screen import Screen

    palette = Binding(App.COMMAND_PALETTE_BINDING, "command_palette", "Command palette")
    return (*App.BINDINGS, palette, *Screen.BINDINGS)


def _action(binding: BindingType) -> str:
    return binding.action if isinstance(binding, Binding) else binding[1]


def _kept(bindings: Iterable[BindingType], drop: frozenset[str]) -> list[BindingType]:
    return [b for b in bindings if _action(b) not in drop]


KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
}


def key_label(binding: Binding, keymap: Keymap | None = None) -> str:
    """Every key of a binding, in ``keymap`` where it remaps the binding's id (the footer shows one short
    label; help and the palette show them all)."""
    keys = (keymap or {}).get(binding.id or "", binding.key)
    return ", ".join(KEY_NAMES.get(k, k) for k in keys.split(","))


def _opener_key(opener: str, keymap: Keymap) -> str:
    """The first key of the dashboard binding ``opener``, as help shows it."""
    binding = next(b for b in DASHBOARD if b.id == opener)
    return key_label(binding, keymap).split(", ")[0]


def sections_of(item: ScreenSpec, keymap: Keymap, readonly: bool = False) -> list[Section]:
    """``item``'s sections of the help screen: one per titled part, the first titled with the key that
    opens the screen; without the launching keys in a read-only console."""
    drop = item.launching if readonly else frozenset()
    merged: dict[str, list[BindingType]] = {}  # parts of one title are one section: the log view's
    for part in item.parts:
        if part.title is not None:
            merged.setdefault(part.title, []).extend(_kept(part.loaded(), drop))
    out: list[Section] = list(merged.items())
    if out and item.opener is not None:
        out[0] = (f"{out[0][0]} ({_opener_key(item.opener, keymap)})", out[0][1])
    return out


def help_sections(
    name: str, keymap: Keymap, app_bindings: Sequence[BindingType], readonly: bool = False
) -> list[Section]:
    """What the help screen of screen ``name`` lists: for an app's main screen, every screen of that app
    (in the registry's order); for another, that screen alone; then the app's own keys."""
    main = next((app for app, screen in MAIN.items() if screen == name), None)
    items = [s for s in SCREENS if main in s.apps and s.in_app_help] if main else [spec(name)]
    sections = [section for item in items for section in sections_of(item, keymap, readonly)]
    return [*sections, ("application", list(app_bindings))]
