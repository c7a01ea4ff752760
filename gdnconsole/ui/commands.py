"""The command palette lists the same actions as the footer and the help screen: the active bindings that
help lists (ours, each with an id, and the app's own), in the keys of the keymap in force. A screen's
bindings are the registry's (ui/screenlist.py), so the palette and help read one list."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from textual.app import SystemCommand
from textual.screen import Screen

from gdnconsole.ui.screenlist import key_label

PALETTE_ACTIONS = frozenset({"command_palette", "app.command_palette"})


def binding_commands(screen: Screen[object]) -> Iterator[SystemCommand]:
    """One command per binding active on ``screen``, run in the namespace that owns it."""
    seen: set[str] = set()
    for namespace, binding, enabled, _tooltip in screen.active_bindings.values():
        if not enabled or not binding.description or binding.action in seen:
            continue
        if binding.action in PALETTE_ACTIONS or not (binding.id or namespace is screen.app):
            continue  # the palette's own key; Textual's widget keys (scrolling, focus), which help omits
        seen.add(binding.action)
        help_text = f"key {key_label(binding)}" + (f"  ·  {binding.id}" if binding.id else "")
        yield SystemCommand(
            binding.description, help_text, partial(screen.app.run_action, binding.action, namespace)
        )
