"""Log text is data: make it safe to show without a terminal or Rich reading it as instructions."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

# What a terminal (or a reader) could take for something other than the text itself, from a log, a host
# or a server: C0 controls but tab, DEL and C1 controls (each can start, end or be part of an escape
# sequence: a title set, a screen cleared); Unicode format characters (Cf: bidi overrides and isolates that
# display text reversed, zero-width spaces and joiners that make two names look one); line and paragraph
# separators; lone surrogates (undecodable bytes, which no terminal encoding takes). The Cf ranges are
# Unicode 14's, checked against unicodedata by tests/logs/test_textsafe_unicode.py.
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f" + _FORMAT + "\ud800-\udfff"
_CONTROL = re.compile(f"[\n{_UNSAFE}]")  # one line: a newline is shown too
_CONTROL_LINES = re.compile(f"[{_UNSAFE}]")  # lines: newlines kept


def _escape(code: int) -> str:
    """Python's escape for a code point beyond Latin-1's controls (``\\x9b``, ``\\u202e``)."""
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _caret(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return _escape(code)


def visible(text: str) -> str:
    """``text`` as one line that shows every character a terminal could obey: C0 controls in caret
    notation (ESC becomes ``^[``, a newline ``^J``), C1 and format characters as escapes (``\\x9b``,
    ``\\u202e``). Tab and printable text stay as they are."""
    return _CONTROL.sub(_caret, text)


def visible_lines(text: str) -> str:
    """``text`` that may hold several lines (a model's answer, a traceback), shown as :func:`visible`
    shows one, its newlines kept (a CRLF is a newline)."""
    return _CONTROL_LINES.sub(_caret, text.replace("\r\n", "\n"))


def _ansi_c(match: re.Match[str]) -> str:
    """Bash's escape for a character: ``\\xHH`` is a byte there, so past ASCII it is ``\\u``/``\\U``."""
    code = ord(match.group())
    if code < 0x80:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # an undecodable byte (surrogateescape): that byte again
    return f"\\U{code:08x}" if code >> 16 else f"\\u{code:04x}"


def _shell_word(word: str) -> str:
    if not _CONTROL.search(word):
        return shlex.quote(word)
    # Bash's ANSI-C quoting: the same word when pasted back, and nothing of it reaches the terminal raw.
    quoted = word.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + _CONTROL.sub(_ansi_c, quoted) + "'"


def shell_line(argv: Iterable[str]) -> str:
    """``argv`` as a command line to show and to paste back: ``shlex.join``, except that a word holding a
    control or format character is written in bash's ANSI-C quoting (``$'\\x1b]0;…'``)."""
    return " ".join(_shell_word(word) for word in argv)


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
