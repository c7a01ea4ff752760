"""Which lines of a log the fast scan keeps: every line that is not a batch or access line, and of each run
of those its first line, first Prefill, first and last Decode, last line, and each rank's first batch line.

Each test runs with the C pass (when it was built) and with the pure-Python walker; they keep the same
lines here. The walker's block halving is driven with small blocks (``LEAF``), which the module lets a
caller set."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdnconsole.logs import scan as logscan
from gdnconsole.sglang.summary import summary, track

D = "[2026-11-30 10:00:00 TP0] Decode batch, #running-req: 1, gen throughput (token/s): 9.00"
P = "[2026-11-30 10:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0"
A = '[2026-11-30 10:00:00] INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
OTHER = "[2026-11-30 10:00:00] The server is fired up and ready to roll!"
D1 = D.replace(" TP0]", " DP1 TP1]")  # another rank's batch line (DP)
M = D.replace(" TP0]", "]")  # the main process's batch line: no rank prefix
WRAPPED = "sglang-1  | " + D  # a docker-compose prefix: not a batch line to the C pass


@pytest.fixture(params=["c", "python"])
def scanner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test twice: with the C scanner (when it was built) and with the pure-Python one."""
    if request.param == "python":
        monkeypatch.setattr(logscan, "FAST_SCAN", None)
    elif logscan.FAST_SCAN is None:
        pytest.skip("the C scanner was not built")
    return str(request.param)


@pytest.fixture
def walker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure-Python walker only."""
    monkeypatch.setattr(logscan, "FAST_SCAN", None)


def data(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def kept(lines: list[str], first_line: int = 1) -> list[int]:
    """The numbers of the lines scan_buffer keeps, after checking each record is that line, whole."""
    count, records, _ = logscan.scan_buffer(data(lines), first_line)
    assert count == len(lines)
    for number, raw in records:
        assert raw == lines[number - first_line].encode()
    numbers = [n for n, _ in records]
    assert numbers == sorted(set(numbers))  # in file order, each once
    return numbers


def test_every_line_that_is_not_a_batch_or_access_line_is_kept(scanner: str) -> None:
    lines = [OTHER, "Traceback (most recent call last):", "", "x" * 500, "[2026-11-30 10:00:00 TP0] Decode"]
    assert kept(lines) == [1, 2, 3, 4, 5]


def test_a_run_keeps_its_first_line_first_prefill_first_and_last_decode_and_last_line(scanner: str) -> None:
    lines = [OTHER, P, D, D, A, D, P, D, A, OTHER]
    # run 2..9: 2 its first line, 3 its first Decode after it, 7 its first Prefill after it, 8 its last
    # Decode, 9 its last line; 4, 5 and 6 say nothing those do not
    assert kept(lines) == [1, 2, 3, 7, 8, 9, 10]


def test_the_kept_lines_of_a_run_come_in_file_order(scanner: str) -> None:
    assert kept([D, D, D, D, P, A, A]) == [1, 2, 4, 5, 7]
    assert kept([D, A, P, P, D, D, A]) == [1, 3, 5, 6, 7]


def test_a_run_of_one_line_or_two_lines_is_kept_whole(scanner: str) -> None:
    assert kept([OTHER, D, OTHER, A, A, OTHER]) == [1, 2, 3, 4, 5, 6]


def test_a_run_of_access_lines_keeps_its_first_and_last_line(scanner: str) -> None:
    assert kept([A, A, A, OTHER, A]) == [1, 3, 4, 5]
    assert kept([A] * 6) == [1, 6]


def test_a_run_of_decode_lines_keeps_its_first_two_and_its_last(scanner: str) -> None:
    assert kept([D] * 10) == [1, 2, 10]


def test_line_numbers_start_at_the_number_given(scanner: str) -> None:
    assert kept([OTHER, D, D, D, OTHER], first_line=41) == [41, 42, 43, 44, 45]
    assert kept([D, D, D, D, D], first_line=41) == [41, 42, 45]


def test_a_new_rank_inside_a_run_starts_a_run_of_its_own(scanner: str) -> None:
    # 3 is DP1's first batch line: the run 1..2 ends (2 kept as its last) and 3 starts one
    assert kept([D, D, D1, D, D1, D]) == [1, 2, 3, 4, 6]
    # the main process's rank (no prefix) is a rank too: TP0's first line, 2, starts a run
    assert kept([M, D, D, M, D]) == [1, 2, 3, 5]


def test_ranks_with_two_parts_are_told_apart(scanner: str) -> None:
    d3 = D.replace(" TP0]", " DP3 TP3]")
    assert kept([D1, D1, D1, d3, D1, D1]) == [1, 2, 3, 4, 5, 6]  # 4 is DP3's first: the run 1..3 ends there


def test_access_lines_have_no_rank(scanner: str) -> None:
    assert kept([A, D, D, D, A, A]) == [1, 2, 3, 4, 6]  # TP0 seen first at 2, inside the run
    assert kept([D, A, A, A, D]) == [1, 5]


def test_a_wrapped_batch_line_is_of_the_main_rank_to_the_walker(walker: None) -> None:
    # a batch line to the walker (it holds the batch needle) without a frame: the main process's rank
    assert kept([M, D, WRAPPED, D, D]) == [1, 2, 3, 5]
    assert kept([D, WRAPPED, D, D, D]) == [1, 2, 3, 5]  # a rank of its own in a run of TP0: starts one


def test_a_wrapped_batch_line_is_a_line_of_its_own_to_the_c_pass(scanner: str) -> None:
    if scanner == "python":
        pytest.skip("the walker counts the batch needle, wrapped or not")
    assert kept([M, D, WRAPPED, D, D]) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("decode", "needle"),
    [
        ("Decode batch, #running-req: 1, #token: 9", b"batch, #"),  # SGLang >= 0.5.5
        ("Decode batch [3], #running-req: 1, #token: 9", b"batch ["),  # 0.5.4
        ("Decode batch. #running-req: 1, #token: 9", b"batch. #"),  # <= 0.5.3
    ],
)
def test_the_walker_finds_the_batch_form_of_each_sglang_version(
    walker: None, decode: str, needle: bytes
) -> None:
    lines = [f"[2026-11-30 10:00:00 TP0] {decode}"] * 6
    count, records, found = logscan.scan_buffer(data(lines), 1)
    assert (count, [n for n, _ in records], found) == (6, [1, 2, 6], needle)


def test_the_batch_form_is_read_from_a_prefill_line_when_no_decode_line_has_one(walker: None) -> None:
    prefill = "[2026-11-30 10:00:00 TP0] Prefill batch. #new-seq: 1"
    odd = "[2026-11-30 10:00:00 TP0] Decode batch: none yet"  # a Decode batch line of no known form
    lines = [odd, prefill, prefill, prefill, prefill]
    _, records, needle = logscan.scan_buffer(data(lines), 1)
    assert needle == b"batch. #"
    assert [n for n, _ in records] == [1, 2, 3, 5]  # 1 is no batch line in that form
    assert logscan.scan_buffer(data([prefill] * 4), 1)[2] == b"batch. #"


def test_the_batch_form_is_read_from_the_first_decode_line(walker: None) -> None:
    odd = "[2026-11-30 10:00:00 TP0] Decode batch: none yet"
    assert logscan.scan_buffer(data([D, odd]), 1)[2] == b"batch, #"


def test_a_batch_form_at_the_very_start_of_the_text_is_found(walker: None) -> None:
    assert logscan.scan_buffer(b"Decode batch, #running-req: 1\n", 1)[2] == b"batch, #"
    assert logscan.scan_buffer(b"Prefill batch, #new-seq: 1\n", 1)[2] == b"batch, #"


def test_a_log_without_batch_lines_has_no_batch_form(walker: None) -> None:
    count, records, needle = logscan.scan_buffer(data([OTHER, A, A, A, OTHER]), 1)
    assert (count, [n for n, _ in records], needle) == (5, [1, 2, 4, 5], None)
    unknown = "[2026-11-30 10:00:00 TP0] Decode batch; x"
    assert logscan.scan_buffer(data([unknown] * 3), 1)[2] is None


def test_the_batch_form_given_is_used_and_handed_on(walker: None) -> None:
    lines = [OTHER] + ["[2026-11-30 10:00:00 TP0] Decode batch. #running-req: 1"] * 4
    count, records, needle = logscan.scan_buffer(data(lines), 7, b"batch. #")
    assert (count, [n for n, _ in records], needle) == (5, [7, 8, 9, 11], b"batch. #")
    # a later block of the same log keeps the form even when it holds no batch line to read it from
    assert logscan.scan_buffer(data([OTHER]), 12, b"batch. #")[2] == b"batch. #"


def test_the_c_pass_needs_no_batch_form(scanner: str) -> None:
    if scanner == "python":
        pytest.skip("the C pass only")
    count, records, needle = logscan.scan_buffer(data([D] * 5), 1)
    assert (count, [n for n, _ in records], needle) == (5, [1, 2, 5], None)


def test_an_empty_buffer_has_no_lines(scanner: str) -> None:
    assert logscan.scan_buffer(b"", 1)[:2] == (0, [])


# -- the walker's halving: a block of only batch/access lines of ranks seen already keeps just its ends


def walked(lines: list[str], monkeypatch: pytest.MonkeyPatch, leaf: int) -> list[int]:
    monkeypatch.setattr(logscan, "LEAF", leaf)
    return kept(lines)


def test_halved_blocks_of_known_ranks_keep_only_their_ends(
    walker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 88-byte lines, blocks of at most 400 bytes split into lines: the first block (1..3) is split, as
    # TP0 is not known yet; after it each block (4..5, 6..9, 10..17, 18..32) keeps its first two lines and
    # its last two (its last Decode before its last line, and its last line)
    assert walked([D] * 32, monkeypatch, 400) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 31, 32]
    # with one block for the whole buffer the walker keeps what the C pass keeps
    assert walked([D] * 32, monkeypatch, 32 * 88) == [1, 2, 32]


def test_halved_blocks_keep_the_first_prefill_and_decode_of_each(
    walker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [D] * 8 + [P] + [D] * 7 + [A] * 8 + [D] * 8
    assert walked(lines, monkeypatch, 400) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 25, 31, 32]


def test_a_block_with_another_line_is_halved_down_to_it(
    walker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [D] * 16 + [OTHER] + [D] * 15
    got = walked(lines, monkeypatch, 400)
    assert 17 in got and got[-2:] == [31, 32]
    assert got == [
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
        11,
        15,
        16,
        17,
        18,
        19,
        20,
        21,
        22,
        23,
        24,
        25,
        26,
        27,
        31,
        32,
    ]


def test_a_block_with_a_rank_not_seen_yet_is_halved_down_to_it(
    walker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = walked([D] * 16 + [D1] + [D] * 15, monkeypatch, 400)
    assert got == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 31, 32]


def test_a_block_with_a_prefill_line_of_a_rank_not_seen_yet_is_halved_down_to_it(
    walker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    p3 = P.replace(" TP0]", " DP3 TP3]")
    got = walked([D] * 16 + [p3] + [D] * 15, monkeypatch, 400)
    assert got == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 31, 32]


def test_a_halved_block_keeps_its_first_prefill_not_its_last(
    walker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # block 10..17 holds Prefill lines 12 and 14: 12 is kept
    got = walked([D] * 11 + [P, D, P] + [D] * 18, monkeypatch, 400)
    assert got == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 17, 18, 19, 31, 32]


def test_the_main_process_rank_is_known_like_any_other(walker: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # the same blocks as TP0's: once the main rank (no prefix) is seen, its blocks keep just their ends
    got = walked([M] * 32, monkeypatch, 400)
    assert got == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 31, 32]


def test_a_small_block_after_the_start_of_the_buffer_is_split_not_halved(
    walker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the buffer (852 bytes) is halved after the long line; the 352 bytes of Decode lines are split as
    # one run (halved further, each piece would keep its own ends: 4 too)
    assert walked(["x" * 500, D, D, D, D], monkeypatch, 400) == [1, 2, 3, 5]


def test_a_block_whose_last_line_is_most_of_it_is_split_into_lines(
    walker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert walked([D, D, "x" * 1000], monkeypatch, 100) == [1, 2, 3]
    assert walked([A, "y" * 1000], monkeypatch, 100) == [1, 2]


def batch_or_access(line: str) -> bool:
    return 'HTTP/1.1"' in line or "batch, #" in line


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([D, P, A, D1, M, OTHER, WRAPPED, "", "z" * 300]), min_size=1, max_size=40),
    st.sampled_from([64, 150, 400, 1000]),
)
def test_the_walker_with_any_block_size_keeps_what_tells_the_story(lines: list[str], leaf: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(logscan, "FAST_SCAN", None)
        patch.setattr(logscan, "LEAF", leaf)
        numbers = kept(lines)
        records = [(n, lines[n - 1].encode()) for n in numbers]
    for n, line in enumerate(lines, 1):
        run_end = n == len(lines) or not batch_or_access(lines[n])
        run_start = n == 1 or not batch_or_access(lines[n - 2])
        if not batch_or_access(line) or run_end or run_start:
            assert n in numbers
    full = [(n, line.encode()) for n, line in enumerate(lines, 1)]
    assert story(len(lines), records) == story(len(lines), full)


def story(count: int, records: list[tuple[int, bytes]]) -> dict[str, object]:
    return summary(track(logscan.decoded(records)), file="x", lines=count)


def test_a_block_cut_inside_an_access_line_counts_only_its_whole_lines(
    tmp_path: Path, walker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # blocks of 21 access lines and the start of the 22nd, up to past its "HTTP/1.1": that part is
    # not counted, so each block of access lines only keeps its ends
    monkeypatch.setattr(logscan, "LEAF", 400)
    monkeypatch.setattr(logscan, "CHUNK", 21 * 93 + 90)
    path = tmp_path / "x.log"
    path.write_bytes(data([A] * 60))
    result = logscan.scan(path, parallel=False)
    assert (result.lines, [n for n, _ in result.records]) == (60, [1, 21, 22, 43, 44, 60])
