"""Styled text cut to a width with a hanging indent: the lines after the first start under its text,
not at the edge (a GPU warning, a journal value under its label)."""

from __future__ import annotations

from collections.abc import Sequence

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
