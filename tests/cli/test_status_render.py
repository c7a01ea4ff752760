"""`gdnconsole status` prints what a host said: an escape sequence in it is shown, never obeyed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from gdnconsole.cli.common import output_console
from gdnconsole.cli.status import render
from gdnconsole.host.link import LinkState
from tests.ui.dashboard_helpers import refused_session

HOSTILE = "\x1b]0;pwned\x07\x1b[2Jcleared"


def test_escapes_from_the_host_are_shown_not_sent(tmp_path: Path) -> None:
    session = refused_session(tmp_path)
    session._set_link(LinkState.DOWN, f"the connection was lost: {HOSTILE}")
    out = io.StringIO()
    Console(file=out, force_terminal=True, width=200, highlight=False).print(render(session))
    printed = out.getvalue()
    assert "\x1b]0;" not in printed and "\x1b[2J" not in printed and "\x07" not in printed
    assert "^[]0;pwned^G^[[2Jcleared" in printed


def test_piped_output_is_not_wrapped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Piped to grep or a file, Rich's 80 columns split paths across lines: no width limit there."""
    session = refused_session(tmp_path)
    path = "/very/long/path/" + "to/" * 30 + "sglang_serve.log"
    session._set_link(LinkState.DOWN, f"cannot read {path}: Permission denied")
    output_console().print(render(session))
    printed = capsys.readouterr().out
    assert f"cannot read {path}: Permission denied\n" in printed
