"""Acting on fields only once the keys typed before are in them.

A binding with ``priority`` (ctrl+s on the flag form, ctrl+r on the tune screen) runs as the app reads its
key, while keys typed just before it may still wait in the focused field's own message queue (a
terminal delivers a burst of keys in one read). An action that reads the fields at once would act on the
text before those keys, and say it saved what it did not. Queued behind them, it sees the text as typed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.screen import Screen


def after_typing(screen: Screen[Any], act: Callable[[], object]) -> None:
    """Run ``act`` once the focused widget has handled every key already sent to it."""
    focused = screen.focused
    if focused is None or not focused.call_later(act):
        act()
