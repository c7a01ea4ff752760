"""Themes: the Textual colours of the UI and the log view's colours, read from ``themes/*.toml``."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.style import Style
from textual.theme import Theme

from gdnconsole.sglang.stages import Severity, Stage

DEFAULT_THEME = "gdn-dark"
_THEME_COLORS = (
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


class ThemeError(Exception):
    """A theme file is missing or malformed."""


@dataclass(frozen=True)
class LogPalette:
    """The log view's styles: one per stage, per severity, a cycle of rank tag colours."""

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


def rank_number(rank: str) -> int:
    """The number that picks a rank's colour: its last number (``DP1 TP1`` → 1, ``TP3`` → 3)."""
    digits = ""
    for ch in reversed(rank):
        if ch.isdigit():
            digits = ch + digits
        elif digits:
            break
    return int(digits) if digits else 0


def themes_dir() -> Path:
    """The installed themes (``gdnconsole/themes``, a link to the repository's ``themes/``)."""
    packaged = Path(__file__).resolve().parent.parent / "themes"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "themes"


def load(name: str = DEFAULT_THEME) -> tuple[Theme, LogPalette]:
    path = themes_dir() / f"{name}.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ThemeError(f"no theme {name!r} ({path})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ThemeError(f"{path}: {exc}") from None
    return parse(data, source=str(path))


def parse(data: dict[str, Any], *, source: str) -> tuple[Theme, LogPalette]:
    colors = _table(data, "colors", source)
    log = _table(data, "log", source)
    missing = [k for k in _THEME_COLORS if k not in colors]
    if missing:
        raise ThemeError(f"{source}: [colors] lacks {', '.join(missing)}")
    theme = Theme(name=str(data.get("name", Path(source).stem)), dark=bool(data.get("dark", True)), **colors)
    return theme, _palette(log, source)


def _table(data: dict[str, Any], key: str, source: str) -> dict[str, Any]:
    table = data.get(key)
    if not isinstance(table, dict):
        raise ThemeError(f"{source}: missing table [{key}]")
    return table


def _palette(log: dict[str, Any], source: str) -> LogPalette:
    def color(key: str) -> Style:
        value = log.get(key)
        if not isinstance(value, str):
            raise ThemeError(f"{source}: [log] needs a colour for {key!r}")
        return Style(color=value)

    ranks = log.get("ranks")
    if not isinstance(ranks, list) or not ranks or not all(isinstance(r, str) for r in ranks):
        raise ThemeError(f"{source}: [log] ranks must be a non-empty list of colours")
    severities = {s: color(s.label) for s in Severity}
    severities[Severity.FATAL] += Style(bold=True)
    cursor = log.get("cursor", "#333333")
    return LogPalette(
        stages={s: color(s.label) for s in Stage},
        severities=severities,
        ranks=tuple(Style(color=r, bold=True) for r in ranks),
        cursor=Style(bgcolor=str(cursor)),
        fold=color("fold") + Style(bold=True),
        dim=color("dim"),
    )
