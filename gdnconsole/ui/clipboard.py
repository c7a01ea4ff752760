"""Copying, as it really happens in a terminal: the text is sent with an OSC 52 escape, and whether it
reaches a clipboard is the terminal's call (tmux drops it unless `set-clipboard` is on, and so do most
SSH sessions and many terminals). So the console says "sent", never "copied", and where a file can hold
the text, it writes one and says where.

What is sent is what the screen shows: its control and format characters made visible (textsafe). The
escape itself carries base64, but the text is pasted later, into a shell or a terminal: a log line's
``ESC [201~`` would end a bracketed paste there and run the rest as typed."""

from __future__ import annotations

from textual.app import App

from gdnconsole.logs.textsafe import visible_lines

SENT = "sent to the terminal clipboard (if the terminal takes OSC 52)"


def send(app: App[object], text: str, what: str) -> str:
    """Send ``text`` (shown safe) to the terminal's clipboard; what to tell the user about ``what``."""
    app.copy_to_clipboard(visible_lines(text))
    return f"{what} {SENT}"
