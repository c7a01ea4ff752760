"""How the log view looks (SVG snapshots; regenerate with `pytest tests/ui --snapshot-update`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.ui.conftest import SIZE, after, make_app, settle
from tests.ui.fixtures import startup, write_log

SnapCompare = Callable[..., bool]


def test_view_at_start(snap_compare: SnapCompare, ct129_log: Path) -> None:
    assert snap_compare(make_app(ct129_log), terminal_size=SIZE, run_before=after())


def test_view_crash_unfolded(snap_compare: SnapCompare, ct129_log: Path) -> None:
    assert snap_compare(make_app(ct129_log), terminal_size=SIZE, run_before=after("x", "enter"))


def test_view_following_paused(snap_compare: SnapCompare, tmp_path: Path) -> None:
    log = write_log(tmp_path / "serve.log", startup(0, crash=False))

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("up", "up")
        with log.open("a") as fh:
            fh.write(
                "".join(
                    f'[2026-11-30 09:01:{k:02d}] INFO:     127.0.0.1:4000{k} - "GET /health HTTP/1.1" 200 OK\n'
                    for k in range(4)
                )
            )
        pilot.app.log_screen.poll()  # type: ignore[attr-defined]
        await settle(pilot)

    assert snap_compare(make_app(log, follow=True), terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare: SnapCompare, ct129_log: Path) -> None:
    assert snap_compare(make_app(ct129_log), terminal_size=SIZE, run_before=after("question_mark"))
