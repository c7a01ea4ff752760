"""The journal screen (`j`) on a long journal: the newest page at once, the page before it when the
cursor reaches the top row, and a damaged line said once in a notification (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable

from gdnconsole.host.journal import Attempt, Journal
from gdnconsole.ui.screens.journal import PAGE, JournalScreen
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import CLOCK, SIZE, on_screen, until
from tests.ui.form_helpers import form_app, form_session, hosts_file

ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", "--tp-size", "2"]
COUNT = PAGE * 2 + 50


def long_journal(folder: Path) -> Journal:
    journal = Journal("ct129", folder / "ct129.jsonl", warn=lambda _: None)
    lines = [b"[1, 2, 3]\n"]  # damaged: an array, not an attempt
    for n in range(1, COUNT + 1):
        attempt = Attempt(
            n, CLOCK - 10 * (COUNT - n), "ct129", "final", ARGV, {}, outcome="stopped", id=f"a{n}"
        )
        lines.append(json.dumps(attempt.to_json()).encode() + b"\n")
    journal.path.parent.mkdir(parents=True)
    journal.path.write_bytes(b"".join(lines))
    return journal


def numbers(table: DataTable[object]) -> list[int]:
    return [int(str(table.get_row_at(r)[0])) for r in range(table.row_count)]


async def test_the_newest_page_first_then_older_pages_on_demand(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    app.journal_dir = tmp_path / "journal"
    long_journal(tmp_path / "journal")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        assert await until(pilot, lambda: on_screen(pilot.app, JournalScreen), 5)
        table = pilot.app.screen.query_one(DataTable)
        assert await until(pilot, lambda: table.row_count > 0, 5)
        assert numbers(table) == list(range(COUNT - PAGE + 1, COUNT + 1))  # the newest page, in order
        assert table.cursor_row == PAGE - 1  # on the newest attempt

        table.move_cursor(row=0)  # the top row: the page before it is read
        assert await until(pilot, lambda: table.row_count == 2 * PAGE, 5)
        assert numbers(table)[0] == COUNT - 2 * PAGE + 1
        assert int(str(table.get_row_at(table.cursor_row)[0])) == COUNT - PAGE + 1  # it stayed on its row

        table.move_cursor(row=0)
        assert await until(pilot, lambda: table.row_count == COUNT, 5)
        assert numbers(table) == list(range(1, COUNT + 1))
        assert await until(pilot, lambda: len(pilot.app._notifications) > 0, 5)
        [note] = list(pilot.app._notifications)
        assert note.message == (
            f"skipped 1 damaged line in {tmp_path / 'journal' / 'ct129.jsonl'} (first at line 1: an array, "
            "not an object)"
        )
