"""The journal's Markdown export shows what the log and the operator's arguments held, never sends it:
a fatal summary with an OSC title or a bidi override is written escaped, and a command line's word with
an escape in bash's ANSI-C quoting (exact when pasted back, raw nowhere)."""

from __future__ import annotations

from gdnconsole.host.journal import Attempt, Fatal, to_markdown

RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def test_the_markdown_export_shows_escapes_and_sends_none() -> None:
    attempt = Attempt(
        number=1,
        time=0.0,
        host="box",
        profile="p",
        argv=["python", "-m", "sglang.launch_server", "--served-model-name", "x\x1b]0;PWNED\x07"],
        env={"NOTE": "a\u202eb"},
        diff=["+ --served-model-name x\x1b]0;PWNED\x07"],
        outcome="crashed",
        fatal=Fatal(12, "RuntimeError: boom \x1b[2J \x9b2J | pipe"),
        warnings=["warn \x1b]0;W\x07"],
    )
    text = to_markdown("box", [attempt])
    assert not [c for c in RAW if c in text], repr(text)
    assert "RuntimeError: boom ^[[2J \\\\x9b2J \\| pipe" in text  # shown, then table-safe
    assert "+ --served-model-name x^[]0;PWNED^G" in text and "warn ^[]0;W^G" in text
    assert (
        "NOTE=$'a\\u202eb' python -m sglang.launch_server --served-model-name $'x\\x1b]0;PWNED\\x07'" in text
    )
