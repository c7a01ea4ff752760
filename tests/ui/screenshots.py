"""Regenerate screenshots/: an SVG of each screen, from the same deterministic states as the snapshot tests
(the shots are in tests/ui/screens.py), and some of them again as a 256-colour terminal shows them
(NAME-256.svg: the themes fitted to 256 colours, every colour of the picture rounded as the terminal
rounds it).

python -m tests.ui.screenshots [OUT_DIR] [NAME...]      (make screenshots)
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import tempfile
from pathlib import Path

from rich.color import Color

from gdnconsole.host.prompthistory import PROMPTS_DIR_ENV
from gdnconsole.ui import fewcolours
from gdnconsole.ui.screens.logscreen import ThemedApp
from tests.ui.screens import SHOTS, Shot, in_folder, utc

# The screens shown again in 256 colours: each theme's dashboard, a dialog with input fields, the log view.
FEW_COLOURS = (
    "dashboard-serving",
    "dashboard-serving-gdn-light",
    "dashboard-serving-gdn-high-contrast",
    "flag-form-rule-error",
    "log-view",
    "dashboard-crash-80x24",
)
HEX = re.compile(r"#[0-9A-Fa-f]{6}\b")


def rounded_svg(svg: str, colours: int) -> str:
    """``svg`` with every colour as a terminal of ``colours`` colours shows it."""

    def palette(match: re.Match[str]) -> str:
        number = fewcolours.rounded(match.group(), colours)
        return match.group() if number is None else Color.from_ansi(number).get_truecolor().hex

    return HEX.sub(palette, svg)


async def shoot(shot: Shot, work: Path, out_dir: Path, colours: int = fewcolours.FULL) -> Path:
    """Run the shot's app in ``work`` (its working folder too) and save what it shows as NAME.svg (as
    NAME-256.svg for a terminal of 256 colours)."""
    work.mkdir(parents=True)
    suffix = "" if colours == fewcolours.FULL else f"-{colours}"
    out = out_dir / f"{shot.name}{suffix}.svg"
    with in_folder(work):
        app, steps = shot.make(work)
        if isinstance(app, ThemedApp):
            app.fit_colours(colours)
        async with app.run_test(size=shot.size, notifications=True) as pilot:  # as snap_compare runs it
            await steps(pilot)
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()
            app.save_screenshot(filename=out.name, path=str(out_dir))
    if suffix:
        out.write_text(rounded_svg(out.read_text(encoding="utf-8"), colours), encoding="utf-8")
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
            if shot.name in FEW_COLOURS and (not names or shot.name in names):
                print(f"wrote {await shoot(shot, work / f'{shot.name}-256', out_dir, 256)}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots"), sys.argv[2:]))
