"""Log text is data: make it safe to show without a terminal or Rich reading it as instructions."""

from __future__ import annotations

import re

# C0 controls except tab, DEL, and C1 controls: each could start a terminal escape sequence.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _caret(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return f"\\x{code:02x}"


def visible(text: str) -> str:
    """``text`` with every control character shown in caret notation (ESC becomes ``^[``)."""
    return _CONTROL.sub(_caret, text)


def last_carriage_state(line: str) -> str:
    """What a terminal would show for a line rewritten with ``\\r`` (a tqdm bar): its last state."""
    if "\r" not in line:
        return line
    parts = [p for p in line.split("\r") if p]
    return parts[-1] if parts else ""
