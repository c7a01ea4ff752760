"""`gdnconsole log view FILE [--follow]`: the log pane on one file, with help, quit and the footer; and
ThemedApp, the base of this app and the dashboard's: themes registered, chosen and switched at runtime."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.worker import Worker

from gdnconsole.logs.document import FilterSpec
from gdnconsole.logs.textsafe import visible
from gdnconsole.ui import fewcolours, screenlist, theme
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.keybar import KeyBar
from gdnconsole.ui.theme import DEFAULT_THEME, LogPalette, ThemeSet
from gdnconsole.ui.widgets.logpane import POLL_S, LogPane, StatusBar
from gdnconsole.ui.widgets.logview import LogView
from gdnconsole.ui.widgets.timeline import Timeline, TimelineData

__all__ = [
    "LogScreen",
    "LogViewApp",
    "StatusBar",
    "ThemedApp",
    "run_log_view",
    "warn_theme_errors",
]


class LogScreen(Screen[None]):
    """One log file in the log pane, and the footer."""

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("log view").own

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
        yield KeyBar()

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
        self.app.push_screen(HelpScreen(screen="log view"))  # in the app's keymap, as the footer says

    async def action_quit(self) -> None:
        self.app.exit()


# The longest a toast shows, by severity (seconds).
TOAST_S: dict[SeverityLevel, float] = {"information": 4.0, "warning": 8.0, "error": 12.0}


class ThemedApp(App[None]):
    """An app in gdnconsole's themes: every theme registered (so Textual's "Change theme" command lists
    them, and only them: each has its log colours), one log palette that the widgets share and that
    follows the theme, and what was wrong with broken theme files shown as a toast. Toasts show at the
    top right, under the first row: at the bottom they covered the last log rows, where a crash lands."""

    CSS = """
    ToastRack { dock: top; align: right top; margin-top: 1; }
    Toast { width: 52; max-width: 45%; }
    """

    def __init__(self, theme_name: str = DEFAULT_THEME, themes: ThemeSet | None = None) -> None:
        """``theme_name``: the theme to start in (the default when its file is broken; an unknown name
        raises UnknownThemeError); ``themes``: the themes to offer (None: the shipped ones)."""
        super().__init__()
        self.themes = themes if themes is not None else theme.load_all()
        chosen = self.themes.get(theme_name)
        self.theme_errors = self.themes.messages(theme_name)
        for loaded in self.themes.themes.values():
            self.register_theme(loaded.theme)
        self.palette: LogPalette = chosen.palette.copy()
        self.theme = chosen.name
        for name in set(self.available_themes) - set(self.themes.themes):
            self.unregister_theme(name)  # Textual's own: they have no log colours
        self.remember: Callable[[str], None] | None = None  # keeps a theme picked while running

    def fit_colours(self, colours: int | None = None) -> None:
        """Offer the themes as a terminal of ``colours`` colours can show them (ui/fewcolours.py); None:
        as many as this terminal reports. Called before the app runs."""
        count = fewcolours.colours_of(self.console.color_system) if colours is None else colours
        for loaded in self.themes.themes.values():
            self.register_theme(fewcolours.for_terminal(loaded.theme, count))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast is plain text: its messages carry what hosts and logs said (a fatal summary, an
        agent's refusal), which is data, never markup, and never a terminal escape."""
        del markup  # the console's own messages use none; Widget.notify always passes True
        longest = TOAST_S[severity]  # short: a toast covers what is under it while it shows
        shown = longest if timeout is None else min(timeout, longest)
        super().notify(visible(message), title=visible(title), severity=severity, markup=False, timeout=shown)

    def on_mount(self) -> None:
        for message in self.theme_errors:
            self.notify(message, title="Theme", severity="error", timeout=20)

    @property
    def keymap(self) -> dict[str, str]:
        """The keymap in force (binding id → keys, as ``set_keymap`` normalized it): help shows it."""
        return dict(self._keymap)

    def watch_theme(self, name: str) -> None:
        loaded = self.themes.themes.get(name)
        if loaded is None or not hasattr(self, "palette"):  # not one of ours, or set before __init__ ends
            return
        self.palette.assign(loaded.palette)
        if self.is_running:
            self.call_after_refresh(self.repaint_palette)
            self._remember(name)

    def _remember(self, name: str) -> None:
        """A theme picked while the app runs (the palette) is the one the next start opens in."""
        if self.remember is None:
            return
        try:
            self.remember(name)
        except OSError as exc:
            self.notify(f"the theme is not remembered for the next start: {exc}", severity="warning")

    def repaint_palette(self) -> None:
        """Draw again what was drawn in the old palette's colours (the CSS colours follow by themselves)."""
        for screen in self.screen_stack:
            for timeline in screen.query(Timeline):
                timeline.show(timeline.data)  # a Static: its text was built in the old colours
            for widget in screen.query("*"):
                widget.refresh()  # the log lines and the GPU bars take the palette's colours as they paint


def warn_theme_errors(themes: ThemeSet, chosen: str) -> None:
    """Broken theme files, on stderr before the screen takes the terminal (the app shows them too)."""
    for message in themes.messages(chosen):
        print(f"gdnconsole: warning: {message}", file=sys.stderr)


class LogViewApp(ThemedApp):
    """The `log view` app: one LogScreen on one file."""

    TITLE = "gdnconsole log view"

    def __init__(
        self,
        path: Path,
        *,
        follow: bool = False,
        theme_name: str = DEFAULT_THEME,
        themes: ThemeSet | None = None,
        poll_interval: float | None = POLL_S,
        keymap: Mapping[str, str] | None = None,
        notice: str | None = None,
    ) -> None:
        """``keymap``: binding id → keys for the log view's bindings (checked by ui/keymap.py);
        ``notice``: what to say of the file as it opens (that it is not an SGLang log)."""
        super().__init__(theme_name, themes)
        self.notice = notice
        if keymap:
            self.set_keymap(keymap)
        self.path = path
        self.follow = follow
        self.poll_interval = poll_interval
        self.sub_title = visible(str(path))  # a file's name may hold an escape too

    def on_mount(self) -> None:  # (ThemedApp's on_mount runs too: Textual calls each class's handler)
        self.push_screen(
            LogScreen(self.path, self.palette, follow=self.follow, poll_interval=self.poll_interval)
        )
        if self.notice:
            self.notify(self.notice, severity="warning")

    @property
    def log_screen(self) -> LogScreen:
        screen = self.screen_stack[1] if len(self.screen_stack) > 1 else self.screen
        assert isinstance(screen, LogScreen)
        return screen


def run_log_view(
    path: Path,
    follow: bool = False,
    *,
    theme_name: str = DEFAULT_THEME,
    user_themes: Path | None = None,
    keymap: Mapping[str, str] | None = None,
    remember: Callable[[str], None] | None = None,
    notice: str | None = None,
) -> None:
    """Open the log view on ``path`` (the caller checked it is a readable text file) in ``theme_name``
    (the caller checked it exists), offering the shipped themes and those in ``user_themes``, with the
    user's ``keymap``; ``remember`` keeps a theme picked in the palette for the next start; ``notice``:
    what to say of the file as it opens."""
    themes = theme.load_all(user_themes)
    warn_theme_errors(themes, theme_name)
    app = LogViewApp(path, follow=follow, theme_name=theme_name, themes=themes, keymap=keymap, notice=notice)
    app.remember = remember
    app.fit_colours()
    app.run()
