"""The "save as new profile" prompt: a name that the hosts file accepts and that the host does not have."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from gdnconsole.ui import screenlist
from gdnconsole.ui.keybar import KeyBar

# A bare TOML key, so the new table's header needs no quoting and reads like the others.
_NAME = re.compile(r"[A-Za-z0-9_-]+\Z")


def name_problem(name: str, taken: Collection[str]) -> str | None:
    if not name:
        return "type a name"
    if not _NAME.match(name):
        return "letters, digits, '-' and '_' only"
    if name in taken:
        return f"this host already has a profile named {name!r}"
    return None


class AskNameScreen(ModalScreen[str | None]):
    """Returns the new name, or None when cancelled."""

    DEFAULT_CSS = """
    AskNameScreen { align: center middle; }
    AskNameScreen > Vertical {
        width: 64; max-width: 100%; height: auto; background: $panel; border: round $primary; padding: 0 1;
    }
    AskNameScreen #askname-problem { color: $error; height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("new profile name").own

    def __init__(self, suggestion: str, taken: Collection[str]) -> None:
        super().__init__()
        self.suggestion = suggestion
        self.taken = set(taken)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Save as a new profile named:", style="bold"))
            yield Input(self.suggestion, id="askname-input")
            yield Static("", id="askname-problem")
        yield KeyBar()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#askname-problem", Static).update(name_problem(event.value.strip(), self.taken) or "")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = event.value.strip()
        problem = name_problem(name, self.taken)
        if problem:
            self.query_one("#askname-problem", Static).update(problem)
            return
        self.dismiss(name)

    def action_cancel(self) -> None:
        self.dismiss(None)
