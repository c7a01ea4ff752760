"""Text fitted to a width: styled text cut with a hanging indent (the lines after the first start under
its text: a GPU warning, a journal value under its label), a command line wrapped between its arguments,
and a one-line bar whose parts give way by priority."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text


def hanging(text: Text, width: int, indent: int) -> list[Text]:
    """Each line of ``text`` cut at spaces into lines of at most ``width`` cells, the continuation lines
    indented by ``indent``; a word longer than the room left is cut. With no room to indent (``width``
    under ``indent`` + 10) the lines are returned as they are."""
    out: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        out.extend(_cut(line, width, indent) if width > indent + 10 else [line])
    return out


def _cut(line: Text, width: int, indent: int) -> list[Text]:
    out: list[Text] = []
    while line.cell_len > width:
        cut = line.plain.rfind(" ", indent + 1, width + 1)
        if cut <= indent:
            cut = width  # one word longer than the line
        out.append(line[:cut])
        rest = line[cut:]
        line = Text(" " * indent) + rest[len(rest.plain) - len(rest.plain.lstrip(" ")) :]
    out.append(line)
    return out


def argument_lines(words: Sequence[str], width: int, indent: int) -> list[str]:
    """A command line's words packed into lines of at most ``width`` cells, broken only between two
    words (never inside a flag or its value), the lines after the first indented by ``indent``. A word
    longer than a whole line gets lines of its own, folded; nothing is dropped."""
    room = max(width - indent, 10)
    lines: list[str] = []
    line = ""
    for word in words:
        if line and cell_len(line) + 1 + cell_len(word) > room:
            lines.append(line)
            line = ""
        if cell_len(word) > room:
            if line:
                lines.append(line)
            pieces = [word[i : i + room] for i in range(0, len(word), room)]
            lines += pieces[:-1]
            line = pieces[-1]
            continue
        line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return [(" " * indent if n else "") + text for n, text in enumerate(lines)]


MUST = 50  # a bar's parts kept at this or more are shortened, never dropped


@dataclass(frozen=True)
class Part:
    """One part of a one-line bar: its text, how much it matters (a higher ``keep`` stays longer), and a
    shorter form to fall back on before anything that matters more is given up."""

    text: Text
    keep: int
    short: Text | None = None


def fit_parts(parts: Sequence[Part], width: int | None, sep: str) -> Text:
    """The parts joined by ``sep`` in at most ``width`` cells: the least kept are dropped first, down to
    those kept at ``MUST`` or more, which then take their short forms (least kept first); a line still too
    wide ends in "…" rather than being cut by the terminal. ``width`` None: everything, as it is."""
    shown = list(parts)

    def line() -> Text:
        return Text(sep).join(part.text for part in shown)

    if width is None:
        return line()
    for part in sorted(parts, key=lambda p: p.keep):
        if line().cell_len <= width or part.keep >= MUST:
            break
        shown.remove(part)
    for part in sorted(shown, key=lambda p: p.keep):
        if line().cell_len <= width:
            break
        if part.short is not None:
            shown[shown.index(part)] = Part(part.short, part.keep)
    out = line()
    out.truncate(width, overflow="ellipsis")
    return out
