"""Whether a file's head holds a line SGLang writes: what `log view` tells of a file that is not a log."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.logs import document


def test_a_file_with_an_sglang_line_in_its_head_is_one(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_text("pip noise\n" * 50 + "[2026-11-30 09:00:00 TP0] Load weight begin. avail mem=46.93 GB\n")
    assert document.written_by_sglang(log)


def test_a_file_without_one_is_not(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("# my notes\nbuy milk\n" * 100)
    assert not document.written_by_sglang(notes)


def test_only_the_head_is_read(tmp_path: Path) -> None:
    late = tmp_path / "late.log"
    late.write_text("x" * 99 + "\n" + "[2026-11-30 09:00:00] The server is fired up and ready to roll!\n")
    assert not document.written_by_sglang(late, size=100)
    assert document.written_by_sglang(late, size=200)


def test_a_line_cut_by_the_head_is_not_judged(tmp_path: Path) -> None:
    cut = tmp_path / "cut.log"
    cut.write_text("plain text\n[2026-11-30 09:00:00] The server is fired up and ready to roll!\n")
    assert not document.written_by_sglang(cut, size=30)  # the SGLang line is cut: not seen


def test_an_empty_file_may_still_become_one(tmp_path: Path) -> None:
    empty = tmp_path / "serve.log"
    empty.write_bytes(b"")
    assert document.written_by_sglang(empty)


def test_a_nul_hole_before_the_text_is_skipped(tmp_path: Path) -> None:
    holed = tmp_path / "serve.log"
    holed.write_bytes(b"\0" * 100_000 + b"[2026-11-30 09:00:00 TP0] Init torch distributed begin.\n")
    assert document.written_by_sglang(holed)
