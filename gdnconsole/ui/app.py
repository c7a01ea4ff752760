"""The dashboard app: `gdnconsole HOST…` (a tab per host), plain `gdnconsole` (the host picker first),
and `gdnconsole demo` (the simulated host with its server starting)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from textual import events
from textual.app import ScreenStackError, SystemCommand
from textual.css.query import NoMatches
from textual.notifications import Notification
from textual.screen import Screen
from textual.widgets._toast import ToastRack

from gdnconsole.config.hosts import Host
from gdnconsole.host import mirrordir
from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible
from gdnconsole.ui import theme, toastlimit
from gdnconsole.ui.commands import binding_commands
from gdnconsole.ui.screens.dashboard import DASHBOARD_KEYMAP, DashboardScreen, HostChanged
from gdnconsole.ui.screens.hostpicker import HostPickerScreen
from gdnconsole.ui.screens.logscreen import ThemedApp, warn_theme_errors
from gdnconsole.ui.theme import ThemeSet
from gdnconsole.ui.widgets.statusbar import Clock

SessionFactory = Callable[[Host, int], HostSession]


def mirror_sessions(directory: Path) -> SessionFactory:
    """HostSessions whose log mirrors live in ``directory`` (one file per open host)."""

    def make(host: Host, index: int) -> HostSession:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", host.name)
        return HostSession(host, mirror=directory / f"{index}-{safe}.log")

    return make


EXIT_SIGNALS = (signal.SIGHUP, signal.SIGTERM)


class DashboardApp(ThemedApp):
    TITLE = "gdnconsole"
    # On a small terminal toasts are compact, and the "+N more" line of the folded ones always is.
    CSS = (
        ThemedApp.CSS
        + """
    DashboardApp.-small Toast { padding: 0 1; margin-top: 0; }
    ToastHolder.-more Toast { padding: 0 1; margin-top: 0; text-style: italic; }
    """
    )

    def __init__(
        self,
        sessions: Sequence[HostSession] = (),
        *,
        choices: Sequence[Host] = (),
        factory: SessionFactory | None = None,
        config_path: str = "",
        start: bool = True,
        clock: Clock = time.time,
        theme_name: str = theme.DEFAULT_THEME,
        themes: ThemeSet | None = None,
        readonly: bool = False,
        journal_dir: Path | None = None,
        keymap: Mapping[str, str] | None = None,
        bell: bool = False,
        launch: Mapping[int, str] | None = None,
        exit_on_signals: bool = False,
        notices: Sequence[str] = (),
    ) -> None:
        """``notices``: what the command said before the screen opened (a demo port that was taken),
        shown again on it, where the user looks; ``launch``: host index -> a profile to launch once
        connected (DashboardScreen);
        ``exit_on_signals``: SIGTERM ends the app as `q` does, so that the caller's cleanup runs
        (`gdnconsole demo` stops the server it started); SIGHUP (the terminal went away, and with it every
        write Textual would make on the way out: its writer thread dies on the first, and a later one
        waits for ever) runs ``on_hangup`` and ends the process at once.

        Open ``sessions`` at once, or let the user pick among ``choices`` (``factory`` makes their
        sessions). ``start``: run the sessions (False for state set by hand); ``clock``: for uptimes;
        ``theme_name``, ``themes``: the theme to start in and those offered (ThemedApp);
        ``readonly``: no launch, relaunch or stop; ``journal_dir``: the launch journals' folder;
        ``keymap``: binding id → keys, the built-in DASHBOARD_KEYMAP merged with the user's (checked by
        ui/keymap.py; None: the built-in one); ``bell``: ring the terminal bell on alerts."""
        super().__init__(theme_name, themes)
        if not sessions and (not choices or factory is None):
            raise ValueError("give sessions, or choices and a factory")
        self.sessions = list(sessions)
        self.choices = list(choices)
        self.factory = factory
        self.config_path = config_path
        self.start = start
        self.clock = clock
        self.readonly = readonly
        self.journal_dir = journal_dir
        self.bell_on_alerts = bell
        self.launch = dict(launch or {})
        self.exit_on_signals = exit_on_signals
        self.notices = list(notices)
        self.on_hangup: list[Callable[[], None]] = []  # what must happen even when the terminal is gone
        self.set_keymap(DASHBOARD_KEYMAP if keymap is None else keymap)
        self._set_titles()

    def _set_titles(self) -> None:
        names = [visible(s.host.name) for s in self.sessions]  # a name typed as an ssh target, too
        self.sub_title = " · ".join([*names, *(["read-only"] * self.readonly)])

    def get_default_screen(self) -> Screen[Any]:
        # The dashboard is the first screen itself, not pushed on an empty one from on_mount: Textual
        # composes and lays out the first screen with the app, so the first frame is painted once.
        return self._dashboard() if self.sessions else super().get_default_screen()

    def on_mount(self) -> None:
        if not self.sessions:
            self.push_screen(HostPickerScreen(self.choices, self.config_path), self._picked)
        for notice in self.notices:  # printed before the alternate screen hid it
            self.notify(notice, severity="warning")  # as long as a warning shows (logscreen.TOAST_S)
        if self.exit_on_signals:
            loop = asyncio.get_running_loop()
            for signum in EXIT_SIGNALS:
                loop.add_signal_handler(signum, self._exit_on_signal, signum)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < toastlimit.SMALL_HEIGHT, "-small")
        self._refresh_notifications()  # how many toasts fit follows the terminal's height

    def _refresh_notifications(self) -> None:
        """The active screen's toasts, newest first and only as many as fit (toastlimit), in place of
        Textual's every live one."""
        try:
            rack = self.screen.get_child_by_type(ToastRack)
        except (ScreenStackError, NoMatches):
            return
        room = getattr(self.screen, "toast_rows", lambda: self.size.height // 3)()
        self.call_later(toastlimit.show, rack, list(self._notifications), self.size, room)

    def _unnotify(self, notification: Notification, refresh: bool = True) -> None:
        super()._unnotify(notification, refresh=True)  # a shown toast ended: a folded one takes its place

    def on_unmount(self) -> None:
        if self.exit_on_signals:
            loop = asyncio.get_running_loop()
            for signum in EXIT_SIGNALS:
                loop.remove_signal_handler(signum)

    def _exit_on_signal(self, signum: signal.Signals) -> None:
        if signum == signal.SIGHUP:
            for cleanup in self.on_hangup:
                cleanup()
            os._exit(128 + signum)  # the agents exit as their stdin closes; there is no screen to restore
        self.run_worker(self._leave(128 + signum), group="quit", exit_on_error=False)

    def _dashboard(self) -> DashboardScreen:
        return DashboardScreen(
            self.sessions,
            self.palette,
            self.clock,
            start=self.start,
            readonly=self.readonly,
            config_path=Path(self.config_path) if self.config_path else None,
            journal_dir=self.journal_dir,
            bell=self.bell_on_alerts,
            launch=self.launch,
        )

    def _picked(self, hosts: list[Host] | None) -> None:
        if not hosts:
            self.exit()
            return
        assert self.factory is not None
        self.sessions = [self.factory(host, i) for i, host in enumerate(hosts)]
        self._set_titles()
        self.push_screen(self._dashboard())

    def repaint_palette(self) -> None:
        super().repaint_palette()
        # The status bars, GPU messages and overview rows are text built from the session's state in the
        # palette's colours: build them again, as for any change the session reports.
        for screen in self.screen_stack:
            if isinstance(screen, DashboardScreen):
                for index in range(len(screen.sessions)):
                    screen.post_message(HostChanged(index))

    @property
    def dashboard(self) -> DashboardScreen:
        screen = next((s for s in self.screen_stack if isinstance(s, DashboardScreen)), None)
        assert screen is not None, "the dashboard is not open"
        return screen

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from binding_commands(screen)

    async def action_quit(self) -> None:
        await self._leave(0)

    async def _leave(self, return_code: int) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, DashboardScreen):
                screen.quitting = True  # no key opens anything while the sessions stop
        for session in self.sessions:
            await session.stop()  # agents exit when their stdin closes: leave none behind
        self.exit(return_code=return_code)


def run_dashboard(
    hosts: Sequence[Host],
    *,
    choices: Sequence[Host] = (),
    config_path: str = "",
    theme_name: str = theme.DEFAULT_THEME,
    user_themes: Path | None = None,
    keymap: Mapping[str, str] | None = None,
    bell: bool = False,
    readonly: bool = False,
    launch: Mapping[int, str] | None = None,
    exit_on_signals: bool = True,
    on_hangup: Sequence[Callable[[], None]] = (),
    notices: Sequence[str] = (),
    remember: Callable[[str], None] | None = None,
) -> None:
    """Open the dashboard on ``hosts`` (or the picker over ``choices`` when ``hosts`` is empty), in
    ``theme_name`` (the caller checked it exists), offering the shipped themes and those in
    ``user_themes``; ``keymap`` (checked, ui/keymap.py), ``bell``, ``readonly``, ``launch``,
    ``exit_on_signals`` and ``notices`` as DashboardApp's; ``on_hangup``: what must happen when the
    terminal closes, besides removing the mirrors of the hosts' logs (their temporary folder goes on
    every way out)."""
    themes = theme.load_all(user_themes)
    warn_theme_errors(themes, theme_name)
    with mirrordir.temporary() as tmp:
        factory = mirror_sessions(tmp)
        sessions = [factory(host, i) for i, host in enumerate(hosts)]
        app = DashboardApp(
            sessions,
            choices=choices,
            factory=factory,
            config_path=config_path,
            theme_name=theme_name,
            themes=themes,
            keymap=keymap,
            bell=bell,
            readonly=readonly,
            launch=launch,
            exit_on_signals=exit_on_signals,
            notices=notices,
        )
        app.on_hangup += [*on_hangup, lambda: shutil.rmtree(tmp, ignore_errors=True)]
        app.remember = remember  # a theme picked in the palette opens the next start
        app.fit_colours()
        app.run()
