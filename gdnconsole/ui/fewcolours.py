"""Themes on terminals with fewer colours: 256 (tmux without truecolor, macOS Terminal.app, screen) or 16.

The terminal gets each colour rounded to its palette (Rich does it on the way out), and dark, bluish
greys such as gdn-dark's background, surface and panel all round to colour 16: the edges of bars, input
fields and dialogs, which are drawn as a change of background, vanish. ``for_terminal`` gives the theme
as such a terminal can show it: the colours that draw structure (background, surface, panel, the edge
of an input that does not have the focus) picked from the terminal's own palette, distinct wherever the
theme has them distinct, in the same order of lightness. Everything else is left to rounding."""

from __future__ import annotations

import colorsys
import dataclasses
from typing import TYPE_CHECKING

from rich.color import Color, ColorSystem, ColorType

if TYPE_CHECKING:
    from textual.theme import Theme

FULL = 1 << 24
SYSTEMS = {"truecolor": FULL, "256": 256, "standard": 16, "windows": 16}
STRUCTURE = ("background", "surface", "panel")  # from the page outwards: each a step further
# 16 colours have two greys between black and white: a dark theme's page is black, its input fields
# bright black and its bars blue (white text reads on it); a light theme's page bright white, its input
# fields white (a light grey) and its bars cyan (black text reads on it).
SIXTEEN = {True: ("#000000", "#303030", "#000080"), False: ("#FFFFFF", "#C0C0C0", "#008080")}
GREYS = 25  # steps from black to white in the 256-colour palette's grey ramp (as Rich rounds them)


def colours_of(system: str | None) -> int:
    """How many colours a Rich colour system has (None, no terminal: as many as the theme has)."""
    return SYSTEMS.get(system or "truecolor", FULL)


def rounded(colour: str, colours: int) -> int | None:
    """The palette number a terminal of ``colours`` colours shows ``colour`` as (None: shown as it is)."""
    if colours > 256:
        return None
    system = ColorSystem.EIGHT_BIT if colours == 256 else ColorSystem.STANDARD
    return Color.parse(colour).downgrade(system).number


def for_terminal(theme: Theme, colours: int) -> Theme:
    """``theme`` as a terminal of ``colours`` colours can show it (the theme itself on truecolor)."""
    if colours > 256:
        return theme
    picks = _sixteen(theme) if colours < 256 else _two_fifty_six(theme)
    variables = {**theme.variables, "border-blurred": picks["panel"], "footer-background": picks["panel"]}
    return dataclasses.replace(
        theme,
        background=picks["background"],
        surface=picks["surface"],
        panel=picks["panel"],
        variables=variables,
    )


def _sixteen(theme: Theme) -> dict[str, str]:
    """The three colours of SIXTEEN; a theme whose surface is its page (high contrast) keeps it so."""
    page, surface, panel = SIXTEEN[theme.dark]
    same = (theme.surface or "").upper() == (theme.background or "").upper()
    return {"background": page, "surface": page if same else surface, "panel": panel}


def _two_fifty_six(theme: Theme) -> dict[str, str]:
    """Each structural colour as the palette colour it rounds to; when an earlier one took that colour
    and the theme has them differ, the next grey of the palette's ramp (lighter on a dark theme, darker
    on a light one) that is free."""
    picks: dict[str, str] = {}
    taken: dict[int, str] = {}  # palette number -> the theme colour shown as it
    for name in STRUCTURE:
        value = (getattr(theme, name) or "#000000").upper()
        number = _eight_bit(Color.parse(value))
        level = round(colorsys.rgb_to_hls(*Color.parse(value).get_truecolor().normalized)[1] * GREYS)
        for _ in range(GREYS + 1):
            if taken.get(number, value) == value:
                break
            level += 1 if theme.dark else -1
            number = _grey(level)
        taken.setdefault(number, value)
        picks[name] = _palette_hex(number)
    return picks


def _grey(level: int) -> int:
    """The palette's grey of ``level`` (0 black … 25 white): 16, the ramp 232-255, 231."""
    return 16 if level <= 0 else 231 if level >= GREYS else 231 + level


def _eight_bit(colour: Color) -> int:
    number = colour.downgrade(ColorSystem.EIGHT_BIT).number
    assert number is not None
    return number


def _palette_hex(number: int) -> str:
    colour = Color.from_ansi(number)
    assert colour.type is ColorType.EIGHT_BIT
    return colour.get_truecolor().hex.upper()
