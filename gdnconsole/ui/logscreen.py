"""`gdnconsole log view FILE [--follow]`: the log pane on one file, with help, quit and the footer."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import Worker

from gdnconsole.logdoc import FilterSpec
from gdnconsole.ui import theme
from gdnconsole.ui.help import HelpScreen, Section
from gdnconsole.ui.logpane import POLL_S, LogPane, StatusBar
from gdnconsole.ui.logview import LogView
from gdnconsole.ui.prompts import FilterScreen, SearchScreen
from gdnconsole.ui.theme import LogPalette
from gdnconsole.ui.timeline import Timeline, TimelineData

__all__ = ["LogScreen", "LogViewApp", "StatusBar", "log_help_sections", "run_log_view"]


def log_help_sections(screen_bindings: list[BindingType]) -> list[Section]:
    """The log pane's keys, with the keys of the screen that holds it (the dashboard reuses this)."""
    return [
        ("log view", [*LogPane.BINDINGS, *screen_bindings]),
        ("log lines", LogView.BINDINGS),
        ("filter dialog", FilterScreen.BINDINGS),
        ("search prompt", SearchScreen.BINDINGS),
        ("this help", HelpScreen.BINDINGS),
    ]


class LogScreen(Screen[None]):
    """One log file in the log pane, and the footer."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark,f1", "help", "Help", key_display="?", id="log.help"),
        Binding("q", "quit", "Quit", id="log.quit"),
    ]

    def __init__(
        self, path: Path, palette: LogPalette, *, follow: bool = False, poll_interval: float | None = POLL_S
    ) -> None:
        super().__init__()
        self.path = path
        self.palette = palette
        self._follow = follow
        self.poll_interval = poll_interval

    def compose(self) -> ComposeResult:
        yield LogPane(self.path, self.palette, follow=self._follow, poll_interval=self.poll_interval)
        yield Footer()

    def on_mount(self) -> None:
        self.view.focus()

    # The pane holds the state; these keep the screen's old surface for callers and tests.

    @property
    def pane(self) -> LogPane:
        return self.query_one(LogPane)

    @property
    def view(self) -> LogView:
        return self.pane.view

    @property
    def timeline(self) -> Timeline:
        return self.pane.timeline

    @property
    def timeline_data(self) -> TimelineData | None:
        return self.pane.timeline_data

    @property
    def follow(self) -> bool:
        return self.pane.follow

    @property
    def busy(self) -> str:
        return self.pane.busy

    @property
    def filter_spec(self) -> FilterSpec:
        return self.pane.filter_spec

    @property
    def search_pattern(self) -> str:
        return self.pane.search_pattern

    @search_pattern.setter
    def search_pattern(self, pattern: str) -> None:
        self.pane.search_pattern = pattern

    def poll(self) -> Worker[None] | None:
        return self.pane.poll()

    def apply_filter(self, spec: FilterSpec | None) -> None:
        self.pane.apply_filter(spec)

    def action_help(self) -> None:
        self.app.push_screen(
            HelpScreen([*log_help_sections(self.BINDINGS), ("application", self.app.BINDINGS)])
        )

    async def action_quit(self) -> None:
        self.app.exit()


class LogViewApp(App[None]):
    """The `log view` app: one LogScreen on one file."""

    TITLE = "gdnconsole log view"

    def __init__(
        self,
        path: Path,
        *,
        follow: bool = False,
        theme_name: str = theme.DEFAULT_THEME,
        poll_interval: float | None = POLL_S,
    ) -> None:
        super().__init__()
        self.path = path
        self.follow = follow
        self.poll_interval = poll_interval
        textual_theme, self.palette = theme.load(theme_name)
        self.register_theme(textual_theme)
        self.theme = textual_theme.name
        self.sub_title = str(path)

    def on_mount(self) -> None:
        self.push_screen(
            LogScreen(self.path, self.palette, follow=self.follow, poll_interval=self.poll_interval)
        )

    @property
    def log_screen(self) -> LogScreen:
        screen = self.screen_stack[1] if len(self.screen_stack) > 1 else self.screen
        assert isinstance(screen, LogScreen)
        return screen


def run_log_view(path: Path, follow: bool = False) -> None:
    """Open the log view on ``path`` (the caller checked it is a readable text file)."""
    LogViewApp(path, follow=follow).run()
