"""Copying, as it really happens in a terminal: the text is sent with an OSC 52 escape, and whether it
reaches a clipboard is the terminal's call (tmux drops it unless `set-clipboard` is on, and so do most
SSH sessions and many terminals). So the console says "sent", never "copied", and where a file can hold
the text, it writes one and says where."""

from __future__ import annotations

from textual.app import App

SENT = "sent to the terminal clipboard (if the terminal takes OSC 52)"


def send(app: App[object], text: str, what: str) -> str:
    """Send ``text`` to the terminal's clipboard; what to tell the user about ``what`` was sent."""
    app.copy_to_clipboard(text)
    return f"{what} {SENT}"
