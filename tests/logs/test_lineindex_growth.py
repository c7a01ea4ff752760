"""The line index following a growing log: what each update reports, its checkpoints, and the rotations it
tells apart (truncation, copytruncate with or without a NUL hole, rename, delete, replacement)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gdnconsole.logs import lineindex as logindex
from gdnconsole.logs.lineindex import Growth, LineIndex


def numbered(count: int, start: int = 0) -> bytes:
    """``count`` lines of 8 bytes each, newline included: line k starts at byte 8 * k."""
    return b"".join(b"L%06d\n" % k for k in range(start, start + count))


def checkpoints(index: LineIndex) -> list[tuple[int, int]]:
    """Every checkpoint the index holds, as its readers find them."""
    return sorted({index.checkpoint(n) for n in range(index.complete + 2)})


def expected_checkpoints(data: bytes, block: int) -> list[tuple[int, int]]:
    """One checkpoint per block that holds a newline: the line after its first newline, and where it starts."""
    out = [(0, 0)]
    for lo in range(block, len(data), block):
        first = data.find(b"\n", lo, lo + block)
        if first >= 0:
            out.append((data.count(b"\n", 0, first + 1), first + 1))
    return out


# -- what an update reports ---------------------------------------------------------------------------


def test_updates_report_the_lines_before_and_after(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\ntwo\n")
    index = LineIndex(path)
    assert index.update() == Growth(False, 0, 2)
    with path.open("ab") as fh:
        fh.write(b"three\n")
    growth = index.update()
    assert growth == Growth(False, 2, 3) and growth.added == 1
    assert index.update() == Growth(False, 3, 3)  # nothing new: no restart either
    assert (index.complete, index.end, index.size, index.line_count) == (3, 14, 14, 3)


def test_a_last_line_without_its_newline_counts_but_is_not_complete(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\ntw")
    index = LineIndex(path)
    assert index.update() == Growth(False, 0, 1)
    assert (index.complete, index.end, index.size, index.line_count) == (1, 4, 6, 2)
    assert index.read(0, 5) == [b"one", b"tw"]
    with path.open("ab") as fh:
        fh.write(b"o\nthr")
    assert index.update() == Growth(False, 1, 2)
    assert index.read(0, 5) == [b"one", b"two", b"thr"]


def test_a_missing_log_is_empty_until_it_appears(tmp_path: Path) -> None:
    path = tmp_path / "later.log"
    index = LineIndex(path)
    assert index.update() == Growth(False, 0, 0)
    assert (index.line_count, index.read(0, 5), index.tail(5), list(index.chunks(0, 5))) == (0, [], [], [])
    path.write_bytes(b"here\n")
    assert index.update() == Growth(False, 0, 1)
    assert index.read(0, 5) == [b"here"]


def test_progress_is_told_after_each_read_and_cancel_stops_indexing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logindex, "READ", 64)
    path = tmp_path / "a.log"
    path.write_bytes(numbered(20))  # 160 bytes: three reads of at most 64
    told: list[tuple[int, int]] = []
    index = LineIndex(path)
    assert index.update(progress=lambda done, size: told.append((done, size))) == Growth(False, 0, 20)
    assert told == [(64, 160), (128, 160), (160, 160)]

    cancelled = LineIndex(path)
    assert cancelled.update(cancelled=lambda: True) == Growth(False, 0, 0)
    assert cancelled.line_count == 0
    asked: list[int] = []

    def after_one_read() -> bool:
        asked.append(1)
        return len(asked) > 1

    assert cancelled.update(cancelled=after_one_read) == Growth(False, 0, 8)  # the first 64 bytes
    assert (cancelled.end, cancelled.size) == (64, 64)
    asked.clear()
    assert cancelled.update(cancelled=lambda: bool(asked.append(1))) == Growth(False, 8, 20)  # the rest
    assert len(asked) == 2  # asked once before each read, and not once all is read
    assert cancelled.read(18, 25) == [b"L000018", b"L000019"]


# -- checkpoints --------------------------------------------------------------------------------------


def test_one_checkpoint_per_block_at_the_line_after_its_first_newline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logindex, "BLOCK", 16)
    path = tmp_path / "a.log"
    path.write_bytes(numbered(20))
    index = LineIndex(path)
    index.update()
    assert checkpoints(index) == [(0, 0)] + [(2 * b + 1, 16 * b + 8) for b in range(1, 10)]
    assert index.checkpoint(0) == (0, 0)
    assert index.checkpoint(2) == (0, 0)
    assert index.checkpoint(3) == (3, 24)
    assert index.checkpoint(10) == (9, 72)
    assert index.checkpoint(500) == (19, 152)


def test_blocks_without_a_newline_get_no_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logindex, "BLOCK", 16)
    data = b"a\n" + b"x" * 50 + b"\nb\nc\n" + b"y" * 20 + b"\nd\n"
    path = tmp_path / "a.log"
    path.write_bytes(data)
    index = LineIndex(path)
    index.update()
    assert checkpoints(index) == expected_checkpoints(data, 16) == [(0, 0), (2, 53), (5, 78)]
    assert index.read(0, 9) == [b"a", b"x" * 50, b"b", b"c", b"y" * 20, b"d"]


@pytest.mark.parametrize("pieces", [[7], [1, 5, 9, 16, 3], [16, 16, 16], [15, 2, 40]])
def test_checkpoints_do_not_depend_on_how_the_file_grew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: list[int]
) -> None:
    monkeypatch.setattr(logindex, "BLOCK", 16)
    data = b"".join(b"%s\n" % (b"z" * (k % 23)) for k in range(40))
    path = tmp_path / "a.log"
    path.write_bytes(b"")
    index = LineIndex(path)
    at = 0
    while at < len(data):
        for size in pieces:
            with path.open("ab") as fh:
                fh.write(data[at : at + size])
            at += size
            index.update()
    assert index.complete == 40 and index.end == len(data)
    assert checkpoints(index) == expected_checkpoints(data, 16)
    assert index.read(0, 40) == [b"z" * (k % 23) for k in range(40)]


def test_extend_indexes_the_lines_handed_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logindex, "BLOCK", 16)
    path = tmp_path / "mirror.log"
    path.write_bytes(b"")
    index = LineIndex(path)
    data = numbered(9)
    for piece in (data[:8], data[8:40], data[40:]):
        with path.open("ab") as fh:
            fh.write(piece)
        index.extend(piece)
    assert (index.complete, index.end, index.size, index.line_count) == (9, 72, 72, 9)
    assert checkpoints(index) == expected_checkpoints(data, 16)
    assert index.read(7, 9) == [b"L000007", b"L000008"]
    with path.open("ab") as fh:
        fh.write(b"half")
    index.extend(b"half")  # a piece without its newline: a last line still open
    assert (index.complete, index.size, index.line_count) == (9, 76, 10)
    assert index.read(8, 10) == [b"L000008", b"half"]


def test_extend_on_a_log_that_is_gone_reads_nothing(tmp_path: Path) -> None:
    index = LineIndex(tmp_path / "gone.log")
    index.extend(b"one\n")
    assert index.line_count == 1
    assert index.read(0, 1) == []
    assert list(index.chunks(0, 1)) == []


# -- rotations ------------------------------------------------------------------------------------------


def test_a_shorter_file_in_place_is_a_truncation(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(numbered(10))
    index = LineIndex(path)
    index.update()
    path.write_bytes(b"new\n")  # a relaunch's `>`: same inode, shorter
    assert index.update() == Growth(True, 0, 1, "truncated")
    assert index.read(0, 9) == [b"new"]
    assert index.update() == Growth(False, 1, 1)


def test_a_rewrite_of_the_same_size_is_a_truncation(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(numbered(10))
    index = LineIndex(path)
    index.update()
    with path.open("r+b") as fh:  # copytruncate, then exactly as many bytes written before the next look
        fh.truncate(0)
        fh.write(numbered(10, start=100))
    assert index.update() == Growth(True, 0, 10, "truncated")
    assert index.read(0, 2) == [b"L000100", b"L000101"]


def test_a_copytruncate_is_told_by_the_last_bytes_indexed(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    old = numbered(20)
    path.write_bytes(old)
    index = LineIndex(path)
    index.update()
    # The last 64 bytes before the end indexed are compared: one changed byte among them is a restart ...
    changed = bytearray(old + b"more\n")
    changed[len(old) - logindex.SEEN] ^= 1
    path.write_bytes(bytes(changed))
    assert index.update() == Growth(True, 0, 21, "truncated")
    # ... one byte before them is not looked at (a log is only ever appended to or rewritten from 0).
    grown = bytearray(bytes(changed) + b"again\n")
    grown[len(changed) - logindex.SEEN - 1] ^= 1
    path.write_bytes(bytes(grown))
    assert index.update() == Growth(False, 21, 22)


def test_a_short_log_is_compared_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"ab\n")
    index = LineIndex(path)
    index.update()
    path.write_bytes(b"xb\nmore\n")
    assert index.update() == Growth(True, 0, 2, "truncated")
    path.write_bytes(b"xb\nmore\nand more\n")
    assert index.update() == Growth(False, 2, 3)


def test_a_copytruncate_hole_of_nuls_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(numbered(10))
    index = LineIndex(path)
    index.update()
    fd = os.open(path, os.O_WRONLY)
    try:  # copytruncate, and the writer's next line lands at its old offset: a hole of NULs before it
        os.ftruncate(fd, 0)
        os.pwrite(fd, b"after\nmore\n", 80)
    finally:
        os.close(fd)
    assert index.update() == Growth(True, 0, 2, "truncated")
    assert index.read(0, 5) == [b"after", b"more"]


def test_a_renamed_log_with_a_new_one_in_its_place_is_read_to_its_end_first(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\ntwo\n")
    index = LineIndex(path)
    index.update()
    with path.open("ab") as writer:
        path.rename(tmp_path / "a.log.1")
        path.write_bytes(b"fresh\n")
        writer.write(b"three\n")
        writer.flush()
        assert index.update() == Growth(False, 2, 3)  # the old file's last line first
        assert index.read(0, 9) == [b"one", b"two", b"three"]
        assert index.update() == Growth(True, 0, 1, "replaced")
        assert index.read(0, 9) == [b"fresh"]


def test_a_new_file_holding_only_a_partial_line_is_a_replacement(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\n")
    index = LineIndex(path)
    index.update()
    path.rename(tmp_path / "a.log.1")
    path.write_bytes(b"x")
    assert index.update() == Growth(True, 0, 0, "replaced")
    assert (index.line_count, index.read(0, 1)) == (1, [b"x"])


def test_an_empty_new_file_leaves_the_old_one_followed(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\n")
    index = LineIndex(path)
    index.update()
    path.rename(tmp_path / "a.log.1")
    path.write_bytes(b"")
    assert index.update() == Growth(False, 1, 1)
    assert index.read(0, 1) == [b"one"]


def test_a_log_replaced_by_a_device_is_a_replacement(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\n")
    index = LineIndex(path)
    index.update()
    path.unlink()
    path.symlink_to("/dev/null")  # empty, but not a file a writer is about to fill
    assert index.update() == Growth(True, 0, 0, "replaced")
    assert index.read(0, 1) == []


def test_a_deleted_log_is_read_on_and_its_return_is_a_replacement(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\n")
    index = LineIndex(path)
    index.update()
    with path.open("ab") as writer:
        path.unlink()
        writer.write(b"two\n")
        writer.flush()
        assert index.update() == Growth(False, 1, 2)
    path.write_bytes(b"back\n")
    assert index.update() == Growth(True, 0, 1, "replaced")
    assert index.read(0, 3) == [b"back"]


def test_a_log_truncated_then_deleted_is_reported_as_restarted(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\ntwo\n")
    index = LineIndex(path)
    index.update()
    with path.open("r+b") as fh:
        fh.truncate(0)
    path.unlink()  # nothing at the path to restart on: the restart is news all the same
    assert index.update() == Growth(True, 0, 0, "truncated")
    assert index.read(0, 2) == []
    path.write_bytes(b"new\n")
    assert index.update() == Growth(False, 0, 1)
    assert index.read(0, 2) == [b"new"]


def test_checkpoints_start_again_after_a_truncation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logindex, "BLOCK", 16)
    path = tmp_path / "a.log"
    path.write_bytes(numbered(20))
    index = LineIndex(path)
    index.update()
    again = numbered(10, start=100)
    path.write_bytes(again)
    assert index.update() == Growth(True, 0, 10, "truncated")
    assert checkpoints(index) == expected_checkpoints(again, 16)
    assert index.checkpoint(3) == (3, 24)


def test_reading_chunks_before_the_first_update_leaves_the_update_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\ntwo\n")
    index = LineIndex(path)
    assert list(index.chunks(0, 2)) == []  # nothing indexed yet
    assert index.update() == Growth(False, 0, 2)
    assert list(index.chunks(0, 2)) == [(0, b"one\ntwo\n")]
