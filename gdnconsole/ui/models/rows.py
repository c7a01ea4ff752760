"""Which file line each row of the log view shows, given a filter and folded blocks.

The view's rows are the file's lines (or the lines a filter kept) minus the lines hidden inside folded
blocks, each of which keeps one representative row (the line that names the error). Folds are few, so
the hidden parts are a short sorted list of intervals and both directions are a bisect away.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from gdnconsole.logs.document import Fold


@dataclass(frozen=True, slots=True)
class Marker:
    fold: Fold
    folded: bool


class RowMap:
    def __init__(
        self,
        total: int,
        matches: array[int] | None = None,
        folds: Sequence[Fold] = (),
        expanded: frozenset[int] = frozenset(),
    ) -> None:
        self.total = total
        self.matches = matches
        self._base = total if matches is None else len(matches)
        self._folds = sorted(folds, key=lambda f: f.first)
        self._firsts = [f.first for f in self._folds]
        self._markers: dict[int, Marker] = {}
        self._starts: list[int] = []  # hidden intervals [start, end) in base-index space
        self._ends: list[int] = []
        self._start_rows: list[int] = []  # the row at which each interval would begin
        self._hidden_before: list[int] = []  # total hidden by the intervals before each one
        hidden = 0
        for fold in self._folds:
            hidden = self._add_fold(fold, fold.first not in expanded, hidden)
        self.count = self._base - hidden

    def _add_fold(self, fold: Fold, folded: bool, hidden: int) -> int:
        lo, hi = self._base_range(fold.first, fold.last)
        if hi <= lo:
            return hidden
        if not folded:
            self._markers[self._line_of_base(lo)] = Marker(fold, folded=False)
            return hidden
        summary = self._base_index(fold.summary)
        rep = summary if summary is not None and lo <= summary < hi else lo
        self._markers[self._line_of_base(rep)] = Marker(fold, folded=True)
        for start, end in ((lo, rep), (rep + 1, hi)):
            if end > start:
                self._starts.append(start)
                self._ends.append(end)
                self._start_rows.append(start - hidden)
                self._hidden_before.append(hidden)
                hidden += end - start
        return hidden

    # -- base index (all lines, or the filter's matches) ----------------------------------------------

    def _base_range(self, first: int, last: int) -> tuple[int, int]:
        if self.matches is None:
            return max(0, first), min(self.total, last + 1)
        return bisect_left(self.matches, first), bisect_right(self.matches, last)

    def _base_index(self, line: int) -> int | None:
        if self.matches is None:
            return line if 0 <= line < self.total else None
        i = bisect_left(self.matches, line)
        return i if i < len(self.matches) and self.matches[i] == line else None

    def _line_of_base(self, i: int) -> int:
        return i if self.matches is None else self.matches[i]

    # -- rows ----------------------------------------------------------------------------------------

    def line(self, row: int) -> int:
        """The file line shown at ``row`` (0 <= row < count)."""
        m = bisect_right(self._start_rows, row)
        i = row
        if m:
            i += self._hidden_before[m - 1] + self._ends[m - 1] - self._starts[m - 1]
        return self._line_of_base(i)

    def row(self, line: int) -> int | None:
        """The row that shows ``line``, or None when the filter or a fold hides it."""
        i = self._base_index(line)
        if i is None:
            return None
        k = bisect_right(self._starts, i)
        if k and i < self._ends[k - 1]:
            return None
        before = self._hidden_before[k - 1] + self._ends[k - 1] - self._starts[k - 1] if k else 0
        return i - before

    def nearest_row(self, line: int) -> int:
        """The row of ``line``, or of the closest shown line before it (0 when none)."""
        if self.count == 0:
            return 0
        if self.matches is None:
            base = min(line, self.total - 1)
        else:
            base = bisect_right(self.matches, line) - 1
            if base < 0:
                return 0
        k = bisect_right(self._starts, base)
        if k and base < self._ends[k - 1]:
            base = self._starts[k - 1] - 1  # inside a hidden run: the row just before it
            if base < 0:
                return 0
            k -= 1
        before = self._hidden_before[k - 1] + self._ends[k - 1] - self._starts[k - 1] if k else 0
        return max(0, min(self.count - 1, base - before))

    def marker(self, line: int) -> Marker | None:
        """The fold whose marker sits on ``line`` (folded: its one row; expanded: its first line)."""
        return self._markers.get(line)

    def fold_around(self, line: int) -> Fold | None:
        """The block that holds ``line``, if any."""
        i = bisect_right(self._firsts, line) - 1
        if i >= 0 and self._folds[i].first <= line <= self._folds[i].last:
            return self._folds[i]
        return None
