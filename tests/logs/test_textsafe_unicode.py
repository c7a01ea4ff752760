"""Untrusted text shown, never obeyed: format characters (bidi, zero width), separators, lone surrogates,
the multi-line form, and command lines in ANSI-C quoting that paste back exactly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import unicodedata

import pytest

from gdnconsole.logs import textsafe
from gdnconsole.logs.textsafe import shell_line, visible, visible_lines

SHOWN = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # what a terminal could obey, or a reader be fooled by


def test_every_format_control_separator_and_surrogate_is_escaped_and_nothing_else() -> None:
    """The hard-coded ranges are exactly Unicode's categories, as this Python's unicodedata has them
    (a newer Unicode adds format characters: update textsafe._FORMAT)."""
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    escaped = {match.start() for match in textsafe._CONTROL.finditer(every)}
    obeyed = {code for code, char in enumerate(every) if unicodedata.category(char) in SHOWN} - {ord("\t")}
    wrong = [f"U+{code:04X} {unicodedata.category(chr(code))}" for code in sorted(escaped ^ obeyed)]
    assert all(visible(chr(code)) != chr(code) for code in escaped)  # the sub uses the same class
    assert not wrong, wrong[:20]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\u202e", "\\u202e"),  # right-to-left override
        ("\u2066", "\\u2066"),  # left-to-right isolate
        ("\u200b", "\\u200b"),  # zero-width space
        ("\u200d", "\\u200d"),  # zero-width joiner
        ("\ufeff", "\\ufeff"),  # BOM / zero-width no-break space
        ("\u00ad", "\\xad"),  # soft hyphen
        ("\u2028", "\\u2028"),  # line separator
        ("\u2029", "\\u2029"),  # paragraph separator
        ("\U000e0001", "\\U000e0001"),  # language tag
        ("\U0001d173", "\\U0001d173"),
        ("\udc9b", "\\udc9b"),  # an undecodable byte, as surrogateescape reads it
    ],
)
def test_a_format_character_is_shown_as_its_escape(text: str, shown: str) -> None:
    assert visible(text) == shown
    assert visible_lines(text) == shown


def test_a_reversed_name_reads_as_its_characters() -> None:
    assert visible("admin\u202egpj.exe") == "admin\\u202egpj.exe"
    assert visible("ct\u200b129") != visible("ct129")


def test_printable_unicode_is_left_alone() -> None:
    text = "Qwen3.6 – 日本語 ∑ é \u00a0 \u0300 😀 \u05d0\u05d1 ①"
    assert visible(text) == text and visible_lines(text) == text


def test_the_hostile_log_line_shows_every_escape() -> None:
    line = "boom \x1b]0;PWNED\x07 \x1b[2J \x9b2J bell\x07 back\x08 cr\r end"
    assert visible(line) == "boom ^[]0;PWNED^G ^[[2J \\x9b2J bell^G back^H cr^M end"


def test_several_lines_keep_their_newlines_and_tabs_but_nothing_else() -> None:
    assert visible_lines("one\ntwo\tcol\x1b[2J\n") == "one\ntwo\tcol^[[2J\n"
    assert visible_lines("a\r\nb\rc") == "a\nb^Mc"  # a CRLF is a newline, a lone CR is shown
    assert visible_lines("\x0b\x0c\x85\u2028") == "^K^L\\x85\\u2028"
    assert visible("a\r\nb") == "a^M^Jb"  # one line: both shown


def test_escapes_by_range() -> None:
    assert textsafe._escape(0x9B) == "\\x9b"
    assert textsafe._escape(0xFF) == "\\xff"
    assert textsafe._escape(0x100) == "\\u0100"
    assert textsafe._escape(0xFFFF) == "\\uffff"
    assert textsafe._escape(0x10000) == "\\U00010000"
    assert visible("\x1f\x20\x7e\x7f\x80") == "^_ ~^?\\x80"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["python", "-m", "x"], "python -m x"),
        (["a b", "it's", ""], "'a b' 'it'\"'\"'s' ''"),  # shlex.join's own quoting
        (["--x", "\x1b]0;PWNED\x07"], "--x $'\\x1b]0;PWNED\\x07'"),
        (["it's\x1b"], "$'it\\'s\\x1b'"),
        (["back\\slash\n"], "$'back\\\\slash\\x0a'"),
        (["c1\x9b", "rtl\u202e", "tag\U000e0001"], "$'c1\\u009b' $'rtl\\u202e' $'tag\\U000e0001'"),
        (["byte\udcff"], "$'byte\\xff'"),  # undecodable byte 0xff: written back as that byte
        (["\x7f"], "$'\\x7f'"),
        (["\x80\xad"], "$'\\u0080\\u00ad'"),  # in bash, \\x80 would be a byte, not U+0080
        (["\udc80", "\udd00"], "$'\\x80' $'\\udd00'"),  # a byte; a surrogate that stands for none
        (["\U0001d173", "\ufffb"], "$'\\U0001d173' $'\\ufffb'"),
    ],
)
def test_a_command_line_quotes_controls_in_ansi_c(argv: list[str], line: str) -> None:
    assert shell_line(argv) == line
    assert "\x1b" not in line and "\x9b" not in line


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash reads the ANSI-C quoting back")
def test_a_command_line_pasted_into_bash_gives_back_the_same_words() -> None:
    words = ["plain", "a b", "it's", "\x1b]0;PWNED\x07", "x\\y\u202e\x9b", "new\nline\t", "\x01\x7f\x80", "é"]
    script = "for w in " + shell_line(words) + "; do printf '%s\\0' \"$w\"; done"
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    out = subprocess.run(["bash", "-c", script], capture_output=True, env=env, check=True, timeout=10).stdout
    assert out.decode("utf-8").split("\0")[:-1] == words
