"""The host dashboard: a tab per host (status bar, GPU panel, stage timeline and live log), and, when more
than one host is open, an overview row per host above the tabs.

The screen owns the HostSessions' run tasks (asyncio workers on the app's loop, so the first frame paints
before any link is up). A session's listener only posts a message (a newer one for the same host replaces
a queued one); the handler repaints that host's overview row, and its tab only when it is the one on
screen: a hidden tab does no work until it is shown, and then catches up (its log too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.widgets import ContentSwitcher
from textual.widgets._toast import ToastRack  # the screen's own rack: placed over the log
from textual.worker import Worker

from gdnconsole.config.hosts import Profile
from gdnconsole.host.journal import Journal
from gdnconsole.host.link import LinkState
from gdnconsole.host.session import HostSession
from gdnconsole.host.topics import Listener, Topic
from gdnconsole.sglang.launch import mask_known, profile_secrets
from gdnconsole.ui import screenlist
from gdnconsole.ui.models.alerts import HostAlerts, look
from gdnconsole.ui.screenlist import DASHBOARD_KEYMAP
from gdnconsole.ui.theme import LogPalette
from gdnconsole.ui.widgets.hostpane import HostPane
from gdnconsole.ui.widgets.keybar import KeyBar
from gdnconsole.ui.widgets.logpane import LogPane
from gdnconsole.ui.widgets.overview import Overview, OverviewRow
from gdnconsole.ui.widgets.statusbar import Clock

__all__ = ["DASHBOARD_KEYMAP", "DashboardScreen", "HostChanged", "LogGrew", "OverviewRow", "ServerExited"]

# The screens behind a key (the form with SGLang's flag tables, the journal, the prompt panel, launching)
# load when first opened: the first frame must not wait for them (bench/bench_first_frame.py).
if TYPE_CHECKING:
    from gdnconsole.ui.screens.flagform import FormResult
    from gdnconsole.ui.screens.journal import JournalResult
    from gdnconsole.ui.screens.launchcontrol import LaunchControl

HOST_ACTIONS = frozenset({"next_host", "previous_host", "host"})
LAUNCH_ACTIONS = screenlist.spec("dashboard").launching  # launch, relaunch, stop, tune
TICK_S = 1.0  # uptimes and "down since" move with the clock
READONLY_NOTE = Text("◉ read-only", Style(bold=True))  # in each host's status bar with --readonly
NARROW = 100  # columns below which the stage timeline gives its width to the log
SHORT = 30  # rows below which the panels lose their borders


class HostChanged(Message):
    """Session ``index`` reported a change; a newer one for the same host replaces a queued one."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, HostChanged) and message.index == self.index


class LogGrew(Message):
    """Host ``index``'s log grew or restarted; a newer one for the same host replaces a queued one."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LogGrew) and message.index == self.index


class FiguresChanged(Message):
    """Host ``index``'s serving figures were polled; a newer one for the same host replaces a queued one."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FiguresChanged) and message.index == self.index


class ServerExited(Message):
    """The agent saw the server of host ``index`` exit: its fatal summary is shown at once."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index


class DashboardScreen(Screen[None]):
    # The overview rows are the tab strip (numbered, the active one highlighted, a click opens one), so
    # the host panes sit in a plain switcher, without tabs: more rows for the log on a small terminal,
    # and fewer widgets (and mount steps) before the first frame.
    DEFAULT_CSS = """
    DashboardScreen #overview { height: auto; background: $surface; border-bottom: solid $panel; }
    DashboardScreen #hosts { height: 1fr; }
    DashboardScreen.-no-gpus GpuPanel { display: none; }
    DashboardScreen.-short #overview { border-bottom: none; }
    DashboardScreen.-short GpuPanel { border: none; }
    """

    # The log has the keys from the first frame: focusing it later recomposed the footer in a second one.
    AUTO_FOCUS = "#host-0 LogView"

    # The most used first: the key bar keeps this order and leaves out the last ones when narrow.
    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("dashboard").own

    def __init__(
        self,
        sessions: Sequence[HostSession],
        palette: LogPalette,
        clock: Clock,
        *,
        start: bool = True,
        readonly: bool = False,
        config_path: Path | None = None,
        journal_dir: Path | None = None,
        bell: bool = False,
        launch: Mapping[int, str] | None = None,
    ) -> None:
        """``readonly``: no launch, relaunch or stop keys; ``config_path``: where the form saves profiles;
        ``journal_dir``: the launch journals (None: the user data dir); ``bell``: ring the terminal bell
        on the alerts that ask for it (ui/alerts.py); ``launch``: host index -> the profile to launch once
        that host is connected, unless a server of this console's already runs there (`gdnconsole demo`:
        its server starts as any launch does, through the agent, journaled, its own process group)."""
        super().__init__()
        self.sessions = list(sessions)
        self.readonly = readonly
        self.bell = bell
        self.alerts = [HostAlerts(session.host.name) for session in self.sessions]
        self.config_path = config_path
        self.journal_dir = journal_dir
        self.journals: dict[int, Journal] = {}
        # The profile L and R launch, per host: the host's default until the form or the journal picks one.
        self.profiles: dict[int, Profile] = {}
        self._launches: LaunchControl | None = None
        self.palette = palette
        self.clock = clock
        self.start = start  # False: the sessions' state is set by the caller (snapshots)
        self.runners: dict[int, Worker[None]] = {}
        self.asking: set[int] = set()  # hosts whose key dialog is open
        self.declined: dict[int, str] = {}  # the fingerprint the user said no to, per host
        self.quitting = False
        self.to_launch = dict(launch or {})
        self.set_class(len(self.sessions) == 1, "-single")

    def compose(self) -> ComposeResult:
        if self.overview is not None:
            yield self.overview
        with ContentSwitcher(id="hosts", initial="host-0"):
            yield from self.panes
        yield KeyBar()

    @cached_property
    def panes(self) -> list[HostPane]:
        """A tab per host (held, not queried: a change of one host must not cost a search of all)."""
        return [HostPane(s, self.palette, self.clock, id=f"host-{i}") for i, s in enumerate(self.sessions)]

    @cached_property
    def overview(self) -> Overview | None:
        """A row per host, when there is more than one."""
        return Overview(self.sessions, self.palette, id="overview") if len(self.sessions) > 1 else None

    @cached_property
    def switcher(self) -> ContentSwitcher:
        return self.query_one("#hosts", ContentSwitcher)

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW
        if narrow != self.has_class("-narrow"):
            # Only when crossing the threshold, so that `t` still shows the timeline on a narrow screen.
            self.set_class(narrow, "-narrow")
            for pane in self.query(LogPane):
                pane.set_class(narrow, "-no-timeline")
        self.set_class(event.size.height < SHORT, "-short")
        self.call_after_refresh(self._place_toasts)
        if self.overview is not None:
            self.call_after_refresh(self.overview.repaint)  # its columns fit the new width

    def on_mount(self) -> None:
        for i, session in enumerate(self.sessions):
            session.subscribe(self._listener(i))
        if self.start:
            self.sessions[self.active_index].figures.want(self, True)  # the host on screen only
            # After the first frame: connecting loads asyncssh (~0.15 s) on this loop, and the screen
            # must be up before any link is.
            self.call_after_refresh(self._run_all)
        for i in range(len(self.sessions)):
            self._alert(i)  # the baseline: what is already there is not news
        self.set_interval(TICK_S, self._tick)
        self.call_after_refresh(self._focus_log)
        if self.readonly:
            self.call_after_refresh(self._tick)  # the read-only mark, before the first tick

    def _run_all(self) -> None:
        for i in range(len(self.sessions)):
            self._run(i)

    def _listener(self, index: int) -> Listener:
        """Called on the loop's thread by the session: post, never block."""

        def changed(topic: Topic) -> None:
            if topic == "figures":  # the strip alone: the rest of the tab did not change
                self.post_message(FiguresChanged(index))
                return
            if topic == "log":
                self.post_message(LogGrew(index))  # and the stage on the status bar may have moved
            self.post_message(ServerExited(index) if topic == "server_exit" else HostChanged(index))

        return changed

    # -- hosts -----------------------------------------------------------------------------------------

    def host_pane(self, index: int) -> HostPane:
        return self.panes[index]

    @property
    def active_index(self) -> int:
        active = self.switcher.current
        return int(active.removeprefix("host-")) if active else 0

    def _run(self, index: int) -> None:
        session = self.sessions[index]
        self.runners[index] = self.run_worker(
            session.run(), name=f"session {session.host.name}", group="sessions", exit_on_error=False
        )

    def on_host_changed(self, message: HostChanged) -> None:
        index = message.index
        if self.overview is not None:
            self.overview.changed(index)
        if index == self.active_index:
            self.panes[index].refresh_host()
        self._maybe_ask_host_key(index)
        self._alert(index)
        self._launch_when_connected(index)

    def _launch_when_connected(self, index: int) -> None:
        """The launch asked for at start, once the host's picture is whole (its pid file read)."""
        name = self.to_launch.get(index)
        session = self.sessions[index]
        if name is None or not (session.complete and session.pidfile_seen) or self.quitting:
            return
        del self.to_launch[index]
        if session.launched_alive:  # ours already (a console before this one started it): shown, kept
            return
        profile = session.host.profiles.get(name)
        if profile is not None:
            self.launches.launch(index, profile)

    def on_log_grew(self, message: LogGrew) -> None:
        if message.index == self.active_index:
            self.panes[message.index].log_pane.catch_up()

    def on_figures_changed(self, message: FiguresChanged) -> None:
        if message.index == self.active_index:
            self.panes[message.index].refresh_figures()

    def on_server_exited(self, message: ServerExited) -> None:
        if self._launches is not None:
            self._launches.server_exited(message.index)
        self._alert(message.index)
        self._launch_changed(message.index)

    def _alert(self, index: int) -> None:
        """Toasts (and the bell) for what changed on host ``index``: ready, VERIFIED, a crash, the link."""
        expected = self._launches is not None and self._launches.expects_exit(index)
        for alert in self.alerts[index].observe(look(self.sessions[index], expected_exit=expected)):
            timeout = 15 if alert.severity == "error" else 6
            secrets = profile_secrets(self.sessions[index].host.profiles.values())
            self.notify(mask_known(alert.message, secrets), severity=alert.severity, timeout=timeout)
            if alert.bell and self.bell:
                self.app.bell()

    @property
    def launches(self) -> LaunchControl:
        if self._launches is None:
            from gdnconsole.ui.screens.launchcontrol import LaunchControl

            self._launches = LaunchControl(
                self, self.sessions, self.journal, self._launch_changed, self.open_form, self.clock
            )
        return self._launches

    def _launch_note(self, index: int) -> Text | None:
        """What the status bar says about launching (nothing before the first launch key), after the
        read-only mark."""
        note = self._launches.note(index) if self._launches is not None else None
        if not self.readonly:
            return note
        return READONLY_NOTE if note is None else Text(" ").join([READONLY_NOTE, note])

    def _launch_changed(self, index: int) -> None:
        pane = self.panes[index]
        pane.launch_note = self._launch_note(index)
        if index == self.active_index:
            pane.refresh_host()

    def _tick(self) -> None:
        """The tab on screen moves with the clock (uptimes, a launch's elapsed time); the overview has no
        clock in it, and a hidden tab is painted when shown."""
        self._paint_tab(self.active_index)

    def _paint_tab(self, index: int) -> None:
        pane = self.panes[index]
        pane.launch_note = self._launch_note(index)
        pane.refresh_host()
        pane.refresh_figures()  # a stale strip's age moves with the clock
        self.call_after_refresh(self._place_toasts)  # the GPU panel's height follows the GPUs listed

    def toast_rows(self) -> int:
        """The rows toasts may cover: a third of the log's (toastlimit)."""
        return max(1, self.panes[self.active_index].log_pane.view.region.height // 3)

    def _place_toasts(self) -> None:
        """Toasts over the top right of the log's lines, its oldest rows on screen: not over the GPU rows'
        figures, the timeline's verdict, nor the log's last rows, where a crash lands."""
        try:
            rack = self.get_child_by_type(ToastRack)
        except NoMatches:
            return
        view = self.panes[self.active_index].log_pane.view.region
        top, right = max(1, view.y), max(0, self.size.width - view.right)
        if rack.styles.margin.top != top or rack.styles.padding.right != right:
            rack.styles.margin = (top, 0, 0, 0)
            rack.styles.padding = (0, right, 0, 0)  # a docked rack keeps its width: padded, not narrowed

    # -- tabs ------------------------------------------------------------------------------------------

    def show_host(self, index: int) -> None:
        if 0 <= index < len(self.sessions) and index != self.active_index:
            self.app.clear_notifications()  # what was said on the other tab is about that host
            self._want_figures(self.active_index, False)
            self.switcher.current = f"host-{index}"
            self._want_figures(index, True)
            self._paint_tab(index)  # a hidden tab did nothing: it catches up now
            self.panes[index].log_pane.catch_up()
            if self.overview is not None:
                self.overview.select(index)
            self._focus_log()

    def _want_figures(self, index: int, on: bool) -> None:
        """The agent polls the server's endpoints of the host on screen only (and only for sessions this
        screen runs: a caller that set their state, as the snapshots do, polls nothing)."""
        if self.start:
            self.sessions[index].figures.want(self, on)

    def on_overview_row_selected(self, message: OverviewRow.Selected) -> None:
        self.show_host(message.index)

    def _focus_log(self) -> None:
        self.panes[self.active_index].log_pane.view.focus()

    def action_next_host(self) -> None:
        self.show_host((self.active_index + 1) % len(self.sessions))

    def action_previous_host(self) -> None:
        self.show_host((self.active_index - 1) % len(self.sessions))

    def action_host(self, index: int) -> None:
        self.show_host(index)

    def action_toggle_gpus(self) -> None:
        self.toggle_class("-no-gpus")

    # -- the link --------------------------------------------------------------------------------------

    def _maybe_ask_host_key(self, index: int) -> None:
        session = self.sessions[index]
        fingerprint = session.fingerprint
        if session.link is not LinkState.UNKNOWN_HOST or not fingerprint:
            return
        if index in self.asking or self.declined.get(index) == fingerprint:
            return
        self.asking.add(index)
        self.show_host(index)
        from gdnconsole.ui.dialogs.hostkey import HostKeyScreen

        dialog = HostKeyScreen(session.host.name, fingerprint, session.link_message or "")
        self.app.push_screen(dialog, lambda accept: self._host_key_answered(index, fingerprint, accept))

    def _host_key_answered(self, index: int, fingerprint: str, accept: bool | None) -> None:
        self.asking.discard(index)
        session = self.sessions[index]
        if not accept:
            self.declined[index] = fingerprint
            self.notify(f"{session.host.name}: not connected (r asks again)", timeout=4)
            return
        try:
            session.accept_host_key(fingerprint)
        except ValueError as exc:
            self.notify(f"{session.host.name}: {exc}", severity="error", timeout=6)
            return
        self._run(index)

    def action_reconnect(self) -> None:
        """Try the active host again: after a refused key, an auth failure, or a key the user declined."""
        index = self.active_index
        runner, session = self.runners.get(index), self.sessions[index]
        if runner is not None and runner.is_running:
            if session.link is LinkState.CONNECTED:  # a link that looks up but may be stale: make it anew
                self.notify(f"{session.host.name}: reconnecting", timeout=3)
                self.run_worker(session.reconnect(), group="reconnect", exit_on_error=False)
            else:
                self.notify(f"{session.host.name}: already connecting", timeout=3)
            return
        self.declined.pop(index, None)
        if self.sessions[index].link is LinkState.UNKNOWN_HOST:
            self._maybe_ask_host_key(index)
        elif self.start:
            self._run(index)

    # -- launch profiles, launching, the journal -------------------------------------------------------

    def profile(self, index: int) -> Profile:
        """The profile L and R use on host ``index`` (an empty one when the host has none)."""
        chosen = self.profiles.get(index) or self.sessions[index].host.profile
        return chosen or Profile(name="default", model="")

    def journal(self, index: int) -> Journal:
        if index not in self.journals:
            name = self.sessions[index].host.name
            path = self.journal_dir / f"{name}.jsonl" if self.journal_dir is not None else None
            self.journals[index] = Journal(name, path)
        return self.journals[index]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.quitting:
            return False  # a key typed while the sessions stop would open a screen on a closing app
        if action in HOST_ACTIONS and len(self.sessions) < 2:
            return False  # one host: nothing to switch to (and no key bar room spent on it)
        return not (self.readonly and action in LAUNCH_ACTIONS)

    def action_edit(self) -> None:
        index = self.active_index
        self.open_form(index, self.profile(index), None)

    def open_form(self, index: int, profile: Profile, field: str | None) -> None:
        self.show_host(index)
        from gdnconsole.ui.screens.flagform import FlagFormScreen

        form = FlagFormScreen(self.sessions[index], profile, config_path=self.config_path, focus_field=field,
                              readonly=self.readonly)  # fmt: skip
        self.app.push_screen(form, lambda result: self._form_closed(index, result))

    def _form_closed(self, index: int, result: FormResult | None) -> None:
        if result is None or result.profile is None:
            return
        self.profiles[index] = result.profile
        if result.launch and not self.readonly:
            self.launches.relaunch(index, result.profile)  # a launch when no server runs

    def action_launch(self) -> None:
        index = self.active_index
        self.launches.launch(index, self.profile(index))

    def action_relaunch(self) -> None:
        index = self.active_index
        self.launches.relaunch(index, self.profile(index))

    def action_stop(self) -> None:
        self.launches.stop(self.active_index)

    def action_journal(self) -> None:
        from gdnconsole.ui.screens.journal import JournalScreen

        index = self.active_index
        screen = JournalScreen(self.journal(index), self.profile(index), readonly=self.readonly)
        self.app.push_screen(screen, lambda result: self._journal_closed(index, result))

    def _journal_closed(self, index: int, result: JournalResult | None) -> None:
        if result is None:
            return
        if result.action == "form":
            self.open_form(index, result.profile, None)
        elif not self.readonly:
            self.profiles[index] = result.profile
            self.launches.relaunch(index, result.profile)

    def action_tune(self) -> None:
        """The tune screen on the active host: sweep the speculative settings, rank, apply the best."""
        from gdnconsole.ui.screens.tune import TuneScreen

        index = self.active_index
        screen = TuneScreen(self.sessions[index], self.profile(index), self.journal(index),
                            config_path=self.config_path)  # fmt: skip
        self.app.push_screen(screen, lambda applied: self._tuned(index, applied, screen.relaunch_asked))

    def _tuned(self, index: int, applied: Profile | None, relaunch: Profile | None = None) -> None:
        if applied is not None:
            self.profiles[index] = applied  # L and R launch the tuned profile from now on
        if relaunch is not None and not self.readonly:
            self.launches.relaunch(index, relaunch)  # what ran before the sweep, asked for on its screen

    def action_prompt(self) -> None:
        """The prompt panel on the active host: test prompts, bursts, decode figures over time."""
        from gdnconsole.ui.screens.promptpanel import PromptScreen

        self.app.push_screen(PromptScreen(self.sessions[self.active_index]))

    def action_serving(self) -> None:
        """The serving screen of the active host: per DP rank, latencies over 1 and 5 minutes, histories."""
        from gdnconsole.ui.screens.serving import ServingScreen

        index = self.active_index
        self.app.push_screen(ServingScreen(self.sessions[index], self.profile(index), self.journal(index)))

    # -- help and quit ---------------------------------------------------------------------------------

    def action_help(self) -> None:
        from gdnconsole.ui.dialogs.help import HelpScreen

        # Every screen's keys, from the registry (no screen module loads), in the app's keymap.
        self.app.push_screen(HelpScreen(screen="dashboard", readonly=self.readonly))

    async def action_quit(self) -> None:
        self.quitting = True
        await self.stop_sessions()
        self.app.exit()

    async def stop_sessions(self) -> None:
        for session in self.sessions:
            await session.stop()
