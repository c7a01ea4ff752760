"""The prompt panel says so when the host's prompt history has damaged lines (a toast: the history's
warning would go to a stderr the dashboard hides), and still recalls the good ones."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.chat.client import ChatRequest, ChatResult
from gdnconsole.host.prompthistory import PromptHistory
from gdnconsole.ui.widgets.promptform import PromptBox
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, serving_session, until
from tests.ui.test_dashboard_snapshots import fixed_app
from tests.ui.test_prompt_panel import open_panel


async def test_a_damaged_history_is_said_in_a_toast(tmp_path: Path) -> None:
    history = PromptHistory("ct129")
    history.record_run(ChatRequest("kept prompt"), ChatResult(ok=True))
    with history.path.open("ab") as fh:
        fh.write(b"[" * 100_000 + b"\n")
    app = fixed_app(serving_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_panel(pilot, app)
        said = f"skipped 1 damaged line in {history.path} (first at line 2: nested too deeply)"
        assert await until(pilot, lambda: any(n.message == said for n in app._notifications), 5)
        await pilot.press("up")
        assert screen.query_one(PromptBox).text == "kept prompt"
