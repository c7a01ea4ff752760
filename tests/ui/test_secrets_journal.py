"""The journal's detail shows API keys and tokens masked, even from a line written before masking;
ctrl+r shows the profile's real ones that the masks stand for, until the journal is left."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from gdnconsole.host.journal import Attempt, Journal
from gdnconsole.sglang.launch import redact, redact_env
from gdnconsole.ui.screens.journal import JournalScreen
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import CLOCK, SIZE, on_screen, until
from tests.ui.form_helpers import form_app, form_session
from tests.ui.test_secrets_form import KEY, TOKEN, secret_file

ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", "--api-key", KEY]
ENV = {"SGLANG_ENABLE_SPEC_V2": "1", "HF_TOKEN": TOKEN}
OLD_KEY, OLD_TOKEN = "sk-old-999", "hf_OLD"


def write_journal(directory: Path) -> None:
    journal = Journal("ct129", directory / "ct129.jsonl")
    old_argv, old_env = [*ARGV[:-1], OLD_KEY], {"HF_TOKEN": OLD_TOKEN}
    journal.record(Attempt(1, CLOCK - 600, "ct129", "topk-only", old_argv, old_env, outcome="crashed"))
    journal.record(
        Attempt(2, CLOCK - 300, "ct129", "topk-only", redact(ARGV), redact_env(ENV), outcome="ready")
    )


def detail(screen: JournalScreen) -> str:
    return str(screen.query_one("#journal-argv", Static).render())


async def test_the_journal_masks_secrets_and_reveals_them_on_purpose(tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    app.journal_dir = tmp_path / "journal"
    write_journal(app.journal_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        assert await until(pilot, lambda: on_screen(app, JournalScreen), 5)
        screen = app.screen
        assert isinstance(screen, JournalScreen)
        assert await until(pilot, lambda: screen.query_one(DataTable).row_count == 2, 5)
        assert "attempt 2" in detail(screen) and KEY not in detail(screen) and TOKEN not in detail(screen)
        assert "--api-key '<redacted:" in detail(screen) and "HF_TOKEN='<redacted:" in detail(screen)
        await pilot.press("up")  # a line written before masking: masked on screen all the same
        assert "attempt 1" in detail(screen) and OLD_KEY not in detail(screen)
        assert OLD_TOKEN not in detail(screen)
        await pilot.press("down", "ctrl+r")
        assert await until(pilot, lambda: f"--api-key {KEY}" in detail(screen), 5)
        assert f"HF_TOKEN={TOKEN}" in detail(screen)
        await pilot.press("escape")
        assert await until(pilot, lambda: not isinstance(app.screen, JournalScreen), 5)
        await pilot.press("j")
        assert await until(pilot, lambda: on_screen(app, JournalScreen), 5)
        again = app.screen
        assert isinstance(again, JournalScreen)
        assert await until(pilot, lambda: "attempt 2" in detail(again), 5)
        assert KEY not in detail(again)


async def test_the_markdown_export_masks_a_line_written_before_masking(tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    app.journal_dir = tmp_path / "journal"
    write_journal(app.journal_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        assert await until(pilot, lambda: on_screen(app, JournalScreen), 5)
        await pilot.press("ctrl+r", "m")  # revealed on screen: the export is masked all the same
        exported = app.journal_dir / "ct129.md"
        assert await until(pilot, lambda: exported.exists(), 5)
        text = exported.read_text()
        assert "| 1 |" in text and "--api-key" in text
        for secret in (KEY, TOKEN, OLD_KEY, OLD_TOKEN):
            assert secret not in text and secret not in app.clipboard


async def test_a_screen_over_the_journal_masks_the_detail_again(tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    app.journal_dir = tmp_path / "journal"
    write_journal(app.journal_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        assert await until(pilot, lambda: on_screen(app, JournalScreen), 5)
        screen = app.screen
        assert isinstance(screen, JournalScreen)
        assert await until(pilot, lambda: screen.query_one(DataTable).row_count == 2, 5)
        await pilot.press("ctrl+r")
        assert await until(pilot, lambda: KEY in detail(screen), 5)
        await pilot.press("ctrl+p")  # the command palette comes over the journal
        assert await until(pilot, lambda: app.screen is not screen, 5)
        assert KEY not in detail(screen) and not screen.revealed
