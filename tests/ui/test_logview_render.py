"""Rendering a line: log text is data (never markup, never escape sequences), long lines are cropped."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gdnconsole.logs.document import Fold, LineInfo, LogDocument, display_text
from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.ui import theme
from gdnconsole.ui.models.rows import Marker
from gdnconsole.ui.widgets.logview import render_row

_, PALETTE = theme.load()


def info_of(raw: str, rank: str | None = None) -> LineInfo:
    return LineInfo(0, raw, display_text(raw), Stage.LOADING, Severity.INFO, rank)


# Text that looks like Rich markup or terminal control, mixed with anything else.
nasty = st.lists(
    st.sampled_from(
        ["[bold]", "[/]", "[link=http://x]", "\x1b[31m", "\x1b]8;;http://x\x1b\\", "\r", "\t", "[", "]", "\\"]
    )
    | st.text(st.characters(codec="latin-1"), max_size=20),  # single-cell characters and C0/C1 controls
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(raw=nasty, x=st.integers(0, 40), width=st.integers(1, 120))
def test_rendered_text_is_the_visible_input(raw: str, x: int, width: int) -> None:
    strip = render_row(info_of(raw), PALETTE, width=width, x=x)
    body = display_text(raw)
    assert strip.text == ("  " + body[x : x + width])[:width]
    assert "\x1b" not in strip.text and "\r" not in strip.text
    for segment in strip:
        assert segment.style is None or segment.style.link is None  # no [link=…] became a link


@settings(max_examples=100, deadline=None)
@given(raw=st.text(max_size=60), x=st.integers(0, 10), width=st.integers(1, 50))
def test_any_text_fits_its_width(raw: str, x: int, width: int) -> None:
    strip = render_row(info_of(raw, "DP1 TP1"), PALETTE, width=width, x=x, tag_width=7)
    assert strip.cell_length <= width
    assert "\x1b" not in strip.text


def test_markup_and_escapes_shown_literally() -> None:
    raw = "[bold]red[/bold] [link=http://evil]x[/link] \x1b[31mESC\x1b[0m \x1b]0;title\x07"
    strip = render_row(info_of(raw), PALETTE, width=200)
    assert strip.text.strip() == "[bold]red[/bold] [link=http://evil]x[/link] ^[[31mESC^[[0m ^[]0;title^G"


def test_tqdm_line_shows_its_last_state() -> None:
    raw = "".join(f"\rCapturing batches: {k * 10:3d}%|{'█' * k}{' ' * (10 - k)}| {k}/10" for k in range(11))
    assert (
        render_row(info_of(raw), PALETTE, width=80).text.strip()
        == "Capturing batches: 100%|██████████| 10/10"
    )


def test_rank_tag_and_fold_marker() -> None:
    fold = Fold(3, 16, 10, Severity.FATAL)
    strip = render_row(
        info_of("RuntimeError: boom", "TP1"), PALETTE, width=60, tag_width=7, marker=Marker(fold, True)
    )
    assert strip.text == "▸ TP1     14 lines ▸ RuntimeError: boom"


def test_long_lines_are_cropped_not_stalled(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    huge = "[2026-11-30 09:00:00 TP0] " + "x" * 1_000_000
    log = tmp_path / "huge.log"
    log.write_text(huge + "\nnext\n")
    doc = LogDocument(log)
    doc.build_index()
    first, second = doc.read([0, 1])
    strip = render_row(first, PALETTE, width=100, x=500, tag_width=3)
    assert strip.cell_length == 100 and second.body == "next"
    # Capped for display and copy: what a row costs is bounded (bench/bench_giant_line.py times it).
    assert first.rank == "TP0" and len(first.raw) < 100_000
