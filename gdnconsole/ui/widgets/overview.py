"""The overview of every open host: a row per host above the dashboard's tabs, in aligned columns, the
active host marked; a click on a row opens that host's tab.

The rows are those of ``statusbar.overview_rows``, kept up to date one host at a time: a host's change
builds its own cells again and reuses the others', so that it costs the same with 40 hosts as with 2.
Only when a column's width changes (a longer stage, a link that came up) or the rows stop fitting the
width are all rows laid out again; a row is repainted only when its text changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible
from gdnconsole.ui.theme import LogPalette

# The column layout of overview_rows, shared so that both lay rows out alike (private there: that module
# is being reworked by someone else as this is written; it should become public).
from gdnconsole.ui.widgets.statusbar import aligned, overview_cells

VARIANTS = (False, True)  # the full cells, then the short ones (no round trip, no accept length)
LONG, SHORT, CUT = 0, 1, 2  # what fits the width: the full rows, the short ones, short rows cut with "…"


class OverviewRow(Static):
    """One host in the overview; a click opens its tab."""

    DEFAULT_CSS = """
    OverviewRow { height: 1; padding: 0 1; }
    OverviewRow.-active { background: $primary 30%; }
    OverviewRow:hover { background: $boost; }
    """

    class Selected(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, index: int) -> None:
        super().__init__(id=f"overview-{index}")
        self.index = index

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Selected(self.index))


class Overview(Vertical):
    """The rows, and per host and variant its cells, their widths and its laid-out row."""

    def __init__(
        self, sessions: Sequence[HostSession], palette: LogPalette, *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.sessions = list(sessions)
        self.palette = palette
        self.active = 0
        self.rows = [OverviewRow(i) for i in range(len(self.sessions))]
        count = len(self.sessions)
        self._cells = [self._cells_of(i) for i in range(count)]  # per host: per variant, its cells
        self._widths: list[list[int]] = [[], []]  # per variant: each column's width
        self._laid: list[list[Text]] = [[Text()] * count, [Text()] * count]  # per variant: each row
        self._shown: list[Text | None] = [None] * count
        self._fit = LONG
        self._lay_out(range(count))

    def compose(self) -> ComposeResult:
        yield from self.rows

    def on_mount(self) -> None:
        self.repaint()

    # -- what changed ----------------------------------------------------------------------------------

    def changed(self, index: int) -> None:
        """Host ``index`` changed: its row (all rows when the columns moved)."""
        self._cells[index] = self._cells_of(index)
        self._paint(self._lay_out([index]))

    def select(self, index: int) -> None:
        """Host ``index``'s tab is shown: the mark moves from the row of the one shown before."""
        before, self.active = self.active, index
        for i in {before, index}:
            self._cells[i] = self._cells_of(i)
            self.rows[i].set_class(i == index, "-active")
        self._paint(self._lay_out([before, index]))

    def repaint(self) -> None:
        """Every row from scratch (a new width, a new theme)."""
        for i in range(len(self.sessions)):
            self._cells[i] = self._cells_of(i)
            self.rows[i].set_class(i == self.active, "-active")
        self._widths = [[], []]
        self._shown = [None] * len(self.sessions)
        self._paint(self._lay_out(range(len(self.sessions))))

    # -- laying out ------------------------------------------------------------------------------------

    def _cells_of(self, index: int) -> tuple[list[Text], list[Text]]:
        session = self.sessions[index]
        label = Text(f"{'▶' if index == self.active else ' '}{index + 1} ", Style(dim=True))
        name = Text(visible(session.host.name), Style(bold=True))  # an ssh target typed as given
        long, short = ([label, name, *overview_cells(session, self.palette, short=s)] for s in VARIANTS)
        return long, short

    def _lay_out(self, indices: Iterable[int]) -> Iterable[int]:
        """Align the rows of ``indices`` (of every host when a column's width changed): those to paint."""
        widths = [
            [max(cells[v][c].cell_len for cells in self._cells) for c in range(len(self._cells[0][v]))]
            for v in range(len(VARIANTS))
        ]
        if widths != self._widths:
            self._widths = widths
            indices = range(len(self.sessions))
        for i in indices:
            for v, short in enumerate(VARIANTS):
                self._laid[v][i] = aligned(self._cells[i][v], widths[v], gap=1 if short else 2)
        return indices

    def _paint(self, indices: Iterable[int]) -> None:
        width = self.rows[0].content_region.width if self.rows else 0
        fit = self._fitting(width or None)
        if fit != self._fit:
            self._fit = fit
            indices = range(len(self.sessions))
        for i in indices:
            text = self._laid[min(fit, SHORT)][i]
            if fit == CUT:
                text = text.copy()
                text.truncate(width, overflow="ellipsis")
            if text != self._shown[i]:
                self._shown[i] = text
                self.rows[i].update(text)

    def _fitting(self, width: int | None) -> int:
        """Which rows fit: the full ones, else the short ones, else none (they are cut)."""
        for fit in (LONG, SHORT):
            if width is None or max(row.cell_len for row in self._laid[fit]) <= width:
                return fit
        return CUT
