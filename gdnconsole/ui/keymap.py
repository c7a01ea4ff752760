"""Key remapping: the ``[keys]`` table of the hosts file (binding id → keys) checked against the bindings of
each screen, and merged over the built-in keymap for ``App.set_keymap``.

``config.hosts`` checks only the table's shape (it may not import ``ui/``); this module reads the screens
from their registry (ui/screenlist.py, which loads no screen). A screen's bindings are those active
together on it: the dashboard screen with its log pane and log lines, the flag form, the journal, and so
on, each with the app's and Textual's own keys (ctrl+q, ctrl+p, tab…).

The rules, each an error naming the binding id (and the config names file, line and key):

- the id is one of the bindings' ids (else: did you mean …?);
- each key is a key Textual can report: one printable character (``P``, ``?``), a named key (``f5``,
  ``pageup``, ``space``, ``question_mark``), or modifiers and a key (``ctrl+f``, ``alt+shift+up``); a value
  may list several keys, comma-separated, as the built-in bindings do;
- on a screen with text fields (the flag form, the prompt panel, the filter and name dialogs) a remapped
  key must not be one that types a character;
- on each screen, two actions must not end on the same key, where at least one of them was remapped (a
  remapped key that collides with another binding's default key on that screen counts).
"""

from __future__ import annotations

import difflib
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import get_args

from textual.binding import Binding, BindingType
from textual.keys import KEY_ALIASES, Keys, _character_to_key, key_to_character

from gdnconsole.config.hosts import Config
from gdnconsole.ui import screenlist

Keymap = Mapping[str, str]  # binding id → keys ("ctrl+f" or "ctrl+r,f5"), as App.set_keymap takes it

MODIFIERS = ("alt", "ctrl", "hyper", "meta", "shift", "super")  # Textual sorts them this way in key names


@dataclass(frozen=True)
class KeyUse:
    """One binding on one screen: its id (None for Textual's own), what it does, its default keys."""

    id: str | None
    action: str
    description: str
    keys: tuple[str, ...]  # normalized

    @property
    def name(self) -> str:
        """How a message names it: its id, or the action of a binding without one."""
        return self.id or f"the built-in {self.action!r} action"


@dataclass(frozen=True)
class ScreenKeys:
    """The bindings active together on one screen of one app."""

    name: str
    app: str  # "dashboard" or "log view": whose keymap applies
    uses: tuple[KeyUse, ...]
    typing: bool = False  # text fields: a key that types a character cannot be a binding


@dataclass(frozen=True)
class Problem:
    """What is wrong with one entry of the user's keymap."""

    binding_id: str
    problem: str
    hint: str | None = None


# -- key names ---------------------------------------------------------------------------------------


@cache
def _named_keys() -> frozenset[str]:
    """Every key name without modifiers that Textual reports."""
    names = {k.value for k in Keys if "+" not in k.value and not k.value.startswith("<")}
    names |= {_character_to_key(c) for c in string.printable if c not in "\t\n\r\x0b\x0c"}
    names |= {"space", "tab", "enter", "escape", "backspace", "delete", "insert", "comma"}
    names |= {f"f{n}" for n in range(1, 25)}
    return frozenset(names)


_ALIASES = {alias: key for key, aliases in KEY_ALIASES.items() for alias in aliases}  # ctrl+i → tab


def normalize_key(key: str) -> str | None:
    """The name Textual reports for ``key`` ("?" → "question_mark", "shift+ctrl+x" → "ctrl+shift+x"),
    or None when it is not a key Textual can report."""
    key = key.strip()
    if len(key) == 1:
        return _character_to_key(key) if key.isprintable() and key != "," else None
    *mods, base = key.split("+")
    if not base or any(m not in MODIFIERS for m in mods) or len(set(mods)) != len(mods):
        return None
    if len(base) == 1:
        if mods and base.isalpha() and base.isupper():
            return None  # with a modifier, a letter is lowercase: ctrl+shift+p
        base = _character_to_key(base) if base.isprintable() and base != "," else ""
    if base not in _named_keys():
        return None
    name = "+".join([*sorted(mods), base])
    return _ALIASES.get(name, name)


def split_keys(keys: str) -> list[str]:
    return [k.strip() for k in keys.split(",")]


def normalize_keys(keys: str) -> tuple[str, ...] | None:
    """Each key of a comma-separated list, normalized; None if one of them is not a key."""
    out: list[str] = []
    for key in split_keys(keys):
        name = normalize_key(key)
        if name is None:
            return None
        out.append(name)
    return tuple(out)


def types_text(key: str) -> bool:
    """Whether ``key`` (normalized) types a character into a text field."""
    return "+" not in key and key_to_character(key) is not None


# -- the registry ----------------------------------------------------------------------------------


def _uses(bindings: Iterable[BindingType]) -> list[KeyUse]:
    out: list[KeyUse] = []
    for binding in bindings:
        if isinstance(binding, Binding):
            key, action, description, binding_id = (
                binding.key,
                binding.action,
                binding.description,
                binding.id,
            )
        else:
            key, action, binding_id = binding[0], binding[1], None
            description = binding[2] if len(binding) > 2 else ""
        keys = tuple(normalize_key(k) or k for k in split_keys(key))
        out.append(KeyUse(binding_id, action, description, keys))
    return out


@cache
def screens() -> tuple[ScreenKeys, ...]:
    """Every screen of the dashboard app and of the log view app (ui/screenlist.py), with the bindings
    active on it and the app's and Textual's own. Listing them loads no screen module: only the widgets
    and dialogs whose keys come with a screen."""
    return tuple(
        ScreenKeys(item.name, app, tuple(_uses([*item.active(), *screenlist.textual_keys()])), item.typing)
        for app in get_args(screenlist.AppName)
        for item in screenlist.SCREENS
        if app in item.apps
    )


def builtin_keymap(app: str) -> dict[str, str]:
    """The keymap an app applies before the user's."""
    return dict(screenlist.DASHBOARD_KEYMAP) if app == "dashboard" else {}


def binding_ids(app: str | None = None) -> set[str]:
    """The ids of every binding (of one app's screens)."""
    return {u.id for s in screens() if app is None or s.app == app for u in s.uses if u.id}


# -- checking and merging ----------------------------------------------------------------------------


def _shown(key: str) -> str:
    names = {"question_mark": "?", "slash": "/", "right_square_bracket": "]", "left_square_bracket": "["}
    return names.get(key, key)


KEY_NAMES = 'a key such as "P", "ctrl+f", "f5" or "pageup" (several: "ctrl+r,f5")'


def _key_hint(keys: str) -> str | None:
    bad = next(k for k in split_keys(keys) if normalize_key(k) is None)
    base = bad.rsplit("+", 1)[-1]
    if "+" in bad and len(base) == 1 and base.isupper():
        mods = bad[: -len(base)]
        shift = "" if "shift+" in mods else "shift+"
        return f"with a modifier a letter is lowercase: {mods}{shift}{base.lower()}"
    if not bad:
        return "an empty key between commas"
    if len(base) > 1 and normalize_key(bad.lower()) is not None:
        return f'key names are lowercase: "{bad.lower()}"'
    return f'"{bad}" is not a key name' if bad != keys.strip() else None


def problems(user: Keymap) -> list[Problem]:
    """Everything wrong with the user's keymap, one problem per entry at most, in the table's order."""
    known = binding_ids()
    found: dict[str, Problem] = {}
    parsed: dict[str, tuple[str, ...]] = {}
    for binding_id, keys in user.items():
        if binding_id not in known:
            close = difflib.get_close_matches(binding_id, sorted(known), n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else "`?` in the console lists every binding id"
            found[binding_id] = Problem(binding_id, "unknown binding id", hint)
            continue
        names = normalize_keys(keys)
        if names is None:
            found[binding_id] = Problem(binding_id, f'expected {KEY_NAMES}, found "{keys}"', _key_hint(keys))
            continue
        parsed[binding_id] = names
    for screen in screens():
        for problem in _screen_problems(screen, parsed):
            found.setdefault(problem.binding_id, problem)
    return [found[i] for i in user if i in found]


def _screen_problems(screen: ScreenKeys, user: Mapping[str, tuple[str, ...]]) -> Iterable[Problem]:
    base = {i: normalize_keys(k) or () for i, k in builtin_keymap(screen.app).items()}
    remapped: set[str] = set()
    owners: dict[str, list[KeyUse]] = {}
    for use in screen.uses:
        keys = use.keys
        if use.id is not None and use.id in base:
            keys = base[use.id]
        if use.id is not None and use.id in user and user[use.id] != keys:
            keys = user[use.id]
            remapped.add(use.id)
            if screen.typing and (typed := next((k for k in keys if types_text(k)), None)):
                yield Problem(
                    use.id,
                    f'"{_shown(typed)}" would type into the text fields of the {screen.name}',
                    "use a key with ctrl or alt, or a function key",
                )
        for key in dict.fromkeys(keys):
            owners.setdefault(key, []).append(use)
    for key, uses in owners.items():
        mine = [u for u in uses if u.id in remapped]
        if len(uses) < 2 or not mine:
            continue
        order = list(user)
        first = max(mine, key=lambda u: order.index(u.id or ""))  # the one written last: at its line
        other = next(u for u in uses if u is not first)
        assert first.id is not None
        yield Problem(
            first.id,
            f'"{_shown(key)}" is also the key of {other.name} on the {screen.name} screen',
            "choose another key, or remap both",
        )


def merged(user: Keymap, app: str) -> dict[str, str]:
    """The keymap for ``app``: the built-in one, and the user's entries for that app's bindings over it
    (keys normalized, as Textual names them)."""
    ids = binding_ids(app)
    out = builtin_keymap(app)
    for binding_id, keys in user.items():
        names = normalize_keys(keys)
        if binding_id in ids and names is not None:
            out[binding_id] = ",".join(names)
    return out


def checked(cfg: Config, app: str = "dashboard") -> dict[str, str]:
    """The app's keymap from the hosts file's ``[keys]`` table; raises ConfigError at the first problem,
    naming the file, the line and the key."""
    if not cfg.console.keys:
        return builtin_keymap(app)
    found = problems(cfg.console.keys)
    if found:
        first = found[0]
        raise cfg.console.key_error(cfg.path, first.binding_id, first.problem, first.hint)
    return merged(cfg.console.keys, app)
