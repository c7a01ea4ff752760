"""Reading a log through its line index: ranges, scattered lines, the tail, chunks both ways, giant lines
read as their head and tail, NULs before a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gdnconsole.logs import lineindex as logindex
from gdnconsole.logs.lineindex import LineIndex, capped


def numbered(count: int) -> bytes:
    """``count`` lines of 8 bytes each, newline included: line k starts at byte 8 * k."""
    return b"".join(b"L%06d\n" % k for k in range(count))


def lines_of(count: int) -> list[bytes]:
    return [b"L%06d" % k for k in range(count)]


def indexed(path: Path, data: bytes) -> LineIndex:
    path.write_bytes(data)
    index = LineIndex(path)
    index.update()
    return index


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 16 bytes, chunks of 2 blocks, reads of 16 bytes, lines capped over 40 bytes: the index's
    arithmetic on files of a few hundred bytes."""
    monkeypatch.setattr(logindex, "BLOCK", 16)
    monkeypatch.setattr(logindex, "CHUNK_BLOCKS", 2)
    monkeypatch.setattr(logindex, "READ", 64)
    monkeypatch.setattr(logindex, "LINE_CAP", 40)
    monkeypatch.setattr(logindex, "LONG_HEAD", 10)
    monkeypatch.setattr(logindex, "LONG_TAIL", 6)


# -- ranges and scattered lines -----------------------------------------------------------------------


@pytest.mark.usefixtures("small")
def test_read_gives_exactly_the_lines_asked_for(tmp_path: Path) -> None:
    index = indexed(tmp_path / "a.log", numbered(20))
    every = lines_of(20)
    for start in range(21):
        for stop in range(start, 23):
            assert index.read(start, stop) == every[start:stop], (start, stop)
    assert index.read(5, 3) == []


def test_read_many_returns_the_lines_asked_for_and_no_others(tmp_path: Path) -> None:
    index = indexed(tmp_path / "a.log", numbered(50))
    every = lines_of(50)
    asked = [9, 3, 4, 5, 7, 40, 41, 49, 3]
    assert index.read_many(asked) == {n: every[n] for n in (3, 4, 5, 7, 9, 40, 41, 49)}
    assert index.read_many([48, 49, 50, 51]) == {48: every[48], 49: every[49]}
    assert index.read_many([]) == {}
    assert index.read_many([0]) == {0: every[0]}


def test_read_many_over_a_long_run_of_lines(tmp_path: Path) -> None:
    index = indexed(tmp_path / "a.log", numbered(10_000))
    every = lines_of(10_000)
    assert index.read_many(list(range(1, 9_000))) == {n: every[n] for n in range(1, 9_000)}


def test_a_read_racing_a_truncation_gives_what_is_still_there(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    index = indexed(path, b"one\ntwo\nthree\nfour\n")
    with path.open("r+b") as fh:
        fh.truncate(8)  # not updated since: the index still counts four lines
    assert index.line_count == 4
    assert index.read(0, 4) == [b"one", b"two"]
    with path.open("r+b") as fh:
        fh.truncate(6)
    assert index.read(0, 4) == [b"one", b"tw"]


# -- the tail -----------------------------------------------------------------------------------------


def test_tail_gives_the_last_lines_without_an_index(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\ntwo\nthree\n")
    index = LineIndex(path)
    assert index.tail(2) == [b"two", b"three"]
    assert index.tail(9) == [b"one", b"two", b"three"]
    path.write_bytes(b"one\ntwo\nthr")
    assert index.tail(2) == [b"two", b"thr"]
    path.write_bytes(b"")
    assert index.tail(2) == []


def test_tail_of_a_large_file_drops_the_line_cut_by_its_window(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"first line\nsecond\nthird\n")  # 24 bytes
    index = LineIndex(path)
    assert index.tail(9, max_bytes=24) == [b"first line", b"second", b"third"]  # the whole file: nothing cut
    assert index.tail(9, max_bytes=23) == [b"second", b"third"]
    assert index.tail(9, max_bytes=12) == [b"third"]  # "econd\nthird\n"
    assert index.tail(9, max_bytes=6) == []  # "third\n" could be the end of a longer line: nothing sure


def test_tail_of_a_missing_log_is_empty(tmp_path: Path) -> None:
    assert LineIndex(tmp_path / "none.log").tail(3) == []


# -- chunks -------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("small")
def test_chunks_run_from_checkpoint_to_checkpoint(tmp_path: Path) -> None:
    # 8-byte lines in 16-byte blocks: checkpoints at lines 0, 3, 5, 7 ... 19; a chunk spans two of them.
    index = indexed(tmp_path / "a.log", numbered(20))
    data = numbered(20)
    assert list(index.chunks(0, 20)) == [
        (0, data[0:40]),
        (5, data[40:72]),
        (9, data[72:104]),
        (13, data[104:136]),
        (17, data[136:160]),
    ]
    assert list(index.chunks(5, 12)) == [(5, data[40:72]), (9, data[72:104])]
    assert list(index.chunks(5, 9)) == [(5, data[40:72])]
    assert list(index.chunks(5, 10)) == [(5, data[40:72]), (9, data[72:104])]
    assert list(index.chunks(4, 5)) == [(3, data[24:56])]
    assert list(index.chunks(12, 500)) == [(11, data[88:120]), (15, data[120:152]), (19, data[152:160])]
    assert list(index.chunks(19, 30)) == [(19, data[152:160])]


@pytest.mark.usefixtures("small")
def test_chunks_end_at_the_last_newline_indexed(tmp_path: Path) -> None:
    data = numbered(5) + b"partial"
    index = indexed(tmp_path / "a.log", data)
    assert list(index.chunks(0, 9)) == [(0, data[0:40])]  # not the partial line after it


@pytest.mark.usefixtures("small")
def test_chunks_backward_cover_the_lines_before_stop_last_first(tmp_path: Path) -> None:
    index = indexed(tmp_path / "a.log", numbered(20))
    data = numbered(20)
    assert list(index.chunks_backward(20)) == [
        (17, data[136:160]),
        (13, data[104:136]),
        (9, data[72:104]),
        (5, data[40:72]),
        (0, data[0:40]),
    ]
    assert list(index.chunks_backward(9)) == [(5, data[40:72]), (0, data[0:40])]
    assert list(index.chunks_backward(7)) == [(5, data[40:56]), (0, data[0:40])]
    assert list(index.chunks_backward(1)) == [(0, data[0:8])]
    assert list(index.chunks_backward(0)) == []
    assert list(index.chunks_backward(99)) == list(index.chunks_backward(20))


# -- giant lines --------------------------------------------------------------------------------------


def test_capped_names_the_size_and_what_is_left_out() -> None:
    assert (
        capped(b"head", 1_234_567, b"tail")
        == "head … [line of 1,234,567 bytes: 1,234,559 not shown] … tail".encode()
    )


@pytest.mark.usefixtures("small")
def test_a_line_up_to_the_cap_is_read_whole_and_a_longer_one_capped(tmp_path: Path) -> None:
    at_cap = bytes(range(65, 65 + 40))  # "ABC...": 40 bytes, the cap
    over = bytes(range(65, 65 + 41))
    index = indexed(tmp_path / "a.log", b"a\n" + at_cap + b"\n" + over + b"\nz\n")
    assert index.read(0, 4) == [b"a", at_cap, capped(over[:10], 41, over[-6:]), b"z"]
    assert (
        capped(over[:10], 41, over[-6:]) == "ABCDEFGHIJ … [line of 41 bytes: 25 not shown] … defghi".encode()
    )


@pytest.mark.usefixtures("small")
def test_a_giant_line_keeps_its_head_and_its_last_bytes(tmp_path: Path) -> None:
    giant = b"".join(b"%03d," % k for k in range(100))  # 400 bytes, read 16 at a time
    index = indexed(tmp_path / "a.log", b"before\n" + giant + b"\nafter\n")
    assert index.read(0, 3) == [b"before", capped(giant[:10], 400, giant[-6:]), b"after"]
    assert index.read(1, 2) == [capped(giant[:10], 400, giant[-6:])]


@pytest.mark.usefixtures("small")
def test_giant_lines_one_after_another_are_capped_each(tmp_path: Path) -> None:
    one = b"a" * 10 + b"b" * 100 + b"c" * 6
    two = b"d" * 10 + b"e" * 61 + b"f" * 6
    index = indexed(tmp_path / "a.log", one + b"\n" + two + b"\nend\n")
    assert index.read(0, 3) == [capped(b"a" * 10, 116, b"c" * 6), capped(b"d" * 10, 77, b"f" * 6), b"end"]


@pytest.mark.usefixtures("small")
def test_the_last_line_of_a_file_is_read_without_its_newline(tmp_path: Path) -> None:
    long_tail = bytes(range(65, 65 + 50))
    index = indexed(tmp_path / "a.log", b"one\n" + long_tail)
    assert index.read(0, 2) == [b"one", capped(long_tail[:10], 50, long_tail[-6:])]
    index = indexed(tmp_path / "b.log", b"one\ntwo")
    assert index.read(1, 2) == [b"two"]


@pytest.mark.usefixtures("small")
def test_chunks_read_a_giant_line_capped(tmp_path: Path) -> None:
    giant = b"G" * 10 + b"m" * 200 + b"T" * 6
    before = numbered(3)
    data = before + giant + b"\n" + numbered(12)
    index = indexed(tmp_path / "a.log", data)
    whole = [*lines_of(3), capped(b"G" * 10, 216, b"T" * 6), *lines_of(12)]
    assert index.read(0, 16) == whole
    chunks = list(index.chunks(0, 16))
    assert b"".join(data for _, data in chunks) == b"".join(line + b"\n" for line in whole)
    for first, chunk in chunks:  # each chunk knows the number of its first line
        assert chunk.split(b"\n")[:-1] == whole[first : first + chunk.count(b"\n")]
    assert [first for first, _ in chunks] == [0, 4, 8, 12]
    assert list(index.chunks(3, 4)) == [(3, capped(b"G" * 10, 216, b"T" * 6) + b"\n")]


@pytest.mark.usefixtures("small")
def test_chunks_of_capped_lines_stay_about_a_chunk_long(tmp_path: Path) -> None:
    giants = [bytes([65 + k]) * 50 for k in range(6)]  # each longer than the cap: read as 10 + note + 6 bytes
    data = b"".join(g + b"\n" for g in giants)
    index = indexed(tmp_path / "a.log", data)
    note = capped(b"", 50, b"")
    assert len(note) + 16 + 1 >= 2 * 16  # one capped line fills a chunk of two 16-byte blocks
    expected = [capped(g[:10], 50, g[-6:]) + b"\n" for g in giants]
    assert list(index.chunks(0, 6)) == [(k, line) for k, line in enumerate(expected)]
    assert list(index.chunks(0, 2)) == [(0, expected[0]), (1, expected[1])]


# -- NULs before a line -------------------------------------------------------------------------------


@pytest.mark.usefixtures("small")
def test_nuls_before_a_line_are_not_part_of_it_but_nuls_inside_are(tmp_path: Path) -> None:
    inside = b"a" * 14 + b"\0\0" + b"b"  # the NULs start the second read of the line
    data = (
        b"\0\0\0first\n\0\0second\n  indented\nXylophone\n"
        + inside
        + b"\n\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0end\n"
    )
    index = indexed(tmp_path / "a.log", data)
    assert index.read(0, 9) == [b"first", b"second", b"  indented", b"Xylophone", inside, b"end"]


@pytest.mark.usefixtures("small")
def test_a_chunk_of_up_to_two_chunks_of_bytes_is_read_raw(tmp_path: Path) -> None:
    wide = b"w" * 45  # over the cap of 40 that reading a line applies
    at_limit = wide + b"\n" + b"s" * 17 + b"\n"  # checkpoints at bytes 46 and 64: a span of exactly 64
    index = indexed(tmp_path / "a.log", at_limit + b"end\n")
    assert list(index.chunks(0, 2)) == [(0, at_limit)]
    over = wide + b"\n" + b"s" * 18 + b"\n"  # a span of 65: read line by line, capped
    index = indexed(tmp_path / "b.log", over + b"end\n")
    assert list(index.chunks(0, 2)) == [(0, capped(b"w" * 10, 45, b"w" * 6) + b"\n"), (1, b"s" * 18 + b"\n")]


@pytest.mark.usefixtures("small")
def test_a_giant_line_in_the_last_chunk_is_capped(tmp_path: Path) -> None:
    index = indexed(tmp_path / "a.log", b"a\nb\n" + b"g" * 200 + b"\n")
    assert list(index.chunks(0, 3)) == [(0, b"a\nb\n" + capped(b"g" * 10, 200, b"g" * 6) + b"\n")]


@pytest.mark.usefixtures("small")
def test_a_span_read_line_by_line_is_cut_into_chunks_of_about_a_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Three 16-byte blocks a chunk: 48 bytes; a span over 96 bytes between checkpoints is read line by line
    # (no line here is over the cap of 60), and cut after the line that brings a chunk to 48 bytes.
    monkeypatch.setattr(logindex, "CHUNK_BLOCKS", 3)
    monkeypatch.setattr(logindex, "LINE_CAP", 60)
    short = [b"ab"] * 4  # 12 bytes with their newlines, all in the first block
    exact = [*short, b"x" * 35, b"y" * 46, b"zz"]  # 12 + 36 = 48: cut; 47 then 3 more: cut at the end
    data = b"".join(line + b"\n" for line in exact)
    index = indexed(tmp_path / "a.log", data + b"end\n")
    assert list(index.chunks(0, 7)) == [(0, data[:48]), (5, data[48:])]
    under = [*short, b"x" * 34, b"y" * 39, b"z" * 9]  # 12 + 35 = 47: not yet; 47 + 40: cut
    data = b"".join(line + b"\n" for line in under)
    index = indexed(tmp_path / "b.log", data + b"end\n")
    assert list(index.chunks(0, 7)) == [(0, data[:87]), (6, data[87:])]


def test_nuls_before_a_line_inside_one_read_are_not_part_of_it(tmp_path: Path) -> None:
    data = b"one\n\0\0\0two\nXylophone\nfour\0\0\n\0\0\0\0\n  five\nsix\n"
    index = indexed(tmp_path / "a.log", data)
    assert index.read(0, 9) == [b"one", b"two", b"Xylophone", b"four\0\0", b"", b"  five", b"six"]
