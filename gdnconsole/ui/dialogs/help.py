"""The help screen: every key of the screen below it, with its description and binding id."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from gdnconsole.ui.keybar import KeyBar

Section = tuple[str, Sequence[BindingType]]


Keymap = Mapping[str, str]  # binding id → keys, as given to ``App.set_keymap``


def key_label(binding: Binding, keymap: Keymap | None = None) -> str:
    """Every key of a binding (the footer shows one short label; help shows them all)."""
    names = {
        "question_mark": "?",
        "slash": "/",
        "pageup": "PgUp",
        "pagedown": "PgDn",
        "right_square_bracket": "]",
        "left_square_bracket": "[",
    }
    keys = (keymap or {}).get(binding.id or "", binding.key)
    return ", ".join(names.get(k, k) for k in keys.split(","))


def bindings_table(sections: Iterable[Section], keymap: Keymap | None = None) -> Table:
    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold", expand=True)
    table.add_column("key", no_wrap=True)
    table.add_column("does")
    table.add_column("id", style="dim", no_wrap=True)
    for title, bindings in sections:
        table.add_row(Text(title, style=Style(bold=True, underline=True)), "", "")
        for binding in bindings:
            if isinstance(binding, Binding):
                label = key_label(binding, keymap)
                table.add_row(Text(label), Text(binding.description), Text(binding.id or ""))
    return table


class HelpScreen(ModalScreen[None]):
    """Lists the bindings it is given; any of escape, q, ? or F1 closes it."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > VerticalScroll {
        width: 80;
        max-height: 90%;
        height: auto;
        background: $panel;
        border: round $primary;
        padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "close", "Close help", id="help.close"),
    ]

    def __init__(self, sections: Sequence[Section], keymap: Keymap | None = None) -> None:
        """``keymap``: the remapped keys, so help says what the footer says (None: the app's keymap
        in force, when it says which: ThemedApp.keymap)."""
        super().__init__()
        self.sections = sections
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        if self.keymap is None:
            keymap = getattr(self.app, "keymap", None)
            self.keymap = keymap if isinstance(keymap, Mapping) else None
        with VerticalScroll():
            yield Static(Text("Keys", style="bold"))
            yield Static(bindings_table(self.sections, self.keymap), id="help-table")
        yield KeyBar()

    def action_close(self) -> None:
        self.dismiss(None)
