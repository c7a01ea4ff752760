"""What the console sends to the terminal's clipboard is what the screen shows: a log line's escapes are
made visible first, since the text is pasted later into a shell or a terminal (a line's ``ESC [201~``
would end a bracketed paste there and run the rest as typed). The flag form's command line writes a word
with an escape in ANSI-C quoting."""

from __future__ import annotations

from textual.app import App

from gdnconsole.config.hosts import Profile
from gdnconsole.sglang.launch import launch_spec
from gdnconsole.ui import clipboard
from gdnconsole.ui.models.formmodel import command_text


async def test_a_copied_line_is_sent_as_shown() -> None:
    app: App[object] = App()
    async with app.run_test():
        said = clipboard.send(app, "ok \x1b[201~rm -rf ~\r\n \x1b]0;PWNED\x07 \u202e\nnext", "the line")
        assert app.clipboard == "ok ^[[201~rm -rf ~\n ^[]0;PWNED^G \\u202e\nnext"
        assert said == f"the line {clipboard.SENT}"


def test_the_flag_form_s_command_line_quotes_an_escape_in_ansi_c() -> None:
    profile = Profile(
        name="p", model="m", args=("--served-model-name", "x\x1b]0;PWNED\x07"), env={"N": "a\u202e"}
    )
    text = command_text(launch_spec(profile, "python3"), secrets=True)
    assert "\x1b" not in text and "\u202e" not in text
    assert text.startswith("env $'N=a\\u202e' python3 -m sglang.launch_server")
    assert text.endswith("--served-model-name $'x\\x1b]0;PWNED\\x07'")
