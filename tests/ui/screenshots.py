"""Regenerate screenshots/: an SVG of each screen, from the same deterministic states as the snapshot tests
(the shots are in tests/ui/screens.py).

python -m tests.ui.screenshots [OUT_DIR] [NAME...]      (make screenshots)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from gdnconsole.host.prompthistory import PROMPTS_DIR_ENV
from tests.ui.screens import SHOTS, Shot, in_folder, utc


async def shoot(shot: Shot, work: Path, out_dir: Path) -> Path:
    """Run the shot's app in ``work`` (its working folder too) and save what it shows as NAME.svg."""
    work.mkdir(parents=True)
    out = out_dir / f"{shot.name}.svg"
    with in_folder(work):
        app, steps = shot.make(work)
        async with app.run_test(size=shot.size, notifications=True) as pilot:  # as snap_compare runs it
            await steps(pilot)
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()
            app.save_screenshot(filename=out.name, path=str(out_dir))
    return out


async def main(out_dir: Path, names: list[str]) -> None:
    unknown = set(names) - {shot.name for shot in SHOTS}
    if unknown:
        raise SystemExit(f"no such screen: {', '.join(sorted(unknown))}")
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, utc():
        work = Path(tmp)
        os.environ[PROMPTS_DIR_ENV] = str(work / "prompts")  # the panel's history: never the user's
        for shot in SHOTS:
            if not names or shot.name in names:
                print(f"wrote {await shoot(shot, work / shot.name, out_dir)}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots"), sys.argv[2:]))
