"""A followed log that grows faster than it is read: each poll reads a bounded amount, feeds the tracker
through the fast scan, and skips a backlog too large to read for its meaning, saying how much."""

from __future__ import annotations

from pathlib import Path

import pytest

from gdnconsole.logs import document
from gdnconsole.logs.document import LogDocument, Skipped
from gdnconsole.logs.lineindex import BLOCK, LineIndex
from gdnconsole.sglang.stages import Severity
from tests.logs.test_document_follow import CRASH, DECODE, LOAD, append, scanned

PROBLEMS = frozenset({Severity.WARNING, Severity.ERROR, Severity.FATAL})


def decode_lines(count: int) -> list[str]:
    return [DECODE.format(n % 60) for n in range(count)]


def test_a_poll_reads_at_most_poll_bytes_and_the_next_one_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(document, "POLL_BYTES", 64 << 10)
    log = tmp_path / "serve.log"
    doc = scanned(log, [LOAD])
    append(log, decode_lines(5000))  # about 400 KiB
    size = log.stat().st_size
    first = doc.poll()
    assert doc.index.size == (64 << 10) + len(LOAD) + 1 and first.behind == size - doc.index.size
    polls = 1
    while doc.poll().behind:
        polls += 1
    assert polls == size // (64 << 10)  # the last poll read the rest and said nothing is behind
    assert doc.index.complete == doc.fed == 5001


def test_a_cancelled_poll_reads_nothing_more(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    doc = scanned(log, [LOAD])
    append(log, decode_lines(100))
    growth = doc.poll(lambda: True)
    assert growth.added == 0 and growth.behind > 0 and doc.fed == 1


def test_lines_fed_from_the_middle_of_a_chunk_keep_their_numbers(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    doc = scanned(log, [LOAD, *decode_lines(2000)])
    append(log, [*decode_lines(10), *CRASH])
    doc.poll()
    assert doc.fed == 2011 + len(CRASH)
    assert doc.meaning.seen_with(0, doc.fed, PROBLEMS)[0] == 2011  # the crash's first line, at its number


def test_a_backlog_past_skip_bytes_is_skipped_but_for_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(document, "SKIP_BYTES", 256 << 10)
    monkeypatch.setattr(document, "SKIP_KEEP", 32 << 10)
    log = tmp_path / "serve.log"
    doc = scanned(log, [LOAD])
    append(log, [*CRASH, *decode_lines(12_000), *CRASH])  # about 1 MiB; a crash at each end
    doc.poll()
    [skipped] = doc.take_skipped()
    assert doc.take_skipped() == []  # told once
    index: LineIndex = doc.index
    line, offset = index.checkpoint_at(index.end - (32 << 10))
    assert skipped == Skipped(1, line, offset)  # from the checkpoint before the first line skipped
    end = 1 + 2 * len(CRASH) + 12_000
    assert skipped.lines == line - 1 and end - 1500 < line < end - len(
        CRASH
    )  # within a block and SKIP_KEEP of it
    assert doc.fed == index.complete == end
    seen = doc.meaning.seen_with(0, index.complete, PROBLEMS)
    assert seen and min(seen) > line  # the first crash was skipped unread, the last one was read
    assert skipped.news() == (
        f"skipped {skipped.size / 2**20:,.1f} MB ({skipped.lines:,} lines) to keep up with the log: "
        "they are not read for stages or errors (scroll up to see them)"
    )


def test_a_backlog_of_exactly_skip_bytes_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "serve.log"
    doc = scanned(log, [LOAD])
    append(log, [*CRASH, *decode_lines(3000)])
    monkeypatch.setattr(document, "SKIP_BYTES", log.stat().st_size)  # counted from the checkpoint at 0
    doc.poll()
    assert doc.take_skipped() == []
    assert doc.meaning.seen_with(0, doc.fed, PROBLEMS)[0] == 1


def test_checkpoint_at_finds_the_last_checkpoint_at_or_before_a_byte(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_text("".join(f"{n:07d}\n" for n in range(20_000)))  # 8 bytes a line
    index = LineIndex(log)
    index.update()
    assert index.checkpoint_at(0) == (0, 0)
    assert index.checkpoint_at(BLOCK + 7) == (0, 0)  # a block's checkpoint: the line after its first newline
    assert index.checkpoint_at(BLOCK + 8) == (BLOCK // 8 + 1, BLOCK + 8)
    assert index.checkpoint_at(10 * BLOCK) == index.checkpoint(10**9)
    assert LogDocument(log).poll().behind == 0
