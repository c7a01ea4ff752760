"""Themes: the Textual colours of the UI and the log view's colours, read from ``themes/*.toml``.

Themes ship inside the package (``gdnconsole/themes``); a user adds their own as ``NAME.toml`` in the
``themes`` folder next to the hosts file in use, and one with a shipped theme's name replaces it. A theme is
named by its file. Which one is used: ``--theme NAME``, else ``[console] theme`` in the hosts file, else
``gdn-dark``. A broken file is reported (file, line, key, what is wrong) and the default is used instead.

Textual is imported only to parse a theme: listing and choosing one stays cheap for the command line.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.resources
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.color import Color as RichColor
from rich.color import ColorParseError as RichColorParseError
from rich.style import Style

from gdnconsole import readback
from gdnconsole.config import tomlpos
from gdnconsole.config.hosts import Config, ConfigError
from gdnconsole.errors import ConsoleError
from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.ui import pickedtheme

if TYPE_CHECKING:
    from textual.theme import Theme

DEFAULT_THEME = "gdn-dark"
THEME_COLORS = (
    "primary",
    "secondary",
    "accent",
    "background",
    "surface",
    "panel",
    "foreground",
    "warning",
    "error",
    "success",
)
_OPTIONAL_COLORS = ("boost",)
_TOP_KEYS = ("name", "dark", "colors", "log")
LOG_COLORS = (
    *(s.label for s in Stage),
    *(s.label for s in Severity),
    "cursor",
    "fold",
    "dim",
)
_LOG_KEYS = (*LOG_COLORS, "ranks")
_TOML_AT = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column \d+\)$")
COLOR_FORMS = 'expected "#RRGGBB", "rgb(R, G, B)" or a colour name'


class ThemeError(ConsoleError):
    """A theme file is missing or malformed: where, and what is wrong."""

    def __init__(self, path: Path | str, problem: str, *, line: int | None = None, key: str = "") -> None:
        self.path = Path(path)
        self.problem = problem
        self.line = line
        self.key = key
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        key = f" {self.key}:" if self.key else ""
        return f"{where}:{key} {self.problem}"


class UnknownThemeError(ConsoleError):
    """No theme file of that name, shipped or the user's."""

    def __init__(self, name: str, available: list[str]) -> None:
        self.name = name
        self.available = available
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"no theme {self.name!r} (available: {', '.join(self.available)})"


@dataclass(eq=False)
class LogPalette:
    """The log view's styles: one per stage, per severity, a cycle of rank tag colours.

    An app keeps one palette that all its widgets share, and changes it in place (``assign``) when the
    theme changes, so that every widget draws in the new colours on its next paint.
    """

    stages: dict[Stage, Style]
    severities: dict[Severity, Style]
    ranks: tuple[Style, ...]
    cursor: Style  # background of the cursor line
    fold: Style
    dim: Style

    def line_style(self, stage: Stage | None, severity: Severity) -> Style:
        """Warnings and errors take their severity's colour; other lines their stage's."""
        if severity > Severity.INFO:
            return self.severities[severity]
        if stage is None:
            return self.severities[Severity.INFO]
        return self.stages[stage]

    def rank_style(self, rank: str) -> Style:
        return self.ranks[rank_number(rank) % len(self.ranks)]

    def copy(self) -> LogPalette:
        return dataclasses.replace(self, stages=dict(self.stages), severities=dict(self.severities))

    def assign(self, other: LogPalette) -> None:
        """Take ``other``'s colours, keeping this object (the one the widgets hold)."""
        for f in dataclasses.fields(self):
            value = getattr(other, f.name)
            setattr(self, f.name, dict(value) if isinstance(value, dict) else value)


def rank_number(rank: str) -> int:
    """The number that picks a rank's colour: its last number (``DP1 TP1`` → 1, ``TP3`` → 3)."""
    digits = ""
    for ch in reversed(rank):
        if ch.isdigit():
            digits = ch + digits
        elif digits:
            break
    return int(digits) if digits else 0


# -- where themes are ------------------------------------------------------------------------------


def themes_dir() -> Path:
    """The shipped themes: the package's ``themes`` folder (installed as package data)."""
    return Path(str(importlib.resources.files("gdnconsole").joinpath("themes")))


def user_themes_dir(cfg: Config) -> Path:
    """The user's themes: the ``themes`` folder next to the hosts file in use."""
    return cfg.path.parent / "themes"


def theme_files(user_dir: Path | None = None) -> dict[str, Path]:
    """Every theme by name (its file name less ``.toml``), sorted; a user's file wins over a shipped one."""
    files = _files_in(themes_dir())
    if user_dir is not None:
        files.update(_files_in(user_dir))
    return dict(sorted(files.items()))


def _files_in(folder: Path) -> dict[str, Path]:
    if not folder.is_dir():
        return {}
    return {path.stem: path for path in sorted(folder.glob("*.toml")) if path.is_file()}


def select(option: str | None, cfg: Config | None = None) -> str:
    """The theme to use: ``--theme`` (``option``), else the one last picked in the palette (while the
    hosts file's setting is what it was then: ui/pickedtheme.py), else the hosts file's ``[console]
    theme``, else the default. An unknown ``--theme`` raises UnknownThemeError; an unknown configured
    one, a ConfigError that points at its line."""
    available = list(theme_files(user_themes_dir(cfg) if cfg else None))
    if option is not None:
        if option not in available:
            raise UnknownThemeError(option, available)
        return option
    picked = pickedtheme.remembered(cfg.console.theme if cfg is not None else None)
    if picked in available:
        return picked
    if cfg is not None and cfg.console.theme is not None:
        name = cfg.console.theme
        if name not in available:
            problem = str(UnknownThemeError(name, available))
            raise ConfigError(cfg.path, cfg.console.theme_line, "console.theme", problem)
        return name
    return DEFAULT_THEME


# -- loading ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedTheme:
    name: str
    path: Path
    theme: Theme
    palette: LogPalette


@dataclass(frozen=True)
class ThemeSet:
    """Every theme that loaded, by name, and what was wrong with the files that did not."""

    themes: Mapping[str, LoadedTheme]
    errors: tuple[ThemeError, ...] = ()

    def get(self, name: str) -> LoadedTheme:
        """``name``, or the default when its file is broken (the error says so); unknown names raise."""
        loaded = self.themes.get(name)
        if loaded is not None:
            return loaded
        if name not in {e.path.stem for e in self.errors}:
            raise UnknownThemeError(name, sorted(self.themes))
        return self.themes[DEFAULT_THEME]

    def messages(self, chosen: str) -> list[str]:
        """One line per broken file, saying what is used instead of the chosen one."""
        lines = []
        for error in self.errors:
            name = error.path.stem
            if name in self.themes:  # a broken user file over a shipped theme of the same name
                instead = f"using the shipped {name}"
            elif name == chosen:
                instead = f"using {DEFAULT_THEME}"
            else:
                instead = f"theme {name!r} left out"
            lines.append(f"{error} ({instead})")
        return lines


def load_all(user_dir: Path | None = None) -> ThemeSet:
    """Every theme: the shipped ones, then the user's (which win). A broken user file is reported and
    left out (a shipped theme of the same name stays); a broken shipped file is a bug, and raises."""
    loaded = {name: load_file(path) for name, path in _files_in(themes_dir()).items()}
    errors: list[ThemeError] = []
    if user_dir is not None:
        for name, path in _files_in(user_dir).items():
            try:
                loaded[name] = load_file(path)
            except ThemeError as exc:
                errors.append(exc)
    return ThemeSet(dict(sorted(loaded.items())), tuple(errors))


def load(name: str = DEFAULT_THEME, user_dir: Path | None = None) -> tuple[Theme, LogPalette]:
    """One theme by name: its Textual theme and its log palette (raises ThemeError, UnknownThemeError)."""
    files = theme_files(user_dir)
    path = files.get(name)
    if path is None:
        raise UnknownThemeError(name, list(files))
    loaded = load_file(path)
    return loaded.theme, loaded.palette


THEME_MAX = 1 << 20  # a theme is a few KiB


def load_file(path: Path) -> LoadedTheme:
    try:  # a FIFO among the themes is not waited on, a link to /dev/zero not read whole
        text = readback.read_regular(path, THEME_MAX).decode("utf-8")
    except FileNotFoundError:
        raise ThemeError(path, "no such file") from None
    except UnicodeDecodeError:
        raise ThemeError(path, "expected UTF-8 text, found invalid bytes") from None
    except OSError as exc:
        raise ThemeError(path, f"cannot read the file: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_AT.match(str(exc))
        what, line = (m["msg"], int(m["line"])) if m else (str(exc), None)
        raise ThemeError(path, f"invalid TOML: {what[:1].lower()}{what[1:]}", line=line) from None
    except RecursionError:  # tomllib recurses per nested array: thousands deep exhaust the stack
        raise ThemeError(path, "arrays or tables nested too deeply to be a theme") from None
    except ValueError:  # not a TOMLDecodeError: int() of over 4300 digits (Python's own limit)
        raise ThemeError(path, "a number too long to be a theme's (over 4300 digits)") from None
    theme, palette = parse(data, source=path, positions=tomlpos.scan(text))
    return LoadedTheme(path.stem, path, theme, palette)


def parse(
    data: dict[str, Any], *, source: Path | str, positions: tomlpos.Positions | None = None
) -> tuple[Theme, LogPalette]:
    """A theme file's contents, checked: every key known, every colour present and valid."""
    return _Parser(Path(source), positions or tomlpos.Positions()).parse(data)


class _Parser:
    def __init__(self, path: Path, positions: tomlpos.Positions) -> None:
        self.path = path
        self.positions = positions

    def error(self, key: tuple[str, ...], problem: str) -> ThemeError:
        return ThemeError(self.path, problem, line=self.positions.line_of(key) or None, key=".".join(key))

    def known(self, table: Mapping[str, Any], known: tuple[str, ...], prefix: tuple[str, ...]) -> None:
        for key in table:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
                hint = f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(known)
                raise self.error((*prefix, key), f"unknown key ({hint})")

    def table(self, data: Mapping[str, Any], key: str) -> dict[str, Any]:
        table = data.get(key)
        if not isinstance(table, dict):
            what = "missing table" if table is None else "expected a table"
            raise self.error((key,), f"{what} [{key}]")
        return table

    def parse(self, data: dict[str, Any]) -> tuple[Theme, LogPalette]:
        from textual.theme import Theme

        self.known(data, _TOP_KEYS, ())
        stem = self.path.stem
        name = data.get("name", stem)
        if name != stem:
            raise self.error(
                ("name",),
                f"{name!r} differs from the file name: a theme is named by its file "
                f"(remove the key, or write name = {stem!r})",
            )
        dark = data.get("dark", True)
        if not isinstance(dark, bool):
            raise self.error(("dark",), f"expected true or false, found {dark!r}")
        colors = self.table(data, "colors")
        log = self.table(data, "log")
        self.known(colors, (*THEME_COLORS, *_OPTIONAL_COLORS), ("colors",))
        missing = [k for k in THEME_COLORS if k not in colors]
        if missing:
            keys = ", ".join(repr(k) for k in missing)
            raise self.error(("colors",), f"missing required key{'s' * (len(missing) > 1)} {keys} (colours)")
        textual_colors: dict[str, Any] = {k: self.textual_color(("colors", k), v) for k, v in colors.items()}
        theme = Theme(name=stem, dark=dark, **textual_colors)
        return theme, self.palette(log)

    def textual_color(self, key: tuple[str, ...], value: Any) -> str:
        from textual.color import Color, ColorParseError

        if isinstance(value, str):
            try:
                Color.parse(value)
            except ColorParseError:
                pass
            else:
                return value
        raise self.error(key, f"{_shown(value)} is not a colour ({COLOR_FORMS})")

    def log_color(self, key: tuple[str, ...], value: Any) -> str:
        if value is None:
            raise self.error(key[:-1], f"missing required key {key[-1]!r} (a colour)")
        if isinstance(value, str):
            try:
                RichColor.parse(value)
            except RichColorParseError:
                pass
            else:
                return value
        raise self.error(key, f"{_shown(value)} is not a colour ({COLOR_FORMS})")

    def palette(self, log: dict[str, Any]) -> LogPalette:
        self.known(log, _LOG_KEYS, ("log",))

        def color(name: str) -> str:
            return self.log_color(("log", name), log.get(name))

        ranks = log.get("ranks")
        if ranks is None:
            raise self.error(("log",), "missing required key 'ranks' (a list of colours)")
        if not isinstance(ranks, list) or not ranks:
            raise self.error(("log", "ranks"), f"expected a non-empty list of colours, found {_shown(ranks)}")
        rank_colors = [self.log_color(("log", "ranks"), r) for r in ranks]
        severities = {s: Style(color=color(s.label)) for s in Severity}
        severities[Severity.FATAL] += Style(bold=True)
        return LogPalette(
            stages={s: Style(color=color(s.label)) for s in Stage},
            severities=severities,
            ranks=tuple(Style(color=r, bold=True) for r in rank_colors),
            cursor=Style(bgcolor=color("cursor")),
            fold=Style(color=color("fold"), bold=True),
            dim=Style(color=color("dim")),
        )


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


# -- contrast --------------------------------------------------------------------------------------


def relative_luminance(color: str) -> float:
    """WCAG 2 relative luminance of a colour string (as Rich reads it)."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = RichColor.parse(color).get_truecolor()
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two colours, from 1 (none) to 21 (black on white)."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
