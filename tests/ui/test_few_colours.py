"""On a 256-colour terminal (tmux without truecolor, macOS Terminal.app, screen) and a 16-colour one, every
shipped theme keeps its structure: the page, the surfaces (input fields) and the panels (bars, dialogs),
and the edge of an input field, round to different colours wherever the theme has them differ."""

from __future__ import annotations

from pathlib import Path

import pytest

from gdnconsole.ui import fewcolours, theme
from gdnconsole.ui.app import DashboardApp
from tests.ui.dashboard_helpers import SIZE, fixed_clock, serving_session

SHIPPED = ("gdn-dark", "gdn-light", "gdn-high-contrast")
LAYERS = ("background", "surface", "panel", "border-blurred")


def rounded_layers(variables: dict[str, str], colours: int) -> dict[str, int | None]:
    return {name: fewcolours.rounded(variables[name], colours) for name in LAYERS}


def test_gdn_dark_did_round_to_one_colour() -> None:
    """What a 256-colour terminal showed: background, surface and panel all colour 16."""
    dark = theme.load_all().get("gdn-dark").theme
    assert {fewcolours.rounded(getattr(dark, name), 256) for name in ("background", "surface", "panel")} == {
        16
    }


@pytest.mark.parametrize("colours", [256, 16])
@pytest.mark.parametrize("name", SHIPPED)
async def test_each_theme_keeps_its_structure(tmp_path: Path, name: str, colours: int) -> None:
    app = DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock, theme_name=name)
    app.fit_colours(colours)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        variables = app.get_css_variables()
        shown = rounded_layers(variables, colours)
        own = theme.load_all().get(name).theme
        assert shown["panel"] not in (shown["background"], shown["surface"]), shown  # bars, dialogs
        assert shown["border-blurred"] != shown["surface"], shown  # an input field's edge
        if own.surface != own.background:
            assert shown["surface"] != shown["background"], shown


async def test_truecolor_is_the_theme_itself(tmp_path: Path) -> None:
    app = DashboardApp([serving_session(tmp_path)], start=False, clock=fixed_clock)
    app.fit_colours(fewcolours.FULL)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.get_css_variables()["panel"].upper() == "#1E252D"


def test_the_colour_count_follows_the_terminal() -> None:
    assert [fewcolours.colours_of(s) for s in ("truecolor", "256", "standard", None)] == [
        1 << 24,
        256,
        16,
        1 << 24,
    ]
