"""The help screen: every key of the screen below it, with its description and binding id, as the
registry of screens lists them (ui/screenlist.py) in the keymap in force."""

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
from gdnconsole.ui.screenlist import Keymap, Section, help_sections, key_label, spec

__all__ = ["HelpScreen", "Keymap", "Section", "bindings_table", "key_label"]


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

    BINDINGS: ClassVar[list[BindingType]] = spec("help").own

    def __init__(
        self,
        sections: Sequence[Section] = (),
        keymap: Keymap | None = None,
        *,
        screen: str | None = None,
        readonly: bool = False,
    ) -> None:
        """``sections``: what to list, or ``screen``: the registry's name of the screen below, whose
        sections help lists (its app's every screen for a main one: screenlist.help_sections; without
        the launching keys when ``readonly``); ``keymap``: the remapped keys, so help says what the
        footer says (None: the app's keymap in force, when it says which: ThemedApp.keymap)."""
        super().__init__()
        self.sections = sections
        self.keymap = keymap
        self.screen_name = screen
        self.readonly = readonly

    def compose(self) -> ComposeResult:
        if self.keymap is None:
            keymap = getattr(self.app, "keymap", None)
            self.keymap = keymap if isinstance(keymap, Mapping) else None
        if self.screen_name is not None:
            keys = self.keymap or {}
            self.sections = help_sections(self.screen_name, keys, self.app.BINDINGS, self.readonly)
        with VerticalScroll():
            yield Static(Text("Keys", style="bold"))
            yield Static(bindings_table(self.sections, self.keymap), id="help-table")
        yield KeyBar()

    def action_close(self) -> None:
        self.dismiss(None)
