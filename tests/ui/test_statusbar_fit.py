"""The host's status line on narrow terminals: parts give way, least useful first, and VERIFIED stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text

from gdnconsole.host.link import LinkState
from gdnconsole.ui import theme
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.models.gpurows import gpu_rows
from gdnconsole.ui.models.textfit import Part, fit_parts
from gdnconsole.ui.widgets.gpupanel import render_gpus
from gdnconsole.ui.widgets.statusbar import clock_time, host_status, overview_rows
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import CLOCK, crashed_session, fixed_clock, refused_session, serving_session

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
    for width in (78, 60, 50):
        line = host_status(session, PALETTE, CLOCK, width).plain
        assert "ct129" in line and "● serving" in line and "✔ VERIFIED" in line, (width, line)
        assert len(line) <= width, (width, line)
    line = host_status(session, PALETTE, CLOCK, 40).plain  # narrower still: cut, and said to be
    assert len(line) == 40 and line.endswith("…"), line
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


LONG_NOTE = "launching final: loading weights 37 s (11/11 shards), then memory, graphs, scheduler ready"


def _failed(tmp_path: Path):  # type: ignore[no-untyped-def]
    session = serving_session(tmp_path)
    session.prober.sync()
    session.serving.verified = False
    session.serving.reason = "ReadTimeout after 30 s: the server took the request and did not answer " * 2
    return session


@pytest.mark.parametrize("width", [78, 118, 158, 198])
def test_the_bar_fits_every_width_with_a_launch_note_and_a_long_reason(tmp_path: Path, width: int) -> None:
    """The launch note and a long VERIFY FAILED reason used to be cut by the terminal at 120 and 160."""
    for session in (_verified(tmp_path / "v"), _failed(tmp_path / "f")):
        line = host_status(session, PALETTE, CLOCK, width, Text(LONG_NOTE)).plain
        assert len(line) <= width, (width, line)
        assert line.startswith("ct129 │ ● connected") and ("✔ VERIFIED" in line or "✖ VERIFY FAILED" in line)
        assert "● serving" in line, line
        if len(line) == width:
            assert line.endswith("…"), line  # never cut mid-word without saying so


def test_parts_give_way_by_priority() -> None:
    parts = [Part(Text("name"), 100), Part(Text("low"), 10), Part(Text("mid"), 30),
             Part(Text("long verdict"), 85, Text("short"))]  # fmt: skip
    assert fit_parts(parts, None, " | ").plain == "name | low | mid | long verdict"
    assert fit_parts(parts, 26, " | ").plain == "name | mid | long verdict"
    assert fit_parts(parts, 19, " | ").plain == "name | long verdict"
    assert fit_parts(parts, 12, " | ").plain == "name | short"
    assert fit_parts(parts, 8, " | ").plain == "name | …"


@pytest.mark.parametrize("size", [(80, 24), (120, 36), (160, 40), (200, 50)])
async def test_the_dashboards_bar_is_never_cut_by_the_terminal(tmp_path: Path, size: tuple[int, int]) -> None:
    app = DashboardApp([_failed(tmp_path)], start=False, clock=fixed_clock)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        pane = app.dashboard.host_pane(0)
        pane.launch_note = Text(LONG_NOTE)
        pane.refresh_host()
        await pilot.pause()
        bar = pane.status_bar
        line = str(bar.render())
        assert len(line) <= bar.content_region.width, (size, line)
        assert "✖ VERIFY FAILED" in line and "● serving" in line
