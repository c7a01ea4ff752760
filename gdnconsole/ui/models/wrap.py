"""Wrapped log rows, glued log lines and short timestamps, for narrow terminals (pure: no Textual).

A wrapped view keeps one row per log line, so that scrolling, the cursor, filters and folds stay as they
are; only the screen shows a line over as many screen rows as its text needs. ``layout`` says which piece
of which row each screen row shows: from the top row down, except that the cursor's row is always shown
whole (while following, the newest line, most often the fatal one, ends on the last screen row)."""

from __future__ import annotations

import re
from collections.abc import Callable

from rich.cells import cell_len, get_character_cell_size

# A line's leading date and time, as SGLang ("[2026-11-30 09:00:40]"), Python's logging ("2026-11-30
# 09:00:40,123") and kubectl / journald ("2026-11-30T09:00:40.123456Z") write them.
_STAMP = re.compile(
    r"^(?P<open>\[?)\d{4}-\d\d-\d\d[ T](?P<time>\d\d:\d\d:\d\d)"
    r"(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?P<close>\]?)"
)


# SGLang's stamp inside a line: a log line written while a tqdm bar was drawn, glued to the bar's state
# (the rule logs/textsafe.py keeps such lines by).
_GLUED = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def glued(text: str) -> list[str]:
    """``text`` cut before every log line glued into it: the bar's state, then each line."""
    starts = [m.start() for m in _GLUED.finditer(text, 1)]
    return [text[a:b] for a, b in zip([0, *starts], [*starts, len(text)], strict=True)]


def short_time(body: str) -> str:
    """``body`` with its leading date and time cut to HH:MM:SS (brackets kept); else unchanged."""
    m = _STAMP.match(body)
    if m is None or bool(m["open"]) != bool(m["close"]):
        return body
    return f"{m['open']}{m['time']}{m['close']}{body[m.end() :]}"


def pieces(text: str, width: int) -> list[str]:
    """``text`` cut into pieces of at most ``width`` cells, after a space where there is one (a word
    longer than the width is cut where it must be; wide characters are never split); one piece at
    least, so that an empty line keeps its row."""
    if width < 1 or (len(text) <= width and text.isascii()):
        return [text]
    out: list[str] = []
    start, cells, after_space = 0, 0, -1
    for i, char in enumerate(text):
        size = get_character_cell_size(char)
        if cells + size > width and i > start:
            end = after_space if after_space > start else i
            out.append(text[start:end])
            start, after_space = end, -1
            cells = cell_len(text[start:i])  # what goes on to the next piece
        cells += size
        if char == " ":
            after_space = i + 1
    out.append(text[start:])
    return out


def layout(
    top: int, count: int, height: int, cursor: int, size: Callable[[int], int]
) -> list[tuple[int, int]]:
    """(row, piece) for each screen row: rows from ``top`` on, each ``size(row)`` pieces tall, until
    ``height`` screen rows are filled. When the cursor's row (at or below ``top``) would not be shown
    whole, the screen ends with it instead, the rows above it filling the rest."""
    shown: list[tuple[int, int]] = []
    row = top
    while len(shown) < height and row < count:
        shown += [(row, piece) for piece in range(size(row))]
        row += 1
    if top <= cursor < count and (cursor, size(cursor) - 1) not in shown[:height]:
        return _ending_with(cursor, height, size)
    return shown[:height]


def _ending_with(last: int, height: int, size: Callable[[int], int]) -> list[tuple[int, int]]:
    """The screen rows that end with row ``last`` whole, rows above it filling the rest (the topmost may
    show only its last pieces)."""
    shown: list[tuple[int, int]] = []
    row = last
    while len(shown) < height and row >= 0:
        shown = [(row, piece) for piece in range(size(row))] + shown
        row -= 1
    return shown[-height:]
