"""Themes: the shipped ones (found in the installed package, legible by WCAG contrast), the user's own,
broken files, choosing one (`--theme` > `[console] theme` > default) and switching at runtime."""

from __future__ import annotations

import difflib
import importlib.resources
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gdnconsole.cli.main import main
from gdnconsole.config import hosts as config_hosts
from gdnconsole.config.hosts import ConfigError
from gdnconsole.sglang.stages import Stage
from gdnconsole.ui import theme
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.screens.logscreen import LogViewApp
from gdnconsole.ui.theme import ThemeError, UnknownThemeError, contrast_ratio
from tests.ui.conftest import after, settle
from tests.ui.dashboard_helpers import SIZE, crashed_session, fixed_clock, refused_session, serving_session
from tests.ui.fixtures import ct129_lines, write_log

SnapCompare = Callable[..., bool]
SHIPPED = ("gdn-dark", "gdn-high-contrast", "gdn-light")
# The least contrast of every log colour (stages, severities, ranks, fold, dim) against the background.
LOG_CONTRAST = {"gdn-dark": 3.0, "gdn-light": 3.0, "gdn-high-contrast": 7.0}
TEXT_CONTRAST = 7.0  # the UI's foreground against its background, in every shipped theme


def shipped_data(name: str) -> dict[str, Any]:
    return tomllib.loads((theme.themes_dir() / f"{name}.toml").read_text(encoding="utf-8"))


def log_colors(data: dict[str, Any]) -> dict[str, str]:
    log = data["log"]
    colors = {key: log[key] for key in theme.LOG_COLORS if key != "cursor"}
    colors.update({f"ranks[{i}]": c for i, c in enumerate(log["ranks"])})
    return colors


# -- the shipped themes ----------------------------------------------------------------------------


def test_shipped_themes_are_in_the_installed_package() -> None:
    package = importlib.resources.files("gdnconsole").joinpath("themes")
    for name in SHIPPED:
        assert package.joinpath(f"{name}.toml").is_file(), name
    assert theme.themes_dir() == Path(str(package))
    assert tuple(theme.theme_files()) == SHIPPED
    assert tuple(theme.load_all().themes) == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_theme_is_legible(name: str) -> None:
    data = shipped_data(name)
    background = data["colors"]["background"]
    assert contrast_ratio(data["colors"]["foreground"], background) >= TEXT_CONTRAST
    low = {key: round(contrast_ratio(c, background), 2) for key, c in log_colors(data).items()}
    assert min(low.values()) >= LOG_CONTRAST[name], sorted(low.items(), key=lambda kv: kv[1])[:3]


def test_high_contrast_is_black_and_white_and_its_cursor_line_stays_legible() -> None:
    data = shipped_data("gdn-high-contrast")
    colors = data["colors"]
    assert (colors["background"], colors["foreground"]) == ("#000000", "#FFFFFF")
    cursor = data["log"]["cursor"]
    assert min(contrast_ratio(c, cursor) for c in log_colors(data).values()) >= 4.5
    # The stage colours are distinct: no two stages share a colour.
    stages = [data["log"][s.label] for s in Stage]
    assert len(set(stages)) == len(stages)


def test_contrast_ratio_matches_wcag() -> None:
    assert contrast_ratio("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)
    assert contrast_ratio("#123456", "#123456") == pytest.approx(1.0)


# -- user themes and broken files ------------------------------------------------------------------


def user_theme(folder: Path, name: str, base: str = "gdn-light", **changes: str) -> Path:
    """A copy of shipped theme ``base`` named ``name``, with ``old=new`` text replaced."""
    folder.mkdir(parents=True, exist_ok=True)
    text = (theme.themes_dir() / f"{base}.toml").read_text(encoding="utf-8")
    text = text.replace(f'name = "{base}"', f'name = "{name}"')
    for old, new in changes.items():
        text = text.replace(old, new)
    path = folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_user_themes_are_listed_and_win_over_shipped_ones(tmp_path: Path) -> None:
    user = tmp_path / "themes"
    user_theme(user, "mine")
    user_theme(user, "gdn-dark", base="gdn-light")  # a user's gdn-dark, light
    files = theme.theme_files(user)
    assert list(files) == ["gdn-dark", "gdn-high-contrast", "gdn-light", "mine"]
    assert files["gdn-dark"] == user / "gdn-dark.toml"
    themes = theme.load_all(user)
    assert not themes.errors
    assert not themes.themes["gdn-dark"].theme.dark and themes.themes["mine"].theme.name == "mine"


def test_user_themes_live_next_to_the_hosts_file_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(config_hosts.CONFIG_ENV, str(tmp_path / "conf" / "hosts.toml"))
    assert theme.user_themes_dir(config_hosts.load()) == tmp_path / "conf" / "themes"


BAD_THEMES = [
    # (replace this, with that), the line, the key, what is said
    (("[colors]", "[colors"), 6, "", "invalid TOML: expected ']' at the end of a table declaration"),
    (("[log]", "[logs]"), 18, "logs", "unknown key (did you mean 'log'?)"),
    (('loading = "#0A5CC2"', 'loading = "blu"'), 22, "log.loading", '"blu" is not a colour'),
    (('primary = "#0A5CC2"', "primary = 3"), 7, "colors.primary", "3 is not a colour"),
    (('primary = "#0A5CC2"', 'primray = "#0A5CC2"'), 7, "colors.primray", "did you mean 'primary'?"),
    (('primary = "#0A5CC2"\n', ""), 6, "colors", "missing required key 'primary'"),
    (('warmup = "#6E5F00"\n', ""), 18, "log", "missing required key 'warmup' (a colour)"),
    (("ranks = [", "ranks = 1 #"), 37, "log.ranks", "expected a non-empty list of colours, found 1"),
    (('ranks = ["#0A5CC2"', 'ranks = ["nope"'), 37, "log.ranks", '"nope" is not a colour'),
    (("dark = false", 'dark = "no"'), 4, "dark", "expected true or false"),
    (('name = "broken"', 'name = "other"'), 3, "name", "'other' differs from the file name"),
]


@pytest.mark.parametrize(("change", "line", "key", "problem"), BAD_THEMES)
def test_a_broken_file_says_where_and_what(
    tmp_path: Path, change: tuple[str, str], line: int | None, key: str, problem: str
) -> None:
    path = user_theme(tmp_path, "broken", **{change[0]: change[1]})
    with pytest.raises(ThemeError) as info:
        theme.load_file(path)
    err = info.value
    assert (err.path, err.line, err.key) == (path, line, key)
    assert problem in err.problem
    where = f"{path}:{line}:" if line else f"{path}:"
    assert str(err) == f"{where}{f' {key}:' if key else ''} {err.problem}"


def test_a_broken_user_theme_is_left_out_and_the_default_used(tmp_path: Path) -> None:
    user = tmp_path / "themes"
    broken = user_theme(user, "broken", **{"[log]": "[logs]"})
    user_theme(user, "gdn-light", **{'info = "#1F2328"': 'info = "#zz"'})  # a broken override
    themes = theme.load_all(user)
    assert sorted(e.path.name for e in themes.errors) == ["broken.toml", "gdn-light.toml"]
    assert themes.get("broken").name == "gdn-dark"
    assert themes.themes["gdn-light"].path == theme.themes_dir() / "gdn-light.toml"  # the shipped one stays
    messages = themes.messages("broken")
    assert messages[0].startswith(f"{broken}:18: logs: unknown key") and messages[0].endswith(
        "(using gdn-dark)"
    )
    assert messages[1].endswith("(using the shipped gdn-light)")
    assert themes.messages("gdn-dark")[0].endswith("(theme 'broken' left out)")
    with pytest.raises(UnknownThemeError):
        themes.get("nope")


# -- choosing one ------------------------------------------------------------------------------------


def hosts_file(tmp_path: Path, console: str = "") -> Path:
    path = tmp_path / "hosts.toml"
    path.write_text(f'{console}\n[hosts.ct129]\nssh = "root@ct129"\n', encoding="utf-8")
    return path


def test_option_wins_over_the_hosts_file_which_wins_over_the_default(tmp_path: Path) -> None:
    plain = config_hosts.load(hosts_file(tmp_path))
    assert theme.select(None, plain) == "gdn-dark"
    assert theme.select("gdn-light", plain) == "gdn-light"
    configured = config_hosts.load(hosts_file(tmp_path, '[console]\ntheme = "gdn-high-contrast"\n'))
    assert theme.select(None, configured) == "gdn-high-contrast"
    assert theme.select("gdn-light", configured) == "gdn-light"
    user_theme(tmp_path / "themes", "mine")
    assert theme.select("mine", configured) == "mine"


def test_unknown_names_list_the_available_themes(tmp_path: Path) -> None:
    user_theme(tmp_path / "themes", "mine")
    cfg = config_hosts.load(hosts_file(tmp_path, '[console]\ntheme = "solarized"\n'))
    with pytest.raises(UnknownThemeError) as info:
        theme.select("nope", cfg)
    assert str(info.value) == "no theme 'nope' (available: gdn-dark, gdn-high-contrast, gdn-light, mine)"
    with pytest.raises(ConfigError) as located:
        theme.select(None, cfg)
    assert str(located.value) == (
        f"{tmp_path / 'hosts.toml'}:2: console.theme: "
        "no theme 'solarized' (available: gdn-dark, gdn-high-contrast, gdn-light, mine)"
    )


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    """What `run_dashboard` / `run_log_view` were called with (no app is started)."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr("gdnconsole.ui.app.run_dashboard", lambda hosts, **kw: calls.append(kw))
    monkeypatch.setattr("gdnconsole.ui.screens.logscreen.run_log_view", lambda path, **kw: calls.append(kw))
    monkeypatch.setattr("gdnconsole.cli.opener.interactive", lambda: True)
    monkeypatch.setenv(config_hosts.CONFIG_ENV, str(hosts_file(tmp_path, '[console]\ntheme = "gdn-light"\n')))
    return calls


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["ct129"], "gdn-light"),
        (["ct129", "--theme", "gdn-high-contrast"], "gdn-high-contrast"),
        (["--theme", "gdn-dark", "ct129"], "gdn-dark"),
        (["--theme", "gdn-dark"], "gdn-dark"),  # the host picker
        (["log", "view", "LOG", "--theme", "gdn-high-contrast"], "gdn-high-contrast"),
        (["log", "view", "LOG"], "gdn-light"),
    ],
)
def test_the_commands_that_open_the_ui_take_the_theme(
    opened: list[dict[str, Any]], tmp_path: Path, args: list[str], expected: str
) -> None:
    log = tmp_path / "a.log"
    log.write_text("[2026-11-30 09:00:00] hello\n")
    result = CliRunner().invoke(main, [str(log) if a == "LOG" else a for a in args])
    assert result.exit_code == 0, result.output
    [call] = opened
    assert call["theme_name"] == expected and call["user_themes"] == tmp_path / "themes"


@pytest.mark.parametrize(
    "args",
    [
        ["ct129", "--theme", "nope"],
        ["--theme", "nope", "ct129"],
        ["demo", "--theme", "nope"],
        ["log", "view", "LOG", "--theme", "nope"],
    ],
)
def test_an_unknown_theme_exits_2_before_the_ui_opens(
    opened: list[dict[str, Any]], tmp_path: Path, args: list[str]
) -> None:
    log = tmp_path / "a.log"
    log.write_text("[2026-11-30 09:00:00] hello\n")
    result = CliRunner().invoke(main, [str(log) if a == "LOG" else a for a in args])
    assert result.exit_code == 2
    assert result.output == (
        "gdnconsole: error: no theme 'nope' (available: gdn-dark, gdn-high-contrast, gdn-light)\n"
    )
    assert opened == []


def test_log_view_opens_despite_a_broken_hosts_file(opened: list[dict[str, Any]], tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("[hosts.a]\nlocal = 3\n")
    log = tmp_path / "a.log"
    log.write_text("[2026-11-30 09:00:00] hello\n")
    result = CliRunner().invoke(main, ["log", "view", str(log)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"gdnconsole: warning: {hosts}:2: hosts.a.local: expected true or false")
    [call] = opened
    assert call.pop("remember").keywords == {"over": None}  # a theme picked in the palette is kept
    assert call == {"follow": False, "theme_name": "gdn-dark", "user_themes": tmp_path / "themes"}


# -- in the app ----------------------------------------------------------------------------------------


def fixed_app(
    theme_name: str = "gdn-dark", themes: theme.ThemeSet | None = None
) -> Callable[[Path], DashboardApp]:
    def make(tmp_path: Path) -> DashboardApp:
        sessions = [serving_session(tmp_path), crashed_session(tmp_path), refused_session(tmp_path)]
        return DashboardApp(sessions, start=False, clock=fixed_clock, theme_name=theme_name, themes=themes)

    return make


def test_dashboard_in_gdn_light(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(fixed_app("gdn-light")(tmp_path), terminal_size=SIZE, run_before=after())


def test_dashboard_in_gdn_high_contrast(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(fixed_app("gdn-high-contrast")(tmp_path), terminal_size=SIZE, run_before=after())


async def test_the_theme_picker_offers_exactly_the_themes_with_log_colours(tmp_path: Path) -> None:
    user_theme(tmp_path / "themes", "mine")
    app = fixed_app(themes=theme.load_all(tmp_path / "themes"))(tmp_path)
    assert sorted(app.available_themes) == [*SHIPPED, "mine"]
    assert app.theme == "gdn-dark"


def screen_diff(started: str, switched: str) -> str:
    """What differs between two screenshots: their text, row by row, else their styles."""
    rows = [re.findall(r">([^<]*)</text>", svg) for svg in (started, switched)]
    lines = list(difflib.unified_diff(*rows, "started", "switched", lineterm="", n=0))
    return "\n".join(lines[:40]) or "the same text, in other colours or styles"


def log_view_app(theme_name: str) -> Callable[[Path], LogViewApp]:
    def make(tmp_path: Path) -> LogViewApp:
        log = write_log(tmp_path / "sglang_serve.log", ct129_lines())
        return LogViewApp(log, poll_interval=None, theme_name=theme_name)

    return make


@pytest.mark.parametrize(("kind", "target"), [("dashboard", "gdn-light"), ("log view", "gdn-high-contrast")])
async def test_switching_theme_repaints_everything_in_the_new_colours(
    tmp_path: Path, kind: str, target: str
) -> None:
    """Switching at runtime looks exactly like starting in that theme: no colour of the old one is left."""
    make = fixed_app if kind == "dashboard" else log_view_app
    screenshots: dict[str, str] = {}
    for name, start in (("started", target), ("switched", "gdn-dark")):
        (tmp_path / name).mkdir()
        app = make(start)(tmp_path / name)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            palette = app.palette
            if name == "switched":
                app.theme = target
                await settle(pilot)
                await pilot.pause(0.1)
                assert app.palette is palette  # changed in place: the widgets hold this object
            assert palette.stages[Stage.READY] == theme.load(target)[1].stages[Stage.READY]
            screenshots[name] = app.export_screenshot().replace(str(tmp_path / name), "")
    dark = log_colors(shipped_data("gdn-dark"))
    stale = {k: c for k, c in dark.items() if c.lower() in screenshots["switched"]}
    assert not stale
    assert screenshots["switched"] == screenshots["started"], screen_diff(
        screenshots["started"], screenshots["switched"]
    )


async def test_a_broken_theme_is_a_toast_and_the_app_starts_in_the_default(tmp_path: Path) -> None:
    broken = user_theme(tmp_path / "themes", "broken", **{'loading = "#0A5CC2"': 'loading = "blu"'})
    log = tmp_path / "a.log"
    log.write_text("[2026-11-30 09:00:00] hello\n")
    themes = theme.load_all(tmp_path / "themes")
    app = LogViewApp(log, theme_name="broken", themes=themes, poll_interval=None)
    toasts: list[tuple[str, str]] = []
    app.notify = lambda message, **kw: toasts.append((message, kw.get("severity", "")))  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "gdn-dark"
    assert toasts == [
        (f'{broken}:22: log.loading: "blu" is not a colour ({theme.COLOR_FORMS}) (using gdn-dark)', "error")
    ]
