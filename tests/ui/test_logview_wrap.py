"""Narrow terminals: `w` wraps long lines (the fatal line is read whole), `T` cuts timestamps to HH:MM:SS."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.ui.models import wrap
from tests.ui.conftest import make_app, row_texts, settle
from tests.ui.fixtures import ct129_lines, stamp, write_log

FATAL = (
    f"{stamp(59, 'TP0', 1)} Scheduler hit an exception: torch.OutOfMemoryError: CUDA out of memory. Tried to "
    "allocate 2.00 GiB. GPU 0 has a total capacity of 47.54 GiB of which 1.06 GiB is free. END-OF-FATAL"
)


def test_short_time_keeps_the_clock_and_the_brackets() -> None:
    assert wrap.short_time("[2026-11-30 09:00:40] Load weight end.") == "[09:00:40] Load weight end."
    assert wrap.short_time("2026-11-30T09:00:40.123456Z stdout F x") == "09:00:40 stdout F x"
    assert wrap.short_time("2026-11-30 09:00:40,123 INFO x") == "09:00:40 INFO x"
    assert wrap.short_time("[2026-11-30 09:00:40 oops") == "[2026-11-30 09:00:40 oops"  # unbalanced
    assert wrap.short_time("Traceback (most recent call last):") == "Traceback (most recent call last):"


def test_pieces_are_cut_by_cells_after_spaces() -> None:
    assert wrap.pieces("abcdefgh", 3) == ["abc", "def", "gh"]
    assert wrap.pieces("日本語x", 4) == ["日本", "語x"]
    assert wrap.pieces("", 5) == [""]
    assert wrap.pieces("one two three", 8) == ["one two ", "three"]  # after a space where there is one
    assert wrap.pieces("a verylongword", 6) == ["a ", "verylo", "ngword"]


def test_layout_fills_from_the_top_and_keeps_the_cursor_whole() -> None:
    sizes = {0: 1, 1: 3, 2: 1, 3: 4}
    assert wrap.layout(0, 4, 4, 0, sizes.__getitem__) == [(0, 0), (1, 0), (1, 1), (1, 2)]
    # The cursor on row 3, which would start on the last screen row: the screen ends with it, whole.
    assert wrap.layout(0, 4, 6, 3, sizes.__getitem__) == [(1, 2), (2, 0), (3, 0), (3, 1), (3, 2), (3, 3)]
    assert wrap.layout(0, 0, 6, 0, sizes.__getitem__) == []  # an empty log shows no row


async def test_w_wraps_the_fatal_line_while_following(tmp_path: Path) -> None:
    """At 80 columns the fatal line, the one most often read, was cut; wrapped, it ends on screen."""
    log = write_log(tmp_path / "sglang_serve.log", [*ct129_lines(), FATAL])
    app = make_app(log, follow=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not any("END-OF-FATAL" in row for row in row_texts(app))
        await pilot.press("w")
        await settle(pilot)
        rows = [row.rstrip() for row in row_texts(app)]
        end = max(i for i, row in enumerate(rows) if row)
        assert rows[end].endswith("END-OF-FATAL")  # the last line, whole, at the bottom
        start = next(i for i, row in enumerate(rows) if "Scheduler hit an" in row)
        assert " ".join(row.strip() for row in rows[start : end + 1]).endswith("is free. END-OF-FATAL")
        assert rows[start + 1].startswith(" " * 6)  # under the text, past the rank tag
        assert "wrap" in str(app.log_screen.pane.status_bar.render())
        await pilot.press("w")
        await settle(pilot)
        assert not any("END-OF-FATAL" in row for row in row_texts(app))


async def test_T_shows_short_timestamps(ct129_log: Path) -> None:
    app = make_app(ct129_log)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert row_texts(app)[0].startswith("      [2026-11-30 09:00:00] Attention")
        await pilot.press("T")
        await settle(pilot)
        assert row_texts(app)[0].startswith("      [09:00:00] Attention")


def test_glued_lines_are_cut_before_each_stamp() -> None:
    bar = "Loading shards: 100%| 11/11 [00:11<00:00, 1.00it/s]"
    line = "[2026-11-30 09:00:40 TP0] Load weight end."
    assert wrap.glued(bar + line) == [bar, line]
    assert wrap.glued(line) == [line]


async def test_a_bar_without_a_newline_keeps_the_next_line_in_view(tmp_path: Path) -> None:
    """tqdm ended without a newline and the next log line went on after the bar's last state: at 80
    columns it was past the right edge. It shows on a row of its own, under the bar."""
    states = "".join(
        f"\rLoading safetensors checkpoint shards: {k * 10:3d}% Completed | {k}/10" for k in range(11)
    )
    glued = f"{stamp(40, 'TP0')} Load weight end. elapsed=37.12 s, GLUED-LINE"
    lines = [*ct129_lines()[:12], states + glued, f"{stamp(41, 'TP0')} KV Cache is allocated."]
    app = make_app(write_log(tmp_path / "sglang_serve.log", lines))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        rows = row_texts(app)
        at = next(i for i, row in enumerate(rows) if "Loading safetensors" in row)
        assert rows[at + 1].strip().startswith(f"{stamp(40, 'TP0')} Load weight")
        assert "KV Cache is" in rows[at + 2]
