"""A tune sweep in the journal screen (`j`): one entry (its time, grid, best and counts) with its attempts
under it, from the tune store beside the journal; its detail lists every combination."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from gdnconsole.host.journal import Attempt, Journal
from gdnconsole.tune.grid import Combo
from gdnconsole.tune.results import BatchFigures, ComboResult, Identity, set_speedups
from gdnconsole.tune.store import TuneStore
from gdnconsole.tune.sweep import Sweep, sweep_record
from gdnconsole.ui.screens.journal import JournalScreen
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import CLOCK, SIZE, on_screen, until
from tests.ui.form_helpers import form_app, form_session, hosts_file

ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", "--tp-size", "2"]


def figures(rate: float) -> dict[int, BatchFigures]:
    return {1: BatchFigures(1, 4, rate, rate, 6.0, 7.0, 8.0, None, None, 0.01)}


def a_sweep() -> Sweep:
    ident = Identity("ct129", "0.5.11", "Qwen/Qwen3.6-27B", ["NVIDIA RTX A6000"] * 2, "chat@abc", "f00", 64)
    sweep = Sweep(ident, (1,), started=CLOCK - 400, ended=CLOCK - 100, profile="final")
    lead = ComboResult(Combo(2, 1, 3), "measured", attempt=3, by_batch=figures(60.0))
    sweep.results = [
        ComboResult(None, "measured", attempt=2, by_batch=figures(40.0)),
        lead,
        lead.shared_by(Combo(2, 1, 2), []),
        ComboResult(Combo(2, 2, 300), "rejected", rule=("mamba.track_interval_below_draft_tokens", "…")),
        ComboResult(Combo(3, 1, 4), "crashed", fatal="CUDA out of memory", attempt=4),
    ]
    set_speedups(sweep.baseline, sweep.results)
    return sweep


def recorded(tmp_path: Path) -> None:
    journal = Journal("ct129", tmp_path / "journal" / "ct129.jsonl")
    for number, when, profile in [(1, -600, "final"), (2, -390, "final"), (3, -300, "final"), (4, -200, "final"),
                                  (5, -50, "topk-only")]:  # fmt: skip
        journal.record(Attempt(number, CLOCK + when, "ct129", profile, ARGV, {}, outcome="stopped"))
    TuneStore("ct129", tmp_path / "journal").add_sweep(sweep_record(a_sweep()))


def cells(screen: JournalScreen) -> list[list[str]]:
    table = screen.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]


async def test_a_sweep_is_one_entry_with_its_attempts_under_it(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    app.journal_dir = tmp_path / "journal"
    recorded(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        assert await until(pilot, lambda: on_screen(app, JournalScreen), 5)
        screen = app.screen
        assert isinstance(screen, JournalScreen)
        assert await until(pilot, lambda: screen.query_one(DataTable).row_count == 6, 5)
        rows = cells(screen)
        assert [r[0] for r in rows] == ["1", "tune", "├ 2", "├ 3", "└ 4", "5"]
        sweep = rows[1]
        assert sweep[2:5] == ["final", "tune sweep", "2 measured, 1 rejected, 1 crashed"]
        assert sweep[5].startswith("best s2 k1 d3 at batch 1, 1.50× · ")  # the grid: cut to the width
        await pilot.press("up", "up", "up", "up")  # the sweep's line: its detail lists every combination
        detail = str(screen.query_one("#journal-argv", Static).render())
        assert "tune sweep · profile final · done" in detail and "best  s2 k1 d3 at batch 1, 1.50×" in detail
        assert "grid  num_steps=2,3 eagle_topk=1,2 num_draft_tokens=2,3,4,300" in detail
        assert "s2 k1 d2  measured  attempt 3" in detail and "s2 k2 d300  rejected" in detail
        assert screen.selected is None
        await pilot.press("r")  # re-run means an attempt: on a sweep's line nothing happens
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("down")
        assert screen.selected is not None and screen.selected.number == 2
