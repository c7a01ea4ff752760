"""Every colour in the UI comes from the theme: no module under gdnconsole/ui names a colour of its own
(``Style(color="red")``, ``"bold green"``, ``"#FF0000"``, ``[yellow]`` markup, ``color: red`` in CSS).
Text built in code takes its styles from ``ui/tones.py`` (the Textual theme) or the ``LogPalette`` (the
theme's log colours); CSS uses the theme's variables. ui/theme.py, which reads the theme files, and
ui/fewcolours.py, which fits them to a 256- or 16-colour terminal's palette, are the modules left out."""

from __future__ import annotations

import ast
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.color import ColorType
from rich.errors import StyleSyntaxError
from rich.style import Style
from textual.color import Color, ColorParseError
from textual.pilot import Pilot
from textual.widgets import TextArea

import gdnconsole.ui
from gdnconsole.host.journal import Journal
from gdnconsole.ui.app import DashboardApp
from tests.ui import screens
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, fixed_clock, serving_session, until
from tests.ui.form_helpers import field_error, form_session, hosts_file, open_form, shown
from tests.ui.screens import JOURNAL_DIR, journal_open, journey, relaunch_asked, verified
from tests.ui.test_themes import screen_diff

UI = Path(gdnconsole.ui.__file__).parent
ROOT = UI.parent.parent
# theme.py reads the theme files, and fewcolours.py fits them to a terminal's palette: colours are their data.
LEFT_OUT = {"gdnconsole/ui/theme.py", "gdnconsole/ui/fewcolours.py"}
# Whole files not checked yet, each with the reason.
UNCHECKED_FILES: dict[str, str] = {}
# Names whose strings are words, not colours: (file, the name a tuple of them is assigned to).
WORDS = {("gdnconsole/ui/widgets/promptform.py", "colours")}  # the long-context prompt's inventory

CSS_DECLARATION = re.compile(
    r"(?P<prop>[a-z-]*(?:color|background|border|outline|tint)[a-z-]*)\s*:\s*(?P<value>[^;}]*)"
)
MARKUP_TAG = re.compile(r"\[(?P<tag>[^\[\]/][^\[\]]*)\]")
CSS_KEYWORDS = {"transparent", "auto", "initial", "inherit"}


def named_colour(style: str) -> bool:
    """A Rich style string that names a colour (``red``, ``bold green``, ``on #101418``); ``default`` (the
    terminal's own colour) is not one."""
    try:
        parsed = Style.parse(style)
    except StyleSyntaxError:
        return False
    return any(c is not None and c.type is not ColorType.DEFAULT for c in (parsed.color, parsed.bgcolor))


def css_colour(value: str) -> bool:
    """A CSS value with a colour of its own in it (``red``, ``#FFF``, ``rgb(…)``), not a ``$variable``."""
    value = re.sub(r"\$[a-z-]+", "", value)  # $primary, $error 20%…
    for word in re.findall(r"#[0-9A-Fa-f]+|(?:rgb|rgba|hsl|hsla)\([^)]*\)|[A-Za-z_]+", value):
        if word.lower() in CSS_KEYWORDS:
            continue
        try:
            Color.parse(word)
        except ColorParseError:
            continue
        return True
    return False


def problems_in(text: str) -> Iterator[str]:
    """What in one string literal names a colour."""
    if named_colour(text):
        yield f"style {text!r}"
    if "{" in text and ":" in text:  # Textual CSS
        for declaration in CSS_DECLARATION.finditer(text):
            if css_colour(declaration["value"]):
                yield f"CSS {declaration['prop']}: {declaration['value'].strip()}"
    for tag in MARKUP_TAG.finditer(text):  # Rich or Textual markup
        if named_colour(tag["tag"]):
            yield f"markup [{tag['tag']}]"


def words(tree: ast.AST, path: str) -> set[int]:
    """The ids of the string nodes that are words, not colours (WORDS)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
            if any((path, name) in WORDS for name in names):
                out |= {id(n) for n in ast.walk(node.value) if isinstance(n, ast.Constant)}
    return out


def hard_coded_colours(source: str, path: str) -> list[str]:
    """``path:line: what`` for each colour the source names."""
    tree = ast.parse(source)
    allowed = words(tree, path)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):  # Style(color=some_name) is fine; Style(color="red") is not
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg in ("color", "bgcolor") and isinstance(value, ast.Constant):
                    found.append(f"{path}:{node.lineno}: {keyword.arg}={value.value!r}")
                    allowed.add(id(value))  # said once
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed:
            found += [f"{path}:{node.lineno}: {problem}" for problem in problems_in(node.value)]
    return sorted(set(found), key=lambda line: (int(line.split(":")[1]), line))


def test_no_module_of_the_ui_names_a_colour() -> None:
    found: list[str] = []
    for path in sorted(UI.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in LEFT_OUT and rel not in UNCHECKED_FILES:
            found += hard_coded_colours(path.read_text(encoding="utf-8"), rel)
    assert not found, "colours not from the theme (use ui/tones.py or the LogPalette):\n" + "\n".join(found)


def test_the_unchecked_files_still_exist() -> None:
    """An allowance for a file that is gone or renamed would go on hiding nothing: remove it."""
    for rel in (*LEFT_OUT, *UNCHECKED_FILES):
        assert (ROOT / rel).is_file(), rel
    for rel, _name in WORDS:
        assert (ROOT / rel).is_file(), rel


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('Style(color="red", bold=True)', ["x.py:1: color='red'"]),
        ('Style(bgcolor="#101418")', ["x.py:1: bgcolor='#101418'"]),
        ('text.append("  following", "bold green")', ["x.py:1: style 'bold green'"]),
        ('Text("x", "on blue")', ["x.py:1: style 'on blue'"]),
        ('Static("[bold yellow]careful[/]")', ["x.py:1: markup [bold yellow]"]),
        ('CSS = "Foo { color: red; background: $panel; }"', ["x.py:1: CSS color: red"]),
        ('CSS = "Foo { border: round #FF0000; }"', ["x.py:1: CSS border: round #FF0000"]),
        # Not colours: the theme's variables and styles, Rich styles without a colour, plain words.
        ('CSS = "Foo { background: $error 20%; border: round $warning; color: $text-muted; }"', []),
        ('CSS = "Foo { background: transparent; }"', []),
        ("Style(color=colours[name], bold=True)", []),
        ('Text("x", "bold"); Text("y", "dim italic"); Text("z", "default")', []),
        ('"""The red line, in green when it is ready."""', []),
        ('Text(f"[{finding.id} · {finding.source}]")', []),
    ],
)
def test_what_the_check_finds(source: str, expected: list[str]) -> None:
    assert hard_coded_colours(source, "x.py") == expected


def test_a_word_list_is_not_a_colour_list_only_where_allowed() -> None:
    source = 'def f():\n    colours = ("red", "green")\n'
    assert hard_coded_colours(source, "gdnconsole/ui/widgets/promptform.py") == []
    assert hard_coded_colours(source, "gdnconsole/ui/widgets/other.py") == [
        "gdnconsole/ui/widgets/other.py:2: style 'green'",
        "gdnconsole/ui/widgets/other.py:2: style 'red'",
    ]


# -- switching theme at runtime: the text built in code follows -------------------------------------------

Steps = Callable[[Pilot[Any]], Awaitable[None]]
Make = Callable[[Path, str], tuple[DashboardApp, Steps]]  # a work folder and a theme -> the app, the steps


def form_in(tmp_path: Path, theme_name: str) -> tuple[DashboardApp, Steps]:
    """The flag form with a rule error, notices and the parsed extra args (form_with_error's, themed)."""
    path = hosts_file(tmp_path)
    app = DashboardApp(
        [form_session(tmp_path, path)],
        start=False,
        clock=fixed_clock,
        config_path=str(path),
        theme_name=theme_name,
    )

    async def steps(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        form = await open_form(pilot)
        form.query_one("#ff-args", TextArea).load_text("--log-level debug")

        def checked() -> bool:  # the args read, then the rules run on them (after the pause in typing)
            verdicts = shown(form, "#ff-verdicts")
            return "debug" in shown(form, "#ff-args-parsed") and "our rules (" in verdicts

        assert await until(pilot, checked, 5)
        assert field_error(form, "eagle_topk")
        form.query_one("#ff-model").focus()
        await settle(pilot)

    return app, steps


def journal_in(tmp_path: Path, theme_name: str) -> tuple[DashboardApp, Steps]:
    """The journal of the five attempts (every outcome, a rule, a fatal error, warnings, a diff)."""
    journal = Journal("ct129", tmp_path / JOURNAL_DIR / "ct129.jsonl")
    for attempt in journey():
        journal.record(attempt)
    app = screens.fixed_app(
        verified(serving_session(tmp_path)), theme_name=theme_name, journal_dir=JOURNAL_DIR
    )
    return app, journal_open


def relaunch_in(tmp_path: Path, theme_name: str) -> tuple[DashboardApp, Steps]:
    """The relaunch confirmation and its diff, over the dashboard (its status bar: VERIFIED)."""
    return screens.fixed_app(verified(serving_session(tmp_path)), theme_name=theme_name), relaunch_asked


async def screenshot(
    make: Make, folder: Path, start: str, switch_to: str | None, monkeypatch: pytest.MonkeyPatch
) -> str:
    folder.mkdir()
    monkeypatch.chdir(folder)  # the journal's folder is relative
    app, steps = make(folder, start)
    async with app.run_test(size=SIZE) as pilot:
        await steps(pilot)
        if switch_to is not None:
            app.theme = switch_to
            await settle(pilot)
            await pilot.pause(0.1)
        # A blinking cursor is drawn or not by the time of the capture: hold it still (a loaded CI run
        # caught one screenshot with the field's cursor off, the other with it on).
        for field in app.screen.query("Input, TextArea"):
            field.cursor_blink = False  # type: ignore[attr-defined]
        await pilot.pause()
        return app.export_screenshot().replace(str(folder), "")


@pytest.mark.parametrize("make", [form_in, journal_in, relaunch_in], ids=["form", "journal", "relaunch"])
@pytest.mark.parametrize("target", ["gdn-light", "gdn-high-contrast"])
async def test_switching_theme_repaints_the_text_built_in_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Make, target: str
) -> None:
    """The form, the journal and the relaunch dialog switched to ``target`` look exactly as started in it."""
    started = await screenshot(make, tmp_path / "started", target, None, monkeypatch)
    dark = await screenshot(make, tmp_path / "dark", "gdn-dark", None, monkeypatch)
    switched = await screenshot(make, tmp_path / "switched", "gdn-dark", target, monkeypatch)
    assert dark != started
    assert switched == started, screen_diff(started, switched)
