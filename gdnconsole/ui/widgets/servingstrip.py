"""One line under a host's status bar: the server's load and latency as its own endpoints say them
(ui/models/servingview.py builds the line), hidden while there is no server or no figures yet."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from gdnconsole.ui.models.servingview import StripLine, Tone, strip_line
from gdnconsole.ui.tones import Tones

if TYPE_CHECKING:
    from gdnconsole.host.servingfeed import ServingFeed


def strip_text(line: StripLine, tones: Tones) -> Text:
    styles: dict[Tone, Style] = {
        "label": tones.label,
        "value": tones.value,
        "muted": tones.muted,
        "warn": tones.warn,
    }
    return Text.assemble(
        *((piece.text, styles[piece.tone]) for piece in line), no_wrap=True, overflow="ellipsis"
    )


class ServingStrip(Static):
    DEFAULT_CSS = """
    ServingStrip { height: 1; padding: 0 1; background: $surface; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.line: StripLine | None = None
        self.display = False
        self._shown: tuple[ServingFeed | None, bool] = (None, False)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.repaint())

    def on_resize(self) -> None:
        self.show(*self._shown)  # the parts that fit the new width

    def repaint(self) -> None:
        """The same line in the new theme's colours."""
        self.line = None
        self.show(*self._shown)

    def show(self, feed: ServingFeed | None, server_up: bool) -> None:
        """Repaint only when the line changed (called on each poll of the tab on screen, and each tick)."""
        self._shown = (feed, server_up)
        line = strip_line(feed, server_up, self.content_region.width or None)
        if line == self.line:
            return
        self.line = line
        self.display = line is not None
        if line is not None:
            self.update(strip_text(line, Tones.of(self.app)))
