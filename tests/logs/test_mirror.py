"""The mirror document: a log written here as it is read from a host, parsed and indexed as it is written,
reads the same as the log view's document of the same file read whole."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.logs.document import LogDocument, MirrorDocument
from gdnconsole.logs.meaning import LogMeaning
from tests.ui.fixtures import ct129_lines, write_log


def chunks(lines: list[str], sizes: list[int]) -> list[bytes]:
    """The lines as the agent sends them: whole lines, in pieces of ``sizes`` lines (the last: the rest)."""
    out, at = [], 0
    for size in [*sizes, len(lines)]:
        piece = lines[at : at + size]
        if piece:
            out.append("".join(line + "\n" for line in piece).encode())
        at += size
    return out


def test_appended_chunks_read_as_the_whole_file_does(tmp_path: Path) -> None:
    lines = ct129_lines()
    mirror = MirrorDocument(tmp_path / "mirror" / "ct129.log")
    for data in chunks(lines, [1, 2, 7, 30, 3]):
        mirror.append(data)
    whole = LogDocument(write_log(tmp_path / "whole.log", lines))
    whole.build_index()
    assert whole.scan()

    assert mirror.path.read_text() == whole.path.read_text()
    assert mirror.index.line_count == mirror.fed == len(lines)
    assert mirror.folds() == whole.folds() and mirror.first_error() == whole.first_error() == 75
    assert mirror.read(range(len(lines))) == whole.read(range(len(lines)))
    assert len(mirror.tracker.startups) == 2 and mirror.ranks == whole.ranks


def test_each_append_is_parsed_before_it_is_indexed(tmp_path: Path) -> None:
    """A worker that finds a line in the index finds what it means: the meaning comes first."""
    mirror = MirrorDocument(tmp_path / "m.log")
    seen: list[tuple[int, int]] = []
    feed = mirror.meaning.feed_chunk

    def feed_and_look(data: bytes) -> int:
        count = feed(data)
        seen.append((mirror.meaning.fed, mirror.index.line_count))
        return count

    mirror.meaning.feed_chunk = feed_and_look  # type: ignore[method-assign]
    for data in chunks(ct129_lines(), [10, 20]):
        mirror.append(data)
    assert seen == [(10, 0), (30, 10), (81, 30)]
    assert mirror.index.line_count == 81


def test_clear_starts_the_file_and_its_meaning_again(tmp_path: Path) -> None:
    meaning = LogMeaning()
    mirror = MirrorDocument(tmp_path / "m.log", meaning)
    mirror.append(chunks(ct129_lines(), [])[0])
    generation, version = mirror.generation, meaning.version
    mirror.clear()
    assert mirror.path.read_bytes() == b"" and mirror.index.line_count == 0
    assert mirror.tracker.startups == [] and mirror.first_error() is None and meaning.fed == 0
    assert mirror.generation > generation and meaning.version > version
    mirror.append(b"[2026-11-30 10:00:00] after the relaunch\n")
    assert [info.raw for info in mirror.read([0])] == ["[2026-11-30 10:00:00] after the relaunch"]
    assert mirror.meaning is meaning  # the session's tracker is the mirror's, before and after
