"""`gdnconsole log view`: the same clear errors as `log summarize` for files it cannot show."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gdnconsole.cli.main import main


@pytest.mark.parametrize("kind", ["missing", "directory", "binary"])
def test_unreadable_files_exit_2(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x.log"
    if kind == "directory":
        path.mkdir()
    elif kind == "binary":
        path.write_bytes(b"\x00\x01\x02" * 100)
    result = CliRunner().invoke(main, ["log", "view", str(path)])
    assert result.exit_code == 2
    assert result.output.startswith("gdnconsole: error: ") and "Traceback" not in result.output


def test_view_runs_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Path, bool]] = []
    monkeypatch.setattr(
        "gdnconsole.ui.screens.logscreen.run_log_view", lambda path, follow, **_: calls.append((path, follow))
    )
    monkeypatch.setattr("gdnconsole.cli.opener.interactive", lambda: True)  # CliRunner's output is a pipe
    log = tmp_path / "a.log"
    log.write_text("[2026-11-30 09:00:00] hello\n")
    result = CliRunner().invoke(main, ["log", "view", str(log), "--follow"])
    assert result.exit_code == 0, result.output
    assert calls == [(log, True)]
