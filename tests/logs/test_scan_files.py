"""The fast scan of a log file: read in blocks (the walker) or mapped in windows (the C pass), lines longer
than a block or than the cap, a copytruncate's NUL hole, a last line without a newline, a file that
shrinks under the scan, and the two processes of a large file.

The block, window and cap sizes are the module's own settings, made small here so that the files stay
small."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gdnconsole.logs import scan as logscan
from gdnconsole.logs.lineindex import capped

D = "[2026-11-30 10:00:00 TP0] Decode batch, #running-req: 1, gen throughput (token/s): 9.00"
P = "[2026-11-30 10:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0"
A = '[2026-11-30 10:00:00] INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
OTHER = "[2026-11-30 10:00:00] The server is fired up and ready to roll!"


@pytest.fixture(params=["c", "python"])
def scanner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test twice: with the C scanner (when it was built) and with the pure-Python one."""
    if request.param == "python":
        monkeypatch.setattr(logscan, "FAST_SCAN", None)
    elif logscan.FAST_SCAN is None:
        pytest.skip("the C scanner was not built")
    return str(request.param)


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 64 bytes, windows of 4 KiB (one mmap granule), reads of 50 bytes, lines capped at 300
    bytes shown as their first 10 and last 6."""
    for name, value in [
        ("CHUNK", 64),
        ("WINDOW", 4096),
        ("READ", 50),
        ("LINE_CAP", 300),
        ("LONG_HEAD", 10),
        ("LONG_TAIL", 6),
    ]:
        monkeypatch.setattr(logscan, name, value)


def write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def text(lines: list[str], end: str = "\n") -> bytes:
    return ("\n".join(lines) + end).encode()


def numbers(result: logscan.ScanResult) -> list[int]:
    return [n for n, _ in result.records]


def assert_true_lines(result: logscan.ScanResult, lines: list[str]) -> None:
    """Each record is the line of its number, whole, in file order; every line of no run is kept."""
    assert result.lines == len(lines)
    for number, raw in result.records:
        assert raw == lines[number - 1].encode()
    assert numbers(result) == sorted(set(numbers(result)))
    others = [n for n, line in enumerate(lines, 1) if line not in (D, P, A)]
    assert set(others) <= set(numbers(result))


def test_a_last_batch_line_without_a_newline_ends_its_run(tmp_path: Path, scanner: str) -> None:
    result = logscan.scan(write(tmp_path / "x.log", text([D] * 4, end="")), parallel=False)
    assert (result.lines, numbers(result)) == (4, [1, 2, 4])
    assert result.records[-1][1] == D.encode()


def test_a_last_line_without_a_newline_is_read_whole(tmp_path: Path, scanner: str) -> None:
    result = logscan.scan(write(tmp_path / "x.log", text([OTHER, "[x] last words"], end="")), parallel=False)
    assert (result.lines, result.records) == (2, [(1, OTHER.encode()), (2, b"[x] last words")])


def test_lines_across_many_blocks_are_numbered_and_read_whole(
    tmp_path: Path, scanner: str, small: None
) -> None:
    lines = ([OTHER, D, D, D, P, A, A, A, D, "x" * 150] * 20)[:-1]
    result = logscan.scan(write(tmp_path / "x.log", text(lines, end="")), parallel=False)
    assert_true_lines(result, lines)
    assert result.records[-1] == (199, D.encode())


def test_runs_across_blocks_keep_few_lines(tmp_path: Path, scanner: str, small: None) -> None:
    lines = [OTHER] + [D] * 300 + [OTHER]
    result = logscan.scan(write(tmp_path / "x.log", text(lines)), parallel=False)
    assert_true_lines(result, lines)
    # the C pass keeps a run's ends per 4 KiB window; the walker each 64-byte block's lines: a block here
    # is one 88-byte line, so it keeps all
    expected = {"c": [1, 2, 3, 46, 47, 48, 92, 93, 94, 138, 139, 140, 184, 185, 186, 230, 231, 232, 276]}
    expected["c"] += [277, 278, 301, 302]
    assert numbers(result) == expected.get(scanner, list(range(1, 303)))


def test_the_walker_reads_blocks_of_the_size_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logscan, "FAST_SCAN", None)
    monkeypatch.setattr(logscan, "CHUNK", 1000)  # 11 lines of 88 bytes a block, a last one of 4
    lines = [OTHER] + [D] * 48
    result = logscan.scan(write(tmp_path / "x.log", text(lines)), parallel=False)
    assert_true_lines(result, lines)
    assert numbers(result) == [1, 2, 3, 11, 12, 13, 23, 24, 25, 34, 35, 36, 45, 46, 47, 49]


def test_a_line_longer_than_the_cap_is_kept_as_its_head_and_tail(
    tmp_path: Path, scanner: str, small: None
) -> None:
    long = b"head" + b"m" * 992 + b"tail"
    path = write(tmp_path / "x.log", OTHER.encode() + b"\n" + long + b"\n" + D.encode() + b"\n")
    result = logscan.scan(path, parallel=False)
    shown = b"headmmmmmm \xe2\x80\xa6 [line of 1,000 bytes: 984 not shown] \xe2\x80\xa6 mmtail"
    assert shown == capped(long[:10], 1000, long[-6:])
    assert (result.lines, result.records) == (3, [(1, OTHER.encode()), (2, shown), (3, D.encode())])


def test_a_line_of_exactly_the_cap_is_kept_whole(tmp_path: Path, scanner: str, small: None) -> None:
    exact, over = b"e" * 300, b"o" * 301
    path = write(tmp_path / "x.log", exact + b"\n" + over + b"\n" + exact)
    result = logscan.scan(path, parallel=False)
    assert result.records == [
        (1, exact),
        (2, b"oooooooooo \xe2\x80\xa6 [line of 301 bytes: 285 not shown] \xe2\x80\xa6 oooooo"),
        (3, exact),
    ]


def test_a_line_longer_than_a_window_is_read_from_the_file(tmp_path: Path, scanner: str, small: None) -> None:
    long = b"[2026-11-30 10:00:01] " + b"w" * 9000 + b"END"
    lines = [D, D, D]
    path = write(tmp_path / "x.log", text(lines) + long + b"\n" + text([OTHER, D, D]))
    result = logscan.scan(path, parallel=False)
    assert result.lines == 7
    assert numbers(result) == [1, 2, 3, 4, 5, 6, 7]
    assert result.records[3][1] == capped(long[:10], len(long), long[-6:])


def test_a_long_line_under_the_cap_is_read_whole_past_a_window(
    tmp_path: Path, scanner: str, small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logscan, "LINE_CAP", 20_000)
    long = b"[2026-11-30 10:00:01] " + b"w" * 9000 + b"END"
    path = write(tmp_path / "x.log", long + b"\n" + text([OTHER]))
    result = logscan.scan(path, parallel=False)
    assert result.records == [(1, long), (2, OTHER.encode())]


def test_a_long_last_line_without_a_newline_ends_the_file(tmp_path: Path, scanner: str, small: None) -> None:
    long = b"L" * 4990 + b"LAST!"
    result = logscan.scan(write(tmp_path / "x.log", text([OTHER]) + long), parallel=False)
    assert result.lines == 2
    assert result.records == [(1, OTHER.encode()), (2, capped(long[:10], 4995, long[-6:]))]


def test_a_copytruncate_nul_hole_before_the_text_is_not_part_of_its_first_line(
    tmp_path: Path, scanner: str, small: None
) -> None:
    hole = b"\0" * 100
    result = logscan.scan(write(tmp_path / "x.log", hole + text([OTHER, D])), parallel=False)
    assert (result.lines, result.records) == (2, [(1, OTHER.encode()), (2, D.encode())])


@pytest.mark.parametrize("hole", [5000, 9000])
def test_a_nul_hole_longer_than_a_window_is_skipped(
    tmp_path: Path, scanner: str, small: None, hole: int
) -> None:
    result = logscan.scan(write(tmp_path / "x.log", b"\0" * hole + text([OTHER, D, OTHER])), parallel=False)
    assert (result.lines, result.records) == (3, [(1, OTHER.encode()), (2, D.encode()), (3, OTHER.encode())])


def test_a_nul_hole_before_a_long_first_line_is_skipped(tmp_path: Path, scanner: str, small: None) -> None:
    long = b"[2026-11-30 10:00:01] " + b"v" * 5000 + b"!"
    result = logscan.scan(
        write(tmp_path / "x.log", b"\0" * 5000 + long + b"\n" + text([OTHER])), parallel=False
    )
    assert result.records == [(1, capped(long[:10], len(long), long[-6:])), (2, OTHER.encode())]


def test_a_file_that_shrinks_under_the_scan_ends_at_its_end(
    tmp_path: Path, scanner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "x.log", text([OTHER, D, D, D, D, OTHER]))
    size = path.stat().st_size
    monkeypatch.setattr(logscan, "check_readable", lambda p: size + 500)  # it was larger when measured
    result = logscan.scan(path, parallel=False)
    assert (result.lines, numbers(result)) == (6, [1, 2, 3, 5, 6])


def test_a_file_that_grows_under_the_scan_is_read_to_the_size_measured(
    tmp_path: Path, scanner: str, small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # measured when its last line was still a NUL hole (a copytruncate's): what was written after it is not
    # read, not even to find where that line ends
    path = write(tmp_path / "x.log", text([OTHER]) + b"\0" * 5020 + b"written later\n")
    size = len(OTHER) + 1 + 5010  # inside the hole
    monkeypatch.setattr(logscan, "check_readable", lambda p: size)
    result = logscan.scan(path, parallel=False)
    assert (result.lines, result.records) == (2, [(1, OTHER.encode()), (2, b"")])


def test_a_block_of_many_lines_longer_than_the_cap_is_read_as_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logscan, "FAST_SCAN", None)
    monkeypatch.setattr(logscan, "LINE_CAP", 300)  # a line is capped at 300 bytes, a block of lines is not
    lines = [OTHER, D, D, D, D, OTHER, A, A, OTHER]
    result = logscan.scan(write(tmp_path / "x.log", text(lines)), parallel=False)
    assert_true_lines(result, lines)
    assert numbers(result) == [1, 2, 3, 5, 6, 7, 8, 9]


def test_only_a_line_longer_than_the_cap_is_read_apart_from_its_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logscan, "FAST_SCAN", None)
    for name, value in [("CHUNK", 1000), ("LINE_CAP", 1000), ("LONG_HEAD", 10), ("LONG_TAIL", 6)]:
        monkeypatch.setattr(logscan, name, value)
    # a first line that fills the first block exactly (the cap) but not more: read on with the lines after
    # it, one run 1..11 in the second block
    long = D + "y" * (1100 - len(D))
    result = logscan.scan(write(tmp_path / "x.log", text([long] + [D] * 20)), parallel=False)
    assert numbers(result) == [1, 2, 11, 12, 13, 21]
    # a line past the cap is read apart, by its ends: the next block starts at line 2, its run too
    giant = D + "y" * (5000 - len(D))
    result = logscan.scan(write(tmp_path / "y.log", text([giant] + [D] * 20)), parallel=False)
    assert numbers(result) == [1, 2, 3, 12, 13, 14, 21]
    assert result.records[0][1] == capped(giant.encode()[:10], 5000, giant.encode()[-6:])


def test_an_empty_file_has_no_lines(tmp_path: Path, scanner: str) -> None:
    assert logscan.scan(write(tmp_path / "x.log", b""), parallel=False) == logscan.ScanResult(0, [])
    assert logscan.scan(write(tmp_path / "y.log", b"\n"), parallel=False) == logscan.ScanResult(1, [(1, b"")])


# -- two processes: the halves of a large file, numbered as one


def parallel_lines() -> list[str]:
    return [OTHER] + [D] * 60 + [OTHER]


def test_two_processes_number_the_second_half_after_the_first(tmp_path: Path, scanner: str) -> None:
    lines = parallel_lines()
    path = write(tmp_path / "x.log", text(lines))
    result = logscan.scan(path, parallel=True)
    assert_true_lines(result, lines)
    # the middle byte (2704 of 5408) is in line 32: the second half starts at line 33, with a run of its own
    assert numbers(result) == [1, 2, 3, 32, 33, 34, 61, 62]
    assert numbers(logscan.scan(path, parallel=False)) == [1, 2, 3, 61, 62]


def test_a_middle_byte_that_is_a_newline_splits_after_it(tmp_path: Path, scanner: str) -> None:
    path = write(tmp_path / "x.log", text(["z"] + [D] * 20))  # 1762 bytes: byte 881 ends line 11
    assert path.read_bytes()[881] == ord("\n")
    result = logscan.scan(path, parallel=True)
    assert result.lines == 21
    assert numbers(result) == [1, 2, 3, 11, 12, 13, 21]  # the second process starts at line 12
    assert numbers(logscan.scan(path, parallel=False)) == [1, 2, 3, 21]


def test_a_middle_without_a_newline_after_it_leaves_the_second_process_nothing(
    tmp_path: Path, scanner: str, small: None
) -> None:
    long = b"[2026-11-30 10:00:01] " + b"n" * (1 << 20) + b"!"  # no newline in the 1 MiB after the middle
    path = write(tmp_path / "x.log", text([OTHER, D, D, D]) + long)
    result = logscan.scan(path, parallel=True)
    assert result.lines == 5
    assert numbers(result) == [1, 2, 3, 4, 5]
    assert result.records[-1][1] == capped(long[:10], len(long), long[-6:])


def test_a_file_this_large_is_scanned_by_two_processes_on_a_multicore_machine(
    tmp_path: Path, scanner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "x.log", text(parallel_lines()))
    two = numbers(logscan.scan(path, parallel=True))
    one = numbers(logscan.scan(path, parallel=False))
    assert two != one  # the second process starts a run of its own
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(logscan, "PARALLEL_MIN", path.stat().st_size)
    assert numbers(logscan.scan(path)) == two
    monkeypatch.setattr(logscan, "PARALLEL_MIN", path.stat().st_size + 1)
    assert numbers(logscan.scan(path)) == one


@pytest.mark.parametrize("cpus", [1, None])
def test_a_single_core_machine_scans_in_one_process(
    tmp_path: Path, scanner: str, monkeypatch: pytest.MonkeyPatch, cpus: int | None
) -> None:
    path = write(tmp_path / "x.log", text(parallel_lines()))
    one = numbers(logscan.scan(path, parallel=False))
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    monkeypatch.setattr(logscan, "PARALLEL_MIN", 1)
    assert numbers(logscan.scan(path)) == one


def test_a_giant_first_line_is_read_from_its_first_byte_to_its_newline(
    tmp_path: Path, scanner: str, small: None
) -> None:
    # 5000 bytes: more than a window; its newline is the first byte of a 50-byte read
    long = b"[2026-11-30 10:00:01] " + b"g" * 4977 + b"!"
    result = logscan.scan(write(tmp_path / "x.log", long + b"\n" + text([OTHER, D])), parallel=False)
    assert result.records == [(1, capped(long[:10], 5000, long[-6:])), (2, OTHER.encode()), (3, D.encode())]


def test_a_giant_line_of_nul_bytes_only_is_an_empty_line(tmp_path: Path, scanner: str, small: None) -> None:
    result = logscan.scan(
        write(tmp_path / "x.log", text([OTHER]) + b"\0" * 5000 + b"\n" + text([D])), parallel=False
    )
    assert result.records == [(1, OTHER.encode()), (2, b""), (3, D.encode())]


def test_a_nul_hole_that_ends_inside_a_read_is_skipped_to_the_byte(
    tmp_path: Path, scanner: str, small: None
) -> None:
    long = b"[2026-11-30 10:00:01] " + b"v" * 5000 + b"!"
    result = logscan.scan(
        write(tmp_path / "x.log", b"\0" * 5020 + long + b"\n" + text([OTHER])), parallel=False
    )
    assert result.records == [(1, capped(long[:10], len(long), long[-6:])), (2, OTHER.encode())]


def test_a_line_past_a_window_of_exactly_the_cap_is_kept_whole(
    tmp_path: Path, scanner: str, small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = b"[2026-11-30 10:00:01] " + b"w" * 9000 + b"END"
    monkeypatch.setattr(logscan, "LINE_CAP", len(long))
    result = logscan.scan(write(tmp_path / "x.log", text([OTHER]) + long + b"\n" + text([D])), parallel=False)
    assert result.records == [(1, OTHER.encode()), (2, long), (3, D.encode())]


def test_small_blocks_are_read_up_to_the_end_of_each_half(
    tmp_path: Path, scanner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logscan, "CHUNK", 1000)
    lines = parallel_lines()
    path = write(tmp_path / "x.log", text(lines))
    assert_true_lines(logscan.scan(path, parallel=False), lines)
    result = logscan.scan(path, parallel=True)
    assert_true_lines(result, lines)
    assert numbers(result)[-2:] == [61, 62]


def test_the_split_looks_for_a_newline_in_the_mebibyte_after_the_middle_only(
    tmp_path: Path, scanner: str
) -> None:
    if scanner == "python":
        pytest.skip("the walker halves this run at the long line whether the file is split there or not")
    # a 3 MiB Decode line: its newline lies 1.5 MiB after the middle, too far: the file is not split
    # (a split after it would start a run of its own at line 3, keeping line 3)
    huge = D + "x" * (3 << 20)
    lines = [D, huge, D, D]
    path = write(tmp_path / "x.log", text(lines))
    result = logscan.scan(path, parallel=True)
    assert (result.lines, numbers(result)) == (4, [1, 2, 4])
