"""The two small dialogs of the log view: the filter (regex plus stage, severity and rank toggles) and
the search prompt. Both return plain values; the screen runs the work."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, SelectionList
from textual.widgets.selection_list import Selection

from gdnconsole.logs.document import MAIN, FilterSpec
from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.ui import screenlist
from gdnconsole.ui.keybar import KeyBar

NO_STAGE = "(none)"
LIST_ROWS = 15  # each toggle list's height when the screen has room
OTHER_ROWS = 12  # the filter dialog besides its lists: title, regex field, error, buttons, edges, key bar


def _valid_regex(pattern: str) -> str | None:
    """The error in ``pattern``, or None."""
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"bad regex: {exc}"
    return None


class FilterScreen(ModalScreen[FilterSpec | None]):
    """Edit a FilterSpec. Enter in the regex field or Apply returns it; Clear returns an empty one."""

    DEFAULT_CSS = """
    FilterScreen { align: center middle; }
    FilterScreen > Vertical {
        width: 96; max-width: 100%; height: auto; max-height: 100%;
        background: $panel; border: round $primary; padding: 0 1;
    }
    FilterScreen Horizontal { height: auto; }
    FilterScreen SelectionList { width: 1fr; height: 15; }
    FilterScreen #filter-error { color: $error; height: auto; }
    FilterScreen Button { margin: 0 1 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("filter dialog").own

    def __init__(self, spec: FilterSpec, ranks: Sequence[str]) -> None:
        super().__init__()
        self.spec = spec
        self.ranks = [MAIN, *sorted(r for r in ranks if r != MAIN)]

    def compose(self) -> ComposeResult:
        spec = self.spec
        with Vertical():
            yield Label("Filter: show lines that match the regex and every checked box")
            yield Input(spec.regex, placeholder="regex (empty: every line)", id="filter-regex")
            yield Label("", id="filter-error")
            with Horizontal():
                yield SelectionList[str](
                    *(Selection(s.label, s.label, spec.stages is None or s in spec.stages) for s in Stage),
                    Selection(NO_STAGE, NO_STAGE, spec.stages is None or None in spec.stages),
                    id="filter-stages",
                )
                yield SelectionList[str](
                    *(
                        Selection(v.label, v.label, spec.severities is None or v in spec.severities)
                        for v in Severity
                    ),
                    id="filter-severities",
                )
                yield SelectionList[str](
                    *(Selection(r, r, spec.ranks is None or r in spec.ranks) for r in self.ranks),
                    id="filter-ranks",
                )
            with Horizontal():
                yield Button("Apply", id="filter-apply", variant="primary")
                yield Button("Clear", id="filter-clear")
                yield Button("Cancel", id="filter-cancel")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#filter-regex", Input).focus()
        self._fit_lists(self.app.size.height)

    def on_resize(self, event: events.Resize) -> None:
        self._fit_lists(event.size.height)

    def _fit_lists(self, height: int) -> None:
        """Lists short enough that the buttons stay on screen (at 80x24 they were below its edge)."""
        rows = max(3, min(LIST_ROWS, height - OTHER_ROWS))
        for selection in self.query(SelectionList):
            selection.styles.height = rows

    def current(self) -> FilterSpec:
        stages = self.query_one("#filter-stages", SelectionList).selected
        severities = self.query_one("#filter-severities", SelectionList).selected
        ranks = self.query_one("#filter-ranks", SelectionList).selected
        chosen_stages = frozenset(None if s == NO_STAGE else Stage.parse(s) for s in stages)
        return FilterSpec(
            regex=self.query_one("#filter-regex", Input).value,
            stages=None if len(stages) == len(Stage) + 1 else chosen_stages,
            severities=None
            if len(severities) == len(Severity)
            else frozenset(Severity[s.upper()] for s in severities),
            ranks=None if len(ranks) == len(self.ranks) else frozenset(ranks),
        )

    def action_apply(self) -> None:
        spec = self.current()
        error = _valid_regex(spec.regex)
        if error:
            self.query_one("#filter-error", Label).update(error)
            return
        self.dismiss(spec)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_apply()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "filter-apply":
            self.action_apply()
        elif event.button.id == "filter-clear":
            self.dismiss(FilterSpec())
        else:
            self.dismiss(None)


class SearchScreen(ModalScreen[str | None]):
    """A one-line prompt at the bottom: a regex to look for (enter), or nothing (escape)."""

    DEFAULT_CSS = """
    SearchScreen { align: left bottom; background: transparent; }
    SearchScreen > Vertical { height: auto; background: $panel; }
    SearchScreen #search-error { color: $error; height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("search prompt").own

    def __init__(self, pattern: str = "") -> None:
        super().__init__()
        self.pattern = pattern

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("", id="search-error")
            yield Input(self.pattern, placeholder="search regex, enter to find", id="search-input")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        error = _valid_regex(event.value) if event.value else "type a regex"
        if error:
            self.query_one("#search-error", Label).update(error)
            return
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
