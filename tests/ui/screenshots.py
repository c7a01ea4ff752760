"""Regenerate screenshots/: an SVG of each screen, from the same deterministic states as the snapshot tests.

python -m tests.ui.screenshots [OUT_DIR]      (make screenshots)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from gdnconsole.host.prompthistory import PROMPTS_DIR_ENV
from tests.ui.conftest import SIZE, after, make_app
from tests.ui.dashboard_helpers import crashed_session, refused_session, serving_session
from tests.ui.fixtures import ct129_lines, write_log
from tests.ui.test_dashboard_snapshots import fixed_app
from tests.ui.test_flagform_snapshots import DialogApp, form_with_error
from tests.ui.test_prompt_snapshots import burst_results, prompt_app, streaming

SMALL = (80, 24)
Steps = Callable[[Pilot[Any]], Awaitable[None]]


keys = after


async def shoot(app: App[Any], size: tuple[int, int], steps: Steps, out: Path) -> None:
    async with app.run_test(size=size) as pilot:
        await steps(pilot)
        app.save_screenshot(filename=out.name, path=str(out.parent))
    print(f"wrote {out}")


async def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ[PROMPTS_DIR_ENV] = str(work / "prompts")  # the panel's history: never the user's
        log = write_log(work / "sglang_serve.log", ct129_lines())
        shots: list[tuple[str, Callable[[], App[Any]], tuple[int, int], Steps]] = [
            ("dashboard-serving", lambda: fixed_app(serving_session(work / "a")), SIZE, keys()),
            (
                "dashboard-three-hosts",
                lambda: fixed_app(
                    serving_session(work / "b"), crashed_session(work / "c"), refused_session(work / "d")
                ),
                SIZE,
                keys(),
            ),
            (
                "dashboard-crash-80x24",
                lambda: fixed_app(
                    serving_session(work / "e"), crashed_session(work / "f"), refused_session(work / "g")
                ),
                SMALL,
                keys("2"),
            ),
            ("log-view", lambda: make_app(log), SIZE, keys()),
            ("log-view-crash", lambda: make_app(log), SIZE, keys("x", "enter")),
            ("help", lambda: fixed_app(serving_session(work / "h")), SIZE, keys("question_mark")),
            ("prompt-panel-streaming", lambda: prompt_app(work / "i"), SIZE, streaming),
            ("prompt-panel-burst", lambda: prompt_app(work / "j"), SIZE, burst_results),
        ]
        for name, build, size, steps in shots:
            for sub in ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j"):
                (work / sub).mkdir(exist_ok=True)
            await shoot(build(), size, steps, out_dir / f"{name}.svg")
        (work / "form").mkdir()
        form_app, form_steps = form_with_error(work / "form")
        await shoot(form_app, SIZE, form_steps, out_dir / "flag-form-rule-error.svg")
        await shoot(DialogApp(), SIZE, keys(), out_dir / "relaunch-confirmation.svg")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")))
