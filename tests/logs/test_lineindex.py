"""The line index of a large, growing file, and the document the log view reads through it."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from gdnconsole.logs import lineindex as logindex
from gdnconsole.logs.document import FilterSpec, LogDocument
from gdnconsole.logs.lineindex import LineIndex
from gdnconsole.sglang.stages import Severity, Stage
from tests.ui.fixtures import ct129_lines, write_log


@pytest.fixture
def lines() -> list[str]:
    rng = random.Random(1)
    return [("x" * rng.choice([0, 1, 5, 80, 200, 70_000])) + str(i) for i in range(3000)]


def test_read_any_range(tmp_path: Path, lines: list[str]) -> None:
    index = LineIndex(write_log(tmp_path / "a.log", lines))
    index.update()
    assert index.line_count == 3000
    assert len(index._lines) > 100  # one checkpoint per 64 KiB block, not per line
    for start in (0, 1, 10, 777, 2990, 2999):
        assert [r.decode() for r in index.read(start, start + 7)] == lines[start : start + 7]
    picked = index.read_many([3, 4, 5, 900, 2000])
    assert {n: r.decode() for n, r in picked.items()} == {n: lines[n] for n in (3, 4, 5, 900, 2000)}
    assert [r.decode() for r in index.tail(2)] == lines[-2:]


def test_chunks_forward_and_backward(tmp_path: Path, lines: list[str]) -> None:
    index = LineIndex(write_log(tmp_path / "a.log", lines))
    index.update()
    forward: list[str] = []
    first_line = None
    for first, data in index.chunks(100, 3000):
        first_line = first if first_line is None else first_line
        forward += data.decode().split("\n")[:-1]
    assert first_line is not None and forward == lines[first_line:]
    backward: list[str] = []
    for _, data in index.chunks_backward(2500):
        backward = data.decode().split("\n")[:-1] + backward
    assert backward == lines[:2500]


def test_growth_partial_line_truncation_and_replacement(tmp_path: Path) -> None:
    path = write_log(tmp_path / "a.log", ["one", "two"])
    index = LineIndex(path)
    assert index.update().added == 2
    with path.open("a") as fh:
        fh.write("three\nfo")
    growth = index.update()
    assert (growth.reset, growth.added, index.line_count) == (False, 1, 4)
    assert index.read(3, 4) == [b"fo"]
    with path.open("a") as fh:
        fh.write("ur\n")
    index.update()
    assert index.read(2, 5) == [b"three", b"four"]
    path.write_text("new\n")  # same inode, shorter: truncated
    growth = index.update()
    assert growth.reset and index.read(0, 9) == [b"new"]
    other = write_log(tmp_path / "b.log", ["x"] * 10)
    os.replace(other, path)  # a new file under the same name, longer than the old one
    growth = index.update()
    assert growth.reset and growth.after == 10


def test_missing_file_while_relaunching(tmp_path: Path) -> None:
    path = write_log(tmp_path / "a.log", ["one"])
    index = LineIndex(path)
    index.update()
    path.unlink()
    assert index.update().added == 0


def test_block_size_does_not_change_results(
    tmp_path: Path, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logindex, "BLOCK", 1024)
    index = LineIndex(write_log(tmp_path / "a.log", lines))
    index.update()
    assert [r.decode() for r in index.read(1500, 1510)] == lines[1500:1510]


def test_document_meaning_folds_filter_search(tmp_path: Path) -> None:
    doc = LogDocument(write_log(tmp_path / "ct129.log", ct129_lines()))
    doc.build_index()
    assert doc.scan()
    folds = doc.folds()
    assert [(f.first, f.last, f.summary) for f in folds] == [(2, 7, 2), (48, 53, 48), (70, 79, 75)]
    assert folds[2].severity is Severity.FATAL
    infos = {i.number: i for i in doc.read(range(81))}
    assert infos[8].rank == "TP0" and infos[8].body == "[2026-11-30 09:00:02] Init torch distributed begin."
    assert infos[71].severity is Severity.FATAL and infos[71].stage is Stage.GRAPHS  # a traceback frame
    assert infos[31].stage is Stage.WARMUP and infos[35].stage is Stage.SERVING  # by context
    assert doc.first_error() == 75
    assert list(doc.filter(FilterSpec(regex="Decode"))) == [35, 37, 39, 41, 43, 45]
    assert list(doc.filter(FilterSpec(ranks=frozenset({"TP1"}), stages=frozenset({Stage.LOADED})))) == [
        16,
        62,
    ]
    assert doc.search("Capture cuda graph end", 0) == 24
    assert doc.search("Capture cuda graph end", 24, backward=True) is None
    assert doc.search("Memory pool", 64, backward=True) == 20
    assert doc.search("nothing like this", 0) is None


def test_batch_lines_skipped_by_the_scan_take_their_context(tmp_path: Path) -> None:
    decode = "[2026-11-30 09:00:{:02d} TP0] Decode batch, #running-req: 1, gen throughput (token/s): 40.00"
    lines = ct129_lines()[:46] + [decode.format(k % 60) for k in range(5000)]
    doc = LogDocument(write_log(tmp_path / "long.log", lines))
    doc.build_index()
    doc.scan()
    (middle,) = doc.read([2500])
    assert middle.stage is Stage.SERVING and middle.rank == "TP0"
    # The filter's fast path for skipped batch lines agrees with classifying every line.
    infos = doc.read(range(len(lines)))
    for spec in (
        FilterSpec(ranks=frozenset({"TP0"})),
        FilterSpec(stages=frozenset({Stage.SERVING, Stage.WARMUP}), ranks=frozenset({"main", "TP1"})),
        FilterSpec(severities=frozenset({Severity.INFO}), regex="batch"),
        FilterSpec(severities=frozenset({Severity.WARNING})),
    ):
        filtered = doc.filter(spec)
        assert filtered is not None
        expected = [i.number for i in infos if spec.allows(i) and (not spec.regex or spec.regex in i.raw)]
        assert list(filtered) == expected, spec


def test_following_document_feeds_the_tracker_and_restarts(tmp_path: Path) -> None:
    path = write_log(tmp_path / "f.log", ct129_lines()[:20])
    doc = LogDocument(path)
    doc.build_index()
    doc.scan()
    with path.open("a") as fh:
        fh.write("\n".join(ct129_lines()[20:]) + "\n")
    doc.poll()
    assert doc.fed == 81 and len(doc.tracker.startups) == 2 and doc.first_error() == 75
    write_log(path, ct129_lines()[:5])
    growth = doc.poll()
    assert growth.reset and doc.fed == 5 and len(doc.tracker.startups) == 1 and doc.first_error() is None


# -- rotations, as tail -F meets them, and giant lines -------------------------------------------------


def test_copytruncate_then_more_than_the_old_file_held_restarts_at_byte_zero(tmp_path: Path) -> None:
    path = write_log(tmp_path / "a.log", [f"old {i}" for i in range(13)])
    index = LineIndex(path)
    index.update()
    with path.open("r+b") as fh:  # copytruncate, then the writer goes on before the next look
        fh.truncate(0)
        fh.write("".join(f"new {i}\n" for i in range(14, 22)).encode() * 2)
    growth = index.update()
    assert (growth.reset, growth.reason) == (True, "truncated")
    assert [r.decode() for r in index.read(0, 3)] == ["new 14", "new 15", "new 16"]


def test_a_renamed_log_is_read_to_its_end_before_the_new_file(tmp_path: Path) -> None:
    path = write_log(tmp_path / "a.log", ["one", "two"])
    index = LineIndex(path)
    index.update()
    with path.open("ab") as writer:  # the server's redirect: it keeps writing to the file it opened
        path.rename(tmp_path / "a.log.1")
        path.write_bytes(b"")  # logrotate's `create`
        writer.write(b"three\n")
        writer.flush()
        growth = index.update()
        assert (growth.reset, growth.added) == (False, 1)  # the new file is empty: the old one goes on
        writer.write(b"four\n")
        writer.flush()
        assert index.update().added == 1
        assert [r.decode() for r in index.read(0, 9)] == ["one", "two", "three", "four"]
    path.write_bytes(b"fresh\n")  # someone writes to the new file: move on, once the old one is read
    growth = index.update()
    assert (growth.reset, growth.reason) == (True, "replaced")
    assert index.read(0, 9) == [b"fresh"]


def test_a_deleted_log_is_followed_until_another_file_appears(tmp_path: Path) -> None:
    path = write_log(tmp_path / "a.log", ["one"])
    index = LineIndex(path)
    index.update()
    with path.open("ab") as writer:
        path.unlink()
        writer.write(b"two\n")
        writer.flush()
        assert index.update().added == 1
        assert index.read(0, 9) == [b"one", b"two"]
    path.write_bytes(b"again\n")
    assert index.update().reason == "replaced"
    assert index.read(0, 9) == [b"again"]


def test_a_giant_line_is_read_as_its_head_and_tail_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    size = 2 * logindex.CHUNK_BLOCKS * logindex.BLOCK + 5  # more than a chunk: chunks cap it too
    with path.open("wb") as fh:
        fh.write(b"before\n" + b"H" * logindex.LONG_HEAD + b"m" * (size - logindex.LONG_HEAD - 4) + b"TAIL")
        fh.write(b"\nafter\n")
    index = LineIndex(path)
    index.update()
    before, giant, after = index.read(0, 3)
    assert (before, after) == (b"before", b"after")
    assert len(giant) < logindex.LONG_HEAD + logindex.LONG_TAIL + 100
    assert giant.startswith(b"H" * logindex.LONG_HEAD) and giant.endswith(b"mTAIL")
    assert f"line of {size:,} bytes".encode() in giant
    chunked = b"".join(data for _, data in index.chunks(0, 3))
    assert chunked.split(b"\n")[:-1] == [before, giant, after]
