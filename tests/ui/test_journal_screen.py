"""The journal screen: attempts in a table, the selected one's argv/env/diff, Markdown export, re-run and
load into the form; and the launch progress line."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from gdnconsole.host.journal import Attempt, Fatal, Journal, RuleBreak
from gdnconsole.ui import theme
from gdnconsole.ui.screens.flagform import FlagFormScreen
from gdnconsole.ui.screens.journal import JournalScreen, attempt_row
from gdnconsole.ui.screens.launchcontrol import Progress, progress_text
from gdnconsole.ui.tones import Tones
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import CLOCK, SIZE, on_screen, until
from tests.ui.form_helpers import form_app, form_session, hosts_file

ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", "--tp-size", "2"]
SPEC = ["--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "1"]


def attempts() -> list[Attempt]:
    env = {"SGLANG_ENABLE_SPEC_V2": "1"}
    rule = RuleBreak("spec.topk_without_steps", "set --speculative-num-steps")
    return [
        Attempt(1, CLOCK - 600, "ct129", "topk-only", [*ARGV, *SPEC], env, outcome="rejected", rule=rule),
        Attempt(
            2,
            CLOCK - 500,
            "ct129",
            "final",
            [*ARGV, *SPEC, "--speculative-num-steps", "1"],
            env,
            diff=["+ --speculative-num-steps 1"],
            stages={"loading": 37.1, "graphs": 5.9},
            outcome="crashed",
            stage="graphs",
            fatal=Fatal(212, "CUDA out of memory capturing graphs"),
        ),
        Attempt(
            3,
            CLOCK - 300,
            "ct129",
            "final",
            [*ARGV, *SPEC, "--speculative-num-steps", "1"],
            env,
            stages={"loading": 36.0, "graphs": 6.1, "ready": 1.0},
            outcome="ready",
            stage="ready",
            warnings=["libavutil.so.58 missing (not fatal)"],
        ),
    ]


def journal(tmp_path: Path) -> Journal:
    j = Journal("ct129", tmp_path / "journal" / "ct129.jsonl")
    for attempt in attempts():
        j.record(attempt)
    return j


async def open_journal(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    app.journal_dir = tmp_path / "journal"
    journal(tmp_path)
    return app


def cells(screen: JournalScreen) -> list[list[str]]:
    table = screen.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]


async def test_journal_lists_attempts_and_exports_markdown(tmp_path: Path) -> None:
    app = await open_journal(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        assert await until(pilot, lambda: on_screen(app, JournalScreen), 5)
        screen = app.screen
        assert isinstance(screen, JournalScreen)
        assert await until(pilot, lambda: screen.query_one(DataTable).row_count == 3, 5)
        rows = cells(screen)
        assert [r[3] for r in rows] == ["rejected", "crashed", "ready"]
        assert rows[0][5].startswith("rule spec.topk_without_steps")
        assert rows[1][4] == "✖ graphs 43.0 s" and rows[1][5].startswith(
            "L212: CUDA out of memory"
        )  # failed there, not running
        detail = str(screen.query_one("#journal-argv", Static).render())
        assert "attempt 3" in detail and "--speculative-num-steps 1" in detail
        assert "SGLANG_ENABLE_SPEC_V2=1" in detail and "libavutil" in detail
        await pilot.press("up")
        detail = str(screen.query_one("#journal-argv", Static).render())
        assert "attempt 2" in detail and "+ --speculative-num-steps 1" in detail
        assert "stage loading 37.1 s, graphs 5.9 s" in detail
        await pilot.press("m")
        exported = tmp_path / "journal" / "ct129.md"
        assert await until(pilot, lambda: exported.exists(), 5)
        text = exported.read_text()
        assert text.startswith("## Launch attempts on ct129") and "| 2 |" in text and "**crashed**" in text
        assert app.clipboard == text
        # OSC 52 may be dropped (tmux, SSH): the toast says it was sent, and where the file is.
        [toast] = [n.message for n in app._notifications if "journal written" in n.message]
        assert (
            toast
            == f"journal written to {exported}, and sent to the terminal clipboard (if the terminal takes OSC 52)"
        )
        assert "copied" not in toast


async def test_journal_attempt_loads_into_the_form(tmp_path: Path) -> None:
    app = await open_journal(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        assert await until(pilot, lambda: on_screen(app, JournalScreen), 5)
        screen = app.screen
        assert await until(pilot, lambda: screen.query_one(DataTable).row_count == 3, 5)
        await pilot.press("up", "up")  # attempt 1, the rejected one
        await pilot.press("e")
        assert await until(pilot, lambda: on_screen(app, FlagFormScreen), 5)
        form = app.screen
        assert isinstance(form, FlagFormScreen)
        assert form.base.name == "topk-only" and form.values.eagle_topk == "1" and form.values.num_steps == ""


def test_progress_line_shows_the_launchers_words() -> None:
    phase = "waiting for GPU memory to be released: GPU 0 31480 MiB, GPU 1 30990 MiB"
    tones = Tones.of_theme(theme.load()[0])
    text = progress_text(Progress("relaunch", phase, CLOCK - 12), CLOCK, tones).plain
    assert text == f"◐ relaunch: {phase} 12s"


def test_the_cause_column_says_causes_and_a_rejected_attempt_reached_nothing() -> None:
    """Warnings showed as the cause of verified and timed-out attempts; a rejected one "reached starting"."""
    from tests.ui.screens import journey

    tones = Tones.of_theme(theme.load_all().get("gdn-dark").theme)
    rows = {a.outcome: [c.plain for c in attempt_row(a, tones)] for a in journey()}
    assert rows["rejected"][4] == "not started" and rows["rejected"][5].startswith("rule spec.")
    assert rows["verified"][5] == "2 warnings (below)"
    assert rows["timeout"][5] == "2 warnings (below)"
    assert rows["ready"][5] == "no answer: timeout: no answer within 30 s"
    assert rows["crashed"][5].startswith("L30: Exception: Capture cuda graph failed")
