"""Where each key of a TOML document sits: line numbers for error messages.

``tomllib`` parses exactly but forgets positions; ``tomlkit`` keeps formatting but no line numbers. This
small scanner walks the text once and records the line of every table header and key, so that a
validation error can name the file, the line and the key. It assumes the text already parsed as TOML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KeyPath = tuple[str, ...]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass
class Positions:
    """Line (1-based) of each key path; tables map to their header line."""

    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line_of(self, path: KeyPath) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one (a missing key's table)."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None


def scan(text: str) -> Positions:
    """Record the line of every header and key in ``text``."""
    positions = Positions()
    scanner = _Scanner(text, positions)
    scanner.run()
    return positions


class _Scanner:
    """A character-level walk over TOML that knows strings, comments, arrays and inline tables."""

    def __init__(self, text: str, positions: Positions) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.positions = positions
        self.table: KeyPath = ()
        self.array_counts: dict[KeyPath, int] = {}

    def run(self) -> None:
        while self.pos < len(self.text):
            self._skip_blank_and_comments()
            if self.pos >= len(self.text):
                return
            if self.text[self.pos] == "[":
                self._header()
            else:
                self._key_value(self.table)

    # -- lexical helpers -------------------------------------------------------------------------

    def _peek(self, s: str) -> bool:
        return self.text.startswith(s, self.pos)

    def _advance(self, n: int = 1) -> None:
        self.line += self.text.count("\n", self.pos, self.pos + n)
        self.pos += n

    def _skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def _skip_blank_and_comments(self) -> None:
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch in " \t\r\n":
                self._advance()
            elif ch == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                return

    def _string(self) -> str:
        """Read a basic or literal string, single- or multi-line; return its raw contents."""
        quote = self.text[self.pos]
        triple = quote * 3
        if self._peek(triple):
            end = self.text.find(triple, self.pos + 3)
            while end >= 0 and self.text.startswith(quote, end + 3):
                end += 1  # up to two quotes may close a multi-line string
            end = len(self.text) - 3 if end < 0 else end
            raw = self.text[self.pos + 3 : end]
            self._advance(end + 3 - self.pos)
            return raw
        i = self.pos + 1
        while i < len(self.text) and self.text[i] != quote and self.text[i] != "\n":
            i += 2 if (quote == '"' and self.text[i] == "\\") else 1
        raw = self.text[self.pos + 1 : i]
        self._advance(i + 1 - self.pos)
        return raw

    def _key(self) -> KeyPath:
        """A dotted key: ``a.b."c d"``."""
        parts: list[str] = []
        while True:
            self._skip_spaces()
            if self.pos < len(self.text) and self.text[self.pos] in "\"'":
                parts.append(self._string())
            else:
                m = _BARE_KEY.match(self.text, self.pos)
                if not m:
                    break
                parts.append(m.group())
                self.pos = m.end()
            self._skip_spaces()
            if not self._peek("."):
                break
            self.pos += 1
        return tuple(parts)

    # -- structure ---------------------------------------------------------------------------------

    def _header(self) -> None:
        line = self.line
        is_array = self._peek("[[")
        self.pos += 2 if is_array else 1
        path = self._key()
        if is_array:
            index = self.array_counts.get(path, 0)
            self.array_counts[path] = index + 1
            path = (*path, str(index))
        for depth in range(1, len(path) + 1):
            self.positions.lines.setdefault(path[:depth], line)  # parents are declared implicitly here
        self.table = path
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end

    def _key_value(self, table: KeyPath) -> None:
        line = self.line
        key = (*table, *self._key())
        for depth in range(len(table) + 1, len(key) + 1):
            self.positions.lines.setdefault(key[:depth], line)
        self._skip_spaces()
        if self._peek("="):
            self.pos += 1
        self._skip_spaces()
        self._value(key)

    def _value(self, key: KeyPath) -> None:
        if self.pos >= len(self.text):
            return
        ch = self.text[self.pos]
        if ch in "\"'":
            self._string()
        elif ch == "[":
            self._array(key)
        elif ch == "{":
            self._inline_table(key)
        else:
            while self.pos < len(self.text) and self.text[self.pos] not in ",]}\n#":
                self.pos += 1

    def _array(self, key: KeyPath) -> None:
        self._advance()
        index = 0
        while self.pos < len(self.text):
            self._skip_blank_and_comments()
            if self._peek("]"):
                self._advance()
                return
            if self._peek(","):
                self._advance()
                index += 1
                continue
            self.positions.lines.setdefault((*key, str(index)), self.line)
            self._value((*key, str(index)))

    def _inline_table(self, key: KeyPath) -> None:
        self._advance()
        while self.pos < len(self.text):
            self._skip_blank_and_comments()
            if self._peek("}"):
                self._advance()
                return
            if self._peek(","):
                self._advance()
                continue
            self._key_value(key)
