"""Whether a file can be read as a log, and why not: the messages `log summarize` and `log view` print."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gdnconsole.logs import scan as logscan


def refused(path: Path) -> str:
    with pytest.raises(logscan.LogReadError) as caught:
        logscan.check_readable(path)
    return str(caught.value)


def test_a_text_log_is_readable_and_its_size_is_returned(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(b"[2026-11-30 10:00:00] hello\n\tindented\r\n\x0b\x0c\n")
    assert logscan.check_readable(path) == 42


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    assert refused(tmp_path / "nope.log") == f"{tmp_path / 'nope.log'}: no such file"


def test_a_path_that_cannot_be_looked_up_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert refused(tmp_path / "file" / "x.log") == f"{tmp_path / 'file' / 'x.log'}: Not a directory"


def test_a_directory_is_refused(tmp_path: Path) -> None:
    assert refused(tmp_path) == f"{tmp_path}: is a directory, not a log file"


def test_a_fifo_is_refused_before_anything_blocks_on_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert refused(fifo) == f"{fifo}: is not a regular file (a FIFO, device or socket), not a log file"


def test_a_file_that_cannot_be_opened_is_refused_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.log"
    path.write_text("hello\n")

    def denied(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", denied)  # root reads every file: the refusal is staged
    assert refused(path) == f"{path}: cannot read: Permission denied"


def test_a_file_with_nul_bytes_in_its_text_is_binary(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(b"ELF\x00\x01\x02 text")
    assert refused(path) == f"{path}: looks like a binary file, not a text log"


def test_invalid_utf8_alone_is_still_a_log(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(b"caf\xe9 \xff\xfe log line\n" * 3)
    assert logscan.check_readable(path) == 51


@pytest.mark.parametrize("code", [1, 8, 14, 27, 31])
def test_a_control_byte_is_a_sign_of_a_binary_file(tmp_path: Path, code: int) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(b"text" + bytes([code]))  # one control in 5 bytes: more than a tenth
    assert refused(path).endswith("looks like a binary file, not a text log")


def test_the_first_byte_of_the_file_is_judged_too(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(b"\x01text")
    assert refused(path).endswith("looks like a binary file, not a text log")


@pytest.mark.parametrize("code", [9, 10, 11, 12, 13, 32, 127, 200])
def test_tabs_line_ends_and_high_bytes_are_text(tmp_path: Path, code: int) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(b"text" + bytes([code]))
    assert logscan.check_readable(path) == 5


def test_up_to_a_tenth_of_control_bytes_is_still_text(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(b"\x1b[0m" + b"x" * 95 + b"\x07" * 9)  # 10 controls (ESC, 9 BEL) in 108 bytes
    assert logscan.check_readable(path) == 108
    path.write_bytes(b"\x07" * 10 + b"x" * 90)  # exactly a tenth
    assert logscan.check_readable(path) == 100
    path.write_bytes(b"X" * 90 + b"\x07" * 10)  # wherever they are
    assert logscan.check_readable(path) == 100
    path.write_bytes(b"\x07" * 11 + b"x" * 89)
    assert refused(path).endswith("looks like a binary file, not a text log")


def test_only_the_first_8_kib_of_text_are_judged(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(b"x" * 8192 + b"\x00")
    assert logscan.check_readable(path) == 8193
    path.write_bytes(b"x" * 8191 + b"\x00")
    assert refused(path).endswith("looks like a binary file, not a text log")


def test_an_empty_file_is_a_log(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(b"")
    assert logscan.check_readable(path) == 0


def test_the_nul_hole_of_a_copytruncate_is_skipped_before_the_text_is_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logscan, "READ", 16)  # the hole spans several reads
    path = tmp_path / "x.log"
    path.write_bytes(b"\0" * 100 + b"[2026-11-30 10:00:00] hello\n")
    assert logscan.check_readable(path) == 128
    path.write_bytes(b"\0" * 100 + b"x" * 8192 + b"\0")  # the 8 KiB judged start after the hole
    assert logscan.check_readable(path) == 8293
    path.write_bytes(b"\0" * 100 + b"\x01\x02\x03 binary")
    assert refused(path).endswith("looks like a binary file, not a text log")


def test_a_sparse_hole_is_skipped_without_reading_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.log"
    with path.open("wb") as fh:
        fh.truncate(64 << 20)  # 64 MiB of hole: read in 1 MiB blocks it would take many reads
        fh.seek(64 << 20)
        fh.write(b"[2026-11-30 10:00:00] hello\n")
    reads: list[int] = []
    pread = os.pread

    def counted(fd: int, n: int, pos: int) -> bytes:
        reads.append(pos)
        return pread(fd, n, pos)

    monkeypatch.setattr(os, "pread", counted)
    assert logscan.check_readable(path) == (64 << 20) + 28
    assert len(reads) <= 2


def test_a_file_that_is_all_hole_is_an_empty_log(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    with path.open("wb") as fh:
        fh.truncate(100)
    assert logscan.check_readable(path) == 100


def test_records_are_decoded_with_invalid_bytes_replaced() -> None:
    records = [(3, b"caf\xc3\xa9"), (9, b"bad \xff byte")]
    assert list(logscan.decoded(records)) == [(3, "café"), (9, "bad \ufffd byte")]
