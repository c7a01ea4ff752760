"""The footer of every screen: one row of the keys that work there, fitted to the width.

Textual's Footer lays out one widget per key and lets the row run off the right edge: at 80 columns the
dashboard's last key was cut mid-word ("E First erro") and a letter of the hidden keys showed after the
palette key. It also re-composes its widgets on every focus change, a frame of its own at start-up. This
bar draws one line of text: the screen's own keys first, in the order the screen lists them (its most
used first), then those of the focused widget, then the app's; "q Quit", "? Help" and "^p palette" stay
at the right edge: the way out always shows, and the other two list every key. When the screen's own
keys do not fit, the bar goes compact (each description's first word, no palette key: ctrl+p and help
still say it); when even those do not fit, whole keys are left out from the end: a key is never cut. A
click on a key presses it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

GAP = "  "  # between two keys
PINNED_ACTIONS = ("quit", "help", "command_palette")  # at the right edge, in this order; kept longest


@dataclass(frozen=True)
class KeyItem:
    key: str  # the key to press (after the user's [keys] remapping)
    display: str  # how it is shown, e.g. "^p"
    description: str
    action: str
    enabled: bool
    pinned: bool
    own: bool = True  # the screen's own key (not the focused widget's or the app's)

    @property
    def width(self) -> int:
        return Text(f"{self.display} {self.description}").cell_len


def key_items(screen: Screen[object]) -> list[KeyItem]:
    """The keys to show on ``screen``, screen's own first, then the focused widget's, then the app's;
    the pinned ones (help, palette) last. One entry per action: its first key."""
    app = screen.app
    active = screen.active_bindings
    ranked: list[tuple[int, int, KeyItem]] = []
    seen: set[str] = set()
    for order, (namespace, binding, enabled, _tooltip) in enumerate(active.values()):
        if not binding.show or binding.action in seen:
            continue
        seen.add(binding.action)
        rank = 0 if namespace is screen else 2 if namespace is app else 1
        pinned = binding.action in PINNED_ACTIONS
        display = app.get_key_display(binding)
        item = KeyItem(binding.key, display, binding.description, binding.action, enabled, pinned, rank == 0)
        ranked.append((3 + PINNED_ACTIONS.index(binding.action) if pinned else rank, order, item))
    palette = active.get(app.COMMAND_PALETTE_BINDING)
    if app.ENABLE_COMMAND_PALETTE and palette is not None and "command_palette" not in seen:
        binding = palette.binding
        item = KeyItem(
            binding.key, app.get_key_display(binding), "palette", binding.action, palette.enabled, True
        )
        ranked.append((3 + len(PINNED_ACTIONS), 0, item))
    return [item for _rank, _order, item in sorted(ranked, key=lambda r: (r[0], r[1]))]


def fit(items: list[KeyItem], width: int) -> tuple[list[KeyItem], list[KeyItem]]:
    """The unpinned keys that fit before the pinned ones, in order, and the pinned ones that fit: as
    they are when the screen's own keys all fit, else the compact form when it shows more."""
    full = _fitted(items, width)
    if all(item in full[0] for item in items if item.own and not item.pinned):
        return full
    compact = _fitted(_compact(items), width)
    return compact if len(compact[0]) > len(full[0]) else full


def _compact(items: list[KeyItem]) -> list[KeyItem]:
    """Each key with the first word of its description (whole where two would read the same: "Save",
    "Save as new"); the palette key left out."""
    kept = [item for item in items if item.action != "command_palette"]
    firsts = [item.description.split(" ", 1)[0] for item in kept]
    return [
        item if firsts.count(first) > 1 else dataclasses.replace(item, description=first)
        for item, first in zip(kept, firsts, strict=True)
    ]


def _fitted(items: list[KeyItem], width: int) -> tuple[list[KeyItem], list[KeyItem]]:
    pinned = [item for item in items if item.pinned]
    while pinned and _span(pinned) > width:
        pinned.pop()  # a very narrow terminal: the palette key goes first, quit last
    room = width - _span(pinned) - (len(GAP) if pinned else 0)
    shown: list[KeyItem] = []
    for item in items:
        if item.pinned:
            continue
        if _span([*shown, item]) > room:
            break  # the next ones are less used: "? Help" lists them all
        shown.append(item)
    return shown, pinned


def _span(items: list[KeyItem]) -> int:
    return sum(item.width for item in items) + len(GAP) * max(0, len(items) - 1)


class KeyBar(Widget):
    """The keys of the current screen on one row (see the module's docstring)."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"keybar--key", "keybar--description"}
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        background: $footer-background;
        .keybar--key { color: $footer-key-foreground; text-style: bold; }
        .keybar--description { color: $footer-description-foreground; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.drawn: list[KeyItem] = []  # what the last render showed, left to right
        self._spans: list[tuple[int, int, KeyItem]] = []  # x ranges of the drawn keys, for clicks

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        self.refresh()

    def items(self) -> list[KeyItem]:
        """Every key the bar would show given room enough."""
        return key_items(self.screen)

    def render(self) -> Text:
        width = self.content_region.width
        shown, pinned = fit(self.items(), width)
        left = self._line(shown)
        right = self._line(pinned)
        pad = max(0, width - left.cell_len - right.cell_len)
        self.drawn = [*shown, *pinned]
        self._spans = self._ranges(shown, 0) + self._ranges(pinned, left.cell_len + pad)
        return Text.assemble(left, " " * pad, right, no_wrap=True, end="")

    def _line(self, items: list[KeyItem]) -> Text:
        key_style = self.get_component_rich_style("keybar--key", partial=True)
        description_style = self.get_component_rich_style("keybar--description", partial=True)
        text = Text()
        for i, item in enumerate(items):
            if i:
                text.append(GAP)
            dim = Style(dim=True) if not item.enabled else Style()
            text.append(item.display, key_style + dim)
            text.append(" " + item.description, description_style + dim)
        return text

    @staticmethod
    def _ranges(items: list[KeyItem], x: int) -> list[tuple[int, int, KeyItem]]:
        ranges = []
        for item in items:
            ranges.append((x, x + item.width, item))
            x += item.width + len(GAP)
        return ranges

    def key_at(self, x: int) -> KeyItem | None:
        """The key drawn at column ``x`` of the bar, if any."""
        return next((item for start, end, item in self._spans if start <= x < end), None)

    def spans(self) -> list[tuple[int, int, KeyItem]]:
        """Where each drawn key is: its first column, the column after it, and the key."""
        return list(self._spans)

    def on_click(self, event: events.Click) -> None:
        item = self.key_at(event.x - self.styles.padding.left)
        if item is None:
            return
        event.stop()
        if item.enabled:
            self.app.simulate_key(item.key)
        else:
            self.app.bell()
