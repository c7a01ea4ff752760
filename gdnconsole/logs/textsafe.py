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


# SGLang prints its API keys in the args dump (``api_key='…'``) and operators pass them as flags: the
# console shows neither (the hash part still tells two keys apart).
_SECRET = re.compile(
    r"(?P<name>\b(?:admin_)?api_key=|--(?:admin-)?api-key[= ])"
    r"(?P<quote>['\"]?)(?P<value>[^'\"\s,)]+)(?P=quote)"
)


def _mask(match: re.Match[str]) -> str:
    import hashlib

    digest = hashlib.sha256(match["value"].encode()).hexdigest()[:6]
    return f"{match['name']}{match['quote']}<redacted:{digest}>{match['quote']}"


def without_secrets(text: str) -> str:
    """``text`` with API keys masked (``api_key='s3cret'`` → ``api_key='<redacted:1ec1c2>'``)."""
    if "api_key=" not in text and "api-key" not in text:
        return text  # the common case costs two substring searches
    return _SECRET.sub(_mask_unless_empty, text)


def _mask_unless_empty(match: re.Match[str]) -> str:
    value = match["value"]
    if value.startswith("<redacted:") or (value == "None" and not match["quote"]):
        return match.group()  # already masked, or no key at all
    return _mask(match)


# A log line glued to a bar's state: SGLang's stamp inside a state, not at its start.
_GLUED = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def last_carriage_state(line: str) -> str:
    """What a terminal would show for a line rewritten with ``\\r`` (a tqdm bar): its last state, and the
    log lines glued to earlier states (a terminal scrolls those away; a log view must not lose them)."""
    if "\r" not in line:
        return line
    parts = [p for p in line.split("\r") if p]
    if not parts:
        return ""
    glued = [p[m.start() :] for p in parts[:-1] if (m := _GLUED.search(p, 1)) is not None]
    return parts[-1] + "".join(glued)
