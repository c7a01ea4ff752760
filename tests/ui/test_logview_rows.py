"""RowMap: rows ↔ file lines under a filter and folded blocks, checked against a plain list."""

from __future__ import annotations

from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from gdnconsole.logs.document import Fold
from gdnconsole.sglang.stages import Severity
from gdnconsole.ui.models.rows import RowMap


@st.composite
def layouts(draw: st.DrawFn) -> tuple[int, array[int] | None, list[Fold], frozenset[int]]:
    total = draw(st.integers(0, 60))
    folds: list[Fold] = []
    pos = 0
    while True:
        first = pos + draw(st.integers(0, 8))
        last = first + draw(st.integers(1, 6))
        if last >= total:
            break
        folds.append(Fold(first, last, draw(st.integers(first, last)), Severity.ERROR))
        pos = last + 1
    expanded = frozenset(f.first for f in folds if draw(st.booleans()))
    matches = None
    if draw(st.booleans()):
        matches = array("I", sorted(draw(st.sets(st.integers(0, max(0, total - 1)), max_size=total))))
    return total, matches, folds, expanded


def expected_rows(
    total: int, matches: array[int] | None, folds: list[Fold], expanded: frozenset[int]
) -> list[int]:
    base = list(range(total)) if matches is None else list(matches)
    hidden: set[int] = set()
    for fold in folds:
        inside = [n for n in base if fold.first <= n <= fold.last]
        if fold.first in expanded or len(inside) <= 1:
            continue
        rep = fold.summary if fold.summary in inside else inside[0]
        hidden |= set(inside) - {rep}
    return [n for n in base if n not in hidden]


@settings(max_examples=300, deadline=None)
@given(layouts())
def test_rows_match_a_plain_list(layout: tuple[int, array[int] | None, list[Fold], frozenset[int]]) -> None:
    total, matches, folds, expanded = layout
    rows = RowMap(total, matches, folds, expanded)
    shown = expected_rows(*layout)
    assert rows.count == len(shown)
    for row, line in enumerate(shown):
        assert rows.line(row) == line and rows.row(line) == row
    for line in range(total):
        if line not in shown:
            assert rows.row(line) is None
        assert rows.nearest_row(line) == max((r for r, n in enumerate(shown) if n <= line), default=0)
