"""The log view on a file that is not an SGLang log: shown, with a toast that says so."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.cli.logview import not_sglang_notice
from gdnconsole.ui.screens.logscreen import LogViewApp
from tests.ui.conftest import SIZE, settle
from tests.ui.fixtures import ct129_lines, write_log


async def test_a_file_that_is_not_an_sglang_log_is_shown_with_a_toast_that_says_so(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("buy milk\n")
    notice = not_sglang_notice(notes)
    assert notice == (
        f"{notes}: not an SGLang log (no line of its first 64 KiB is one SGLang writes); shown as it is"
    )
    app = LogViewApp(notes, poll_interval=None, notice=notice)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        assert [n.message for n in app._notifications] == [notice]
        assert app.log_screen.view.total == 1


def test_an_sglang_log_gets_no_notice(tmp_path: Path) -> None:
    assert not_sglang_notice(write_log(tmp_path / "serve.log", ct129_lines())) is None
