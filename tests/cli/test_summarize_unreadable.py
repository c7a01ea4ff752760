"""`log summarize` of what cannot be read as a log: one `gdnconsole: error:` line, exit 2, no usage text,
no traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.test_summarize import summarize
from tests.logs.test_scan_unmappable import sysfs_file


def dangling(p: Path) -> Path:
    (p / "gone.log").symlink_to(p / "nowhere.log")
    return p / "gone.log"


def under_a_file(p: Path) -> Path:
    (p / "file").write_text("x\n")
    return p / "file" / "serve.log"


def a_directory(p: Path) -> Path:
    (p / "logs").mkdir()
    return p / "logs"


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize(
    ("make", "why"),
    [(dangling, "no such file"), (under_a_file, "Not a directory"), (a_directory, "is a directory")],
)
def test_an_unreadable_path_is_one_error_line(
    tmp_path: Path, make: Callable[[Path], Path], why: str, as_json: bool
) -> None:
    path = make(tmp_path)
    result = summarize(path, *(["--json"] if as_json else []))
    assert (result.returncode, result.stdout) == (2, "")
    [line] = result.stderr.splitlines()
    assert line.startswith(f"gdnconsole: error: {path}: {why}")
    assert "Usage" not in result.stderr


def test_a_file_the_kernel_cannot_map_is_summarized_not_a_traceback() -> None:
    path = sysfs_file()
    result = summarize(path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "not an SGLang log" in result.stdout
