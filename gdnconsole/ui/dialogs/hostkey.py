"""The unknown-host dialog: the host key's fingerprint and the link's message; yes trusts the key."""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gdnconsole.logs.textsafe import visible, visible_lines
from gdnconsole.ui import screenlist
from gdnconsole.ui.keybar import KeyBar


class HostKeyScreen(ModalScreen[bool]):
    """Returns True when the user trusts the key (it is then written to known_hosts), else False."""

    DEFAULT_CSS = """
    HostKeyScreen { align: center middle; }
    HostKeyScreen > Vertical {
        width: 84; max-width: 95%; height: auto;
        background: $panel; border: round $warning; padding: 0 1;
    }
    HostKeyScreen #hostkey-fingerprint { margin: 1 0; text-style: bold; }
    HostKeyScreen Horizontal { height: auto; margin-top: 1; }
    HostKeyScreen Button { margin: 0 1 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("host key dialog").own

    def __init__(self, host: str, fingerprint: str, message: str) -> None:
        super().__init__()
        self.host = host
        self.fingerprint = fingerprint
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"Unknown host: {visible(self.host)}", Style(bold=True)))
            yield Static(Text(visible_lines(self.message)), id="hostkey-message")  # what SSH said
            yield Static(Text(visible(self.fingerprint)), id="hostkey-fingerprint")
            yield Static(Text("Trust this key and write it to known_hosts? Compare it with the real host's."))
            with Horizontal():
                yield Button("Yes, trust it (y)", id="hostkey-yes", variant="warning")
                yield Button("No (n)", id="hostkey-no", variant="primary")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#hostkey-no", Button).focus()  # the safe answer is the default

    def action_answer(self, accept: bool) -> None:
        self.dismiss(accept)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "hostkey-yes")
