"""Files the scan cannot map or that end before their size says (procfs, sysfs): read, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from gdnconsole.logs import scan as logscan

# Regular files of sysfs: mmap refuses them (ENODEV) and their size (4096) is not what a read gives.
SYSFS = [Path(p) for p in ("/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/profiling")]


def sysfs_file() -> Path:
    for path in SYSFS:
        try:
            if path.is_file() and path.read_bytes():
                return path
        except OSError:
            continue
    pytest.skip("no readable sysfs file here")


def test_a_file_that_cannot_be_mapped_is_read_and_its_last_line_counted() -> None:
    path = sysfs_file()
    text = path.read_bytes()
    result = logscan.scan(path, parallel=False)
    assert result.lines == text.count(b"\n") + (0 if text.endswith(b"\n") else 1)
    assert [raw for _, raw in result.records] == text.rstrip(b"\n").split(b"\n")


def test_the_read_path_ends_a_file_shorter_than_its_size_with_its_last_line(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"one\ntwo\nthree")
    lines, records = logscan._scan_span(str(log), 0, 4096)  # the size a sysfs file claims
    assert lines == 3
    assert [raw for _, raw in records] == [b"one", b"two", b"three"]


def test_a_file_that_fails_while_it_is_scanned_is_one_read_error(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"[2026-11-30 10:00:00] hello\n")

    def fails(*_: object) -> tuple[int, list[tuple[int, bytes]]]:
        raise OSError(5, "Input/output error")

    with pytest.MonkeyPatch.context() as mp:  # EIO past the head is not something a test disk does
        mp.setattr(logscan, "_scan_span", fails)
        with pytest.raises(logscan.LogReadError) as caught:
            logscan.scan(log, parallel=False)
    assert str(caught.value) == f"{log}: cannot read: Input/output error"
