"""The host's status line on narrow terminals: parts give way, least useful first, and VERIFIED stays."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.host.link import LinkState
from gdnconsole.ui import theme
from gdnconsole.ui.models.gpurows import gpu_rows
from gdnconsole.ui.widgets.gpupanel import render_gpus
from gdnconsole.ui.widgets.statusbar import clock_time, host_status, overview_rows
from tests.ui.dashboard_helpers import CLOCK, crashed_session, refused_session, serving_session

PALETTE = theme.load()[1]


def _verified(tmp_path: Path):  # type: ignore[no-untyped-def]
    session = serving_session(tmp_path)
    session.prober.sync()
    session.serving.verified, session.serving.latency_ms = True, 412.0
    return session


def test_wide_line_has_everything(tmp_path: Path) -> None:
    line = host_status(_verified(tmp_path), PALETTE, CLOCK, 200).plain
    for part in ("ct129", "● connected 3 ms", "SGLang 0.5.11", "server pid 4242 up 12m34s", "● serving",
                 "✔ VERIFIED 412 ms"):  # fmt: skip
        assert part in line, line


def test_narrow_line_drops_version_then_server_and_keeps_the_verdict(tmp_path: Path) -> None:
    session = _verified(tmp_path)
    for width in (78, 60, 50, 40):
        line = host_status(session, PALETTE, CLOCK, width).plain
        assert "ct129" in line and "● serving" in line and "✔ VERIFIED" in line, (width, line)
        assert len(line) <= width or width < 45, (width, line)
    assert "SGLang" not in host_status(session, PALETTE, CLOCK, 78).plain


def test_gpu_legend_fits_eighty_columns(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    rows = gpu_rows(
        session.gpus, session.server, session.orphans, session.placements(), session.log.tracker.current
    )
    for width in (78, 158):
        text = render_gpus(rows, width, PALETTE)
        assert all(line.cell_len <= width for line in text.split()), [line.plain for line in text.split()]


def test_overview_rows_align_and_fit_eighty_columns(tmp_path: Path) -> None:
    sessions = [
        _verified(tmp_path / "a"),
        crashed_session(tmp_path / "b"),
        refused_session(tmp_path / "c"),
    ]
    labels = ["▶1", " 2", " 3"]
    wide = [row.plain for row in overview_rows(sessions, PALETTE, labels, 160)]
    assert "● connected 3 ms" in wide[0] and "45.5 tok/s accept 1.85" in wide[0], wide[0]
    assert len({row.index("●") for row in wide[:2]}) == 1, "the link column is not aligned"
    narrow = [row.plain for row in overview_rows(sessions, PALETTE, labels, 78)]
    assert all(len(row) <= 78 for row in narrow), narrow
    assert "45.5 tok/s" in narrow[0] and "accept" not in narrow[0] and "…" not in narrow[0], narrow[0]
    assert "failed in graphs" in narrow[1] and "2/2 GPUs" in narrow[1], narrow[1]
    stage = narrow[0].index("● serving")
    assert narrow[1].index("✖ failed") == stage, "the stage column is not aligned"
    tiny = [row.plain for row in overview_rows(sessions, PALETTE, labels, 40)]
    assert all(len(row) <= 40 for row in tiny) and tiny[0].endswith("…"), tiny


def test_a_long_gpu_warning_wraps_under_its_text(tmp_path: Path) -> None:
    session = crashed_session(tmp_path)  # a scheduler rank left holding memory after its server died
    rows = gpu_rows(
        session.gpus, session.server, session.orphans, session.placements(), session.log.tracker.current
    )
    lines = [line.plain for line in render_gpus(rows, 104, PALETTE).split()]
    assert all(len(line) <= 104 for line in lines), lines
    assert lines[-2].startswith("   ⚠ pid 5120 sglang::scheduler_TP1 (its server is gone) holds 30.3 GiB")
    assert lines[-1] == "     leftover? a launch may run out of memory", lines[-2:]


def test_a_host_that_is_down_says_since_when_and_the_next_retry(tmp_path: Path) -> None:
    session = refused_session(tmp_path)
    session._set_link(LinkState.DOWN, "the connection was lost")
    session.down_since, session.retry_at = CLOCK - 65, CLOCK + 4
    session._set_link(
        LinkState.DOWN, "the connection was lost again"
    )  # a later failure keeps the first's time
    line = host_status(session, PALETTE, CLOCK, 200).plain
    assert f"✖ down since {clock_time(CLOCK - 65)}, retry in 4s" in line, line
