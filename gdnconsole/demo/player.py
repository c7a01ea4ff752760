"""Recorded demos: `gdnconsole demo --scenario seed|crash|fleet` plays a story on simulated GPU hosts.

A story (``demo.stories``) drives the real dashboard, a DashboardApp on real HostSessions against the
simulated host, with the keys an operator would press (``App.simulate_key``, and key events for typed
text), and waits on the sessions', the journal's and the screens' state between them, never on a fixed
time. A caption bar over the footer of every screen says what each step shows. The pauses a viewer needs
between steps scale with ``pace`` (0: none, for tests); the simulated servers' timeline with ``speed``.

Everything a story creates lives in one temporary folder (the hosts' homes, the launch journals, the log
mirrors, the prompt history), and every server it launched is stopped when the app ends, however it ends
(q, the end of the story with ``exit_at_end``, SIGTERM, SIGHUP): SIGTERM to the server, SIGKILL to its
process group after a grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import unicodedata
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widgets import Input, Static, TextArea

from gdnconsole.config.hosts import Host
from gdnconsole.demo.stories import DEFAULT_SPEED, STORIES, Story
from gdnconsole.errors import ConsoleError
from gdnconsole.host import foreground, launcher, simulated
from gdnconsole.host.journal import FINAL_OUTCOMES, JOURNAL_DIR_ENV, Attempt, Journal
from gdnconsole.host.link import LinkState
from gdnconsole.host.prompthistory import PROMPTS_DIR_ENV
from gdnconsole.host.serving import ProbeTiming
from gdnconsole.host.session import HostSession
from gdnconsole.host.simhome import prepare_home
from gdnconsole.host.topics import Topic
from gdnconsole.sglang.stages import Stage
from gdnconsole.ui import theme
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.screens.dashboard import DashboardScreen
from gdnconsole.ui.theme import ThemeSet

BEAT_S = 2.0  # one pause between steps at pace 1: time to read a caption
KEY_S = 0.6  # before each key press at pace 1: the caption comes first, then the key
TYPE_S = 0.07  # per typed character at pace 1
POLL_S = 0.05  # how often a wait looks at the state it waits for
WAIT_S = 30.0  # the longest a step of the UI may take (a screen opening, a search)
STARTUP_S = 20.0  # a whole startup of the reference profile at speed 1 (the simulator's timeline)
STOP_GRACE_S = 10.0  # SIGTERM, then SIGKILL to the process group, when the story ends
HOLD_READY_S = 20.0  # for a leftover rank to say its memory is on record
SAMPLE_S = 0.5  # GPU and process samples: the panel moves while the server loads
PROBE = ProbeTiming(backoff=(0.25, 0.5, 1.0, 2.0))  # health polling while the server comes up
CAPTION_LAYER = "demo-caption"


class StoryError(ConsoleError):
    """A step did not reach the state it waits for (or the story's script failed)."""


@dataclass(frozen=True)
class StoryOptions:
    pace: float = 1.0  # scales the pauses between steps; 0: none
    speed: float = DEFAULT_SPEED  # the simulated servers' timeline
    exit_at_end: bool = False  # quit the app when the story ends (recordings, tests)
    sim: Mapping[str, object] = field(default_factory=dict)  # more `simulate` keys for every simulated host


# -- the caption bar -----------------------------------------------------------------------------------


class Caption(Static):
    """One line over the footer of whatever screen is shown: the story's step and what it shows."""

    DEFAULT_CSS = f"""
    Caption {{
        layer: {CAPTION_LAYER}; dock: bottom; height: 1; width: 100%; padding: 0 1;
        background: $accent; color: $text;
    }}
    """


def _caption_line(story: str, step: str, text: str) -> Text:
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(f"▶ {story}", Style(bold=True))
    if step:
        line.append(f" {step}", Style(bold=True))
    line.append(" │ ")
    line.append(text)
    return line


# -- the app -------------------------------------------------------------------------------------------


class StoryApp(DashboardApp):
    """The dashboard, with a caption bar on every screen and the story playing in a worker."""

    def __init__(self, run: StoryRun, *, handle_signals: bool = False, **options: Any) -> None:
        super().__init__(run.sessions, exit_on_signals=handle_signals, **options)
        self.story_run = run
        self.on_hangup.append(run._tmp.cleanup)  # the hosts' homes: the terminal is gone, nothing else runs
        self.caption = Text()
        self.toasts: list[str] = []  # every notification shown, for a story that stalls to report
        self.director = Director(self, run.story, run.options)

    def notify(self, message: str, *args: Any, **kwargs: Any) -> None:
        self.toasts.append(str(message))
        super().notify(message, *args, **kwargs)

    def on_mount(self) -> None:
        # DashboardApp.on_mount (called after this one) opens the dashboard; the story waits for it.
        self.screen_change_signal.subscribe(self, self._screen_changed)
        self.run_worker(self.director.play(), name="story", group="story", exit_on_error=False)

    def _exit_on_signal(self, signum: signal.Signals) -> None:
        """SIGTERM, or SIGHUP (the terminal went away): the story's servers go at once, then the app as
        any dashboard goes (DashboardApp: at once on SIGHUP, as q does on SIGTERM)."""
        self.story_run.kill_now()
        super()._exit_on_signal(signum)

    async def end(self, failed: bool) -> None:
        """The story is over and asked to quit: the agents exit, then the app (then the servers stop)."""
        with contextlib.suppress(AssertionError):
            await self.dashboard.stop_sessions()
        self.exit(return_code=1 if failed else 0)

    # -- the caption on every screen -------------------------------------------------------------------

    def set_caption(self, line: Text) -> None:
        self.caption = line
        self._place_caption(self.screen)

    def _screen_changed(self, screen: Screen[Any]) -> None:
        self.call_after_refresh(self._place_caption, screen)

    def _place_caption(self, screen: Screen[Any]) -> None:
        """The caption on ``screen`` (mounted there the first time), and the same line on every screen
        of the stack: a screen shown again, or seen under a dialog, never shows an old one."""
        for shown in self.screen_stack:
            for caption in shown.query(Caption):
                caption.update(self.caption)
        if screen is not self.screen or not screen.is_mounted or screen.query(Caption):
            return
        layers: tuple[str, ...] = tuple(screen.styles.layers or ()) or ("default",)
        if CAPTION_LAYER not in layers:
            screen.styles.layers = " ".join((*layers, CAPTION_LAYER))
        screen.mount(Caption(self.caption))


# -- the director: what a story's script calls -----------------------------------------------------------


def _key_of(char: str) -> str:
    """The key name Textual gives a typed character (the character itself for letters and digits)."""
    if char.isalnum():
        return char
    if char == " ":
        return "space"
    return unicodedata.name(char, "unknown").lower().replace(" ", "_").replace("-", "_")


def _text_of(widget: object) -> str:
    if isinstance(widget, Input):
        return widget.value
    if isinstance(widget, TextArea):
        return widget.text
    return ""


class Director:
    """Plays one story on a StoryApp: captions, keys, typing, and waits on state."""

    def __init__(self, app: StoryApp, story: Story, options: StoryOptions) -> None:
        self.app = app
        self.story = story
        self.options = options
        self.captions: list[str] = []  # every caption shown, "step text"
        self.done = False
        self.error: str | None = None
        self.trace: str | None = None  # the traceback of a script that raised

    @property
    def dashboard(self) -> DashboardScreen:
        return self.app.dashboard

    @property
    def startup_timeout(self) -> float:
        """Long enough for a launch, a relaunch (stop, release, start) and a verification."""
        return WAIT_S + 3 * STARTUP_S / max(self.options.speed, 0.01)

    async def play(self) -> None:
        try:
            await self.until(self._dashboard_open, "the dashboard to open")
            await self.story.script(self)
        except StoryError as exc:
            self._failed(str(exc))
        except Exception as exc:  # a broken script: say so on screen and in the result
            self.trace = traceback.format_exc()
            self._failed(f"{type(exc).__name__}: {exc}")
        finally:
            self.done = True
        if self.options.exit_at_end:
            await self.app.end(self.error is not None)

    def _failed(self, message: str) -> None:
        self.error = message
        self.app.notify(f"the story stopped: {message}", severity="error", timeout=60)

    def _dashboard_open(self) -> bool:
        return any(isinstance(s, DashboardScreen) and s.is_mounted for s in self.app.screen_stack)

    # -- showing -------------------------------------------------------------------------------------

    def caption(self, text: str, step: str = "") -> None:
        """The caption bar's line: the story, the step ("2/5") and what it shows."""
        self.captions.append(f"{step} {text}".strip())
        self.app.set_caption(_caption_line(self.story.name, step, text))

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds * self.options.pace)

    async def pause(self, beats: float = 1.0) -> None:
        """Time for a viewer to read what the screen shows (none at pace 0)."""
        await self._sleep(beats * BEAT_S)

    # -- acting --------------------------------------------------------------------------------------

    async def press(self, *keys: str) -> None:
        """Press keys as the user would (bindings, then the focused widget)."""
        for key in keys:
            await self._sleep(KEY_S)
            self.app.simulate_key(key)
            await asyncio.sleep(0)

    async def type_text(self, selector: str, text: str) -> None:
        """Focus a text field of the current screen and type ``text`` at its end, key by key."""
        widget = self.app.screen.query_one(selector)
        widget.focus()
        if isinstance(widget, TextArea):
            widget.move_cursor(widget.document.end)
        before = _text_of(widget)
        await self._sleep(KEY_S)
        for char in text:
            self.app.post_message(events.Key(_key_of(char), char))
            await self._sleep(TYPE_S)
        await self.until(lambda: _text_of(widget) == before + text, f"{text!r} typed into {selector}")

    async def type_field(self, name: str, text: str) -> None:
        """Type ``text`` into field ``name`` of the flag form, and wait until the form has read it (a
        launch key pressed right after launches what was typed)."""
        from gdnconsole.ui.screens.flagform import FlagFormScreen

        form = self.app.screen
        if not isinstance(form, FlagFormScreen):
            raise StoryError(f"the flag form is not shown (the {type(form).__name__} screen is)")
        widget = form.query_one(f"#ff-{name}")
        await self.type_text(f"#ff-{name}", text)
        await self.until(
            lambda: getattr(form.values, name) == _text_of(widget), f"the form to read its {name} field"
        )

    async def search(self, pattern: str) -> None:
        """`/` in the active host's log: type the pattern, enter, and wait for the view to get there."""
        await self.press("slash")
        await self.on_screen("SearchScreen")
        await self.type_text("#search-input", pattern)
        pane = self.dashboard.host_pane(self.dashboard.active_index).log_pane
        await self.press("enter")
        await self.on_dashboard()
        await self.until(lambda: pane.search_pattern == pattern and not pane.busy, f"/{pattern}/ found")
        await self.until(
            lambda: pane.view.current is not None and pattern in pane.view.current.raw,
            f"the view on a line with {pattern!r}",  # a search that says "not found" fails the story
        )

    async def first_error(self, index: int) -> None:
        """`E` on host ``index``'s log once the log pane knows its first error."""
        pane = self.dashboard.host_pane(index).log_pane
        await self.until(lambda: pane.first_error is not None, "the log's first error")
        await self.press("E")
        await self.until(lambda: pane.view.cursor_line == pane.first_error, "the view at the first error")

    # -- waiting -------------------------------------------------------------------------------------

    async def until(self, predicate: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
        """Let the app run until ``predicate`` holds; StoryError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise StoryError(f"waited {timeout:.0f} s for {what}")
            await asyncio.sleep(POLL_S)

    async def on_screen(self, name: str) -> None:
        """Until the screen shown is of class ``name`` or has the id ``name`` (a dialog)."""

        def shown() -> bool:
            screen = self.app.screen
            return (type(screen).__name__ == name or screen.id == name) and screen.is_mounted

        await self.until(shown, f"the {name} screen")

    async def on_dashboard(self) -> None:
        await self.on_screen("DashboardScreen")

    async def on_host(self, index: int) -> None:
        await self.until(lambda: self.dashboard.active_index == index, f"host {index + 1}'s tab")

    # -- sessions and attempts -------------------------------------------------------------------------

    def session(self, index: int) -> HostSession:
        return self.dashboard.sessions[index]

    def journal(self, index: int) -> Journal:
        return self.dashboard.journal(index)

    def attempt(self, index: int, number: int) -> Attempt | None:
        return next((a for a in self.journal(index).attempts() if a.number == number), None)

    async def connected(self, index: int) -> None:
        session = self.session(index)
        await self.until(
            lambda: session.complete and session.pidfile_seen, f"{session.host.name} to be connected"
        )

    async def link_down(self, index: int) -> None:
        session = self.session(index)
        failed = (LinkState.DOWN, LinkState.AUTH_FAILED, LinkState.NO_AGENT)
        await self.until(lambda: session.link in failed, f"{session.host.name}'s link to fail")

    async def _attempt(self, index: int, number: int, done: Callable[[Attempt], bool], what: str) -> Attempt:
        found: list[Attempt] = []

        def reached() -> bool:
            attempt = self.attempt(index, number)
            if attempt is not None and done(attempt):
                found.append(attempt)
            return bool(found)

        name = self.session(index).host.name
        try:
            await self.until(reached, f"attempt {number} on {name} to be {what}", self.startup_timeout)
        except StoryError as exc:
            raise StoryError(f"{exc} ({self._attempt_state(index, number)})") from None
        return found[0]

    def _attempt_state(self, index: int, number: int) -> str:
        """Where an attempt got to, and what the dashboard says of the launch: for a story that stalls."""
        attempt = self.attempt(index, number)
        state = "not in the journal" if attempt is None else f"{attempt.outcome} at {attempt.stage}"
        note = self.dashboard.host_pane(index).launch_note
        progress = self.dashboard.launches.progress.get(index)
        session = self.session(index)
        server = session.server
        launched = session.launched
        orphans = [(o.pid, o.pgid, o.title) for o in session.orphans]
        holders = [(g.index, p.pid, p.used_mib) for g in session.gpus for p in g.processes]
        toasts = self.app.toasts[-4:]
        focused = self.app.focused
        return (
            state
            + ("" if note is None else f"; the dashboard says: {note.plain}")
            + ("" if progress is None else f"; in flight: {progress.action}, {progress.phase}")
            + ("" if server is None else f"; a server runs: pid {server.pid}")
            + ("; launched nothing" if launched is None else f"; launched {launched.pid}/{launched.pgid}")
            + f" alive {session.launched_alive}"
            + f"; orphans {orphans}; GPU holders {holders}"
            + f"; screen {type(self.app.screen).__name__}#{self.app.screen.id}"
            + f", focus {None if focused is None else type(focused).__name__}"
            + ("" if not toasts else "; toasts: " + " | ".join(toasts))
        )

    async def attempt_ends(self, index: int, number: int) -> Attempt:
        """Until attempt ``number`` has an outcome (rejected, crashed, ready, …)."""
        return await self._attempt(index, number, lambda a: a.outcome in FINAL_OUTCOMES, "over")

    async def ready(self, index: int, number: int) -> Attempt:
        """Until attempt ``number`` is ready (or further); StoryError when it ends otherwise. A server
        that crashed after ready was ready: on a busy machine the crash can come before this looks."""
        attempt = await self.attempt_ends(index, number)
        if attempt.outcome not in ("ready", "verified") and Stage.parse(attempt.stage) < Stage.READY:
            raise StoryError(f"attempt {number} ended {attempt.outcome}: {attempt.fatal or attempt.rule}")
        return attempt

    async def settled(self, index: int, number: int) -> Attempt:
        """Until a ready attempt's verification prompt has its outcome, recorded in the journal."""
        return await self._attempt(
            index, number, lambda a: a.verify is not None or a.outcome == "crashed", "verified or refuted"
        )

    async def verified(self, index: int, number: int) -> Attempt:
        """Until attempt ``number`` is VERIFIED in the journal and on the status bar."""
        attempt = await self.settled(index, number)
        if attempt.outcome != "verified":
            raise StoryError(f"attempt {number} was not verified: {attempt.verify or attempt.outcome}")
        session = self.session(index)
        await self.until(lambda: session.serving.verified is True, "the status bar's VERIFIED")
        return attempt

    async def prompt_done(self, runs: int) -> None:
        """Until the prompt panel has started ``runs`` runs or bursts and none is running."""

        def finished() -> bool:
            screen = self.app.screen
            return getattr(screen, "started", 0) >= runs and getattr(screen, "running", None) is None

        await self.until(finished, f"prompt panel run {runs} to finish", self.startup_timeout)

    async def orphan_shown(self, index: int, pid: int) -> None:
        """Until the agent lists ``pid`` as a rank without its server, holding GPU memory."""
        session = self.session(index)

        def shown() -> bool:
            held = any(p.pid == pid for g in session.gpus for p in g.processes)
            return held and any(o.pid == pid for o in session.orphans)

        await self.until(shown, f"the leftover rank {pid} on {session.host.name}")

    # -- what the keys cannot do ---------------------------------------------------------------------

    async def launch_unchecked(self, index: int) -> Attempt:
        """Start the host's current profile without our checker (as `nohup python -m sglang.launch_server`
        did, or `gdnconsole launch --no-check`) and follow it to its end, in the dashboard's journal; the
        status bar shows it as it would a launch from `L`."""
        from gdnconsole.ui.screens.launchcontrol import Progress

        dash = self.dashboard
        session, journal, control = dash.sessions[index], dash.journal(index), dash.launches
        control.progress[index] = Progress("launch", "without the checker", control.clock())
        control.changed(index)

        def say(phase: str) -> None:
            progress = control.progress.get(index)
            if progress is not None:
                progress.phase = phase
                control.changed(index)

        try:
            attempt = await launcher.relaunch(
                session, dash.profile(index), check=False, journal=journal, on_progress=say
            )
            say(f"pid {attempt.pid} started, following its log")
            attempt = await launcher.settle(session, attempt, timeout=self.startup_timeout, journal=journal)
        except launcher.LaunchRefused as exc:
            raise StoryError(f"the unchecked launch was refused: {exc}") from None
        finally:
            control.progress.pop(index, None)
        control.last[index] = attempt
        control.changed(index)
        return attempt

    async def crash_recorded(self, index: int, number: int) -> Attempt:
        """Until attempt ``number``'s server has exited, then bring the attempt up to date in the journal
        (crashed, with its fatal error) and on the status bar, as `launch --wait` does: the dashboard
        journals a crash only while it follows a startup, not one after ready."""
        session = self.session(index)
        attempt = await self._attempt(index, number, lambda a: a.pid in session.exits, "gone")
        pane = self.dashboard.host_pane(index).log_pane
        await self.until(lambda: pane.first_error is not None, "the crash in the log")
        launcher.observe(session, attempt)
        if attempt.outcome != "crashed":
            raise StoryError(f"attempt {number} ended {attempt.outcome}, not crashed")
        self.journal(index).update(attempt)
        control = self.dashboard.launches
        control.last[index] = attempt
        control.changed(index)
        return attempt

    def set_simulation(self, index: int, **table: object) -> None:
        """Change the simulated host's settings (servers started from now on read them)."""
        host = self.session(index).host
        assert host.simulate is not None, "only a simulated host has settings"
        prepare_home(simulated.sim_home(host), {**host.simulate.table, **table})

    async def leave_rank(self, index: int, *, gpu: int, mib: int, title: str) -> int:
        """A process on simulated host ``index`` that holds ``mib`` of GPU ``gpu`` under an SGLang rank's
        title, as a rank that outlived its server does; it is killed when the story ends. Its pid."""
        host = self.session(index).host
        env = {**os.environ, **simulated.environment(host)}
        argv = ["-m", "gdnsim.hold", "--gpu", str(gpu), "--mib", str(mib), "--title", title]
        proc = subprocess.Popen(
            # -P: the simulator's PYTHONPATH, never the host's working directory, on the import path
            [sys.executable, "-P", *argv],
            env=env,
            cwd=simulated.workdir(host),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=foreground.terminate_with_parent,
        )
        self.app.story_run.adopt_helper(proc)
        assert proc.stdout is not None
        try:  # it says "ready" once its memory is on record; a thread reads it, the UI goes on
            line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), HOLD_READY_S)
        except TimeoutError:
            line = b""
        if line.strip() != b"ready":
            raise StoryError(f"the leftover rank did not start ({line!r})")
        return proc.pid


# -- one playing of a story --------------------------------------------------------------------------------


def _simulating(host: Host, table: Mapping[str, object]) -> Host:
    """``host`` with ``table`` added to its `simulate` table (a host that is not simulated as it is)."""
    if host.simulate is None or not table:
        return host
    return dataclasses.replace(
        host, simulate=dataclasses.replace(host.simulate, table={**host.simulate.table, **table})
    )


class StoryRun:
    """A story's hosts, sessions and app, in a temporary folder; closing it stops every server the story
    launched and every helper process it started, then removes the folder."""

    def __init__(
        self,
        name: str,
        options: StoryOptions,
        *,
        theme_name: str = theme.DEFAULT_THEME,
        themes: ThemeSet | None = None,
        handle_signals: bool = False,
    ) -> None:
        self.story = STORIES[name]
        self.options = options
        self._tmp = tempfile.TemporaryDirectory(prefix=f"gdnconsole-{name}-")
        self.dir = Path(self._tmp.name)
        hosts = self.story.hosts(self.dir / "hosts", options.speed)
        self.hosts = [_simulating(host, options.sim) for host in hosts]
        self.groups: set[int] = set()  # process groups of the servers launched on the story's hosts
        self.helpers: set[int] = set()  # other processes started (each leads its own process group)
        self._helper_procs: list[subprocess.Popen[bytes]] = []
        self.sessions = [self._session(host, i) for i, host in enumerate(self.hosts)]
        self._saved_env: dict[str, str | None] = {}
        self.app = StoryApp(
            self,
            handle_signals=handle_signals,
            theme_name=theme_name,
            themes=themes,
            journal_dir=self.dir / "journal",
        )

    @property
    def director(self) -> Director:
        return self.app.director

    def _session(self, host: Host, index: int) -> HostSession:
        mirror = self.dir / "mirrors" / f"{index}-{host.name}.log"
        session = HostSession(host, sample_interval=SAMPLE_S, mirror=mirror, probe=PROBE)

        def launched(topic: Topic) -> None:
            record = session.launched
            if topic == "launched" and record is not None and record.pgid is not None:
                self.groups.add(record.pgid)

        session.subscribe(launched)
        return session

    def __enter__(self) -> StoryRun:
        # The story's state stays in its own folder, not in the user's: the prompt history, and what
        # lives beside the journal (the facts its simulated hosts said, which `config check` would
        # otherwise take for a real host's; a written command line; a sweep's store).
        for name, folder in ((PROMPTS_DIR_ENV, "prompts"), (JOURNAL_DIR_ENV, "journal")):
            self._saved_env[name] = os.environ.get(name)
            os.environ[name] = str(self.dir / folder)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def stop_servers(self, grace: float = STOP_GRACE_S) -> list[str]:
        """SIGTERM each server the story launched, SIGKILL its process group after ``grace``; kill the
        helpers. Returns what happened, a line per process group."""
        said = [f"server group {pgid}: {foreground.stop_group(pgid, grace)}" for pgid in sorted(self.groups)]
        self.groups.clear()
        self._kill(self.helpers)
        return said

    def kill_now(self) -> None:
        """SIGKILL every process group the story started, at once (a signal ends the story)."""
        self._kill(self.groups | self.helpers)

    def adopt_helper(self, proc: subprocess.Popen[bytes]) -> None:
        """A helper process the story started (in its own process group): killed when the story ends."""
        self.helpers.add(proc.pid)
        self._helper_procs.append(proc)

    def _kill(self, groups: Collection[int]) -> None:
        for pgid in list(groups):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        for proc in self._helper_procs:
            if proc.pid in groups:
                proc.wait()
                if proc.stdout is not None:
                    proc.stdout.close()
        self._helper_procs = [p for p in self._helper_procs if p.returncode is None]
        self.helpers.clear()

    def close(self) -> list[str]:
        said = self.stop_servers()
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env.clear()
        self._tmp.cleanup()
        return said


def run_story(
    name: str,
    options: StoryOptions,
    *,
    theme_name: str = theme.DEFAULT_THEME,
    user_themes: Path | None = None,
    remember: Callable[[str], None] | None = None,
) -> int:
    """Play story ``name`` in this terminal; the exit status (0: the story reached its end). ``remember``
    keeps a theme picked in the palette for the next start."""
    from gdnconsole.ui.screens.logscreen import warn_theme_errors

    themes = theme.load_all(user_themes)
    warn_theme_errors(themes, theme_name)
    with StoryRun(name, options, theme_name=theme_name, themes=themes, handle_signals=True) as run:
        run.app.remember = remember
        run.app.fit_colours()
        try:
            run.app.run()
        finally:
            print("-- stopping the servers the story started", file=sys.stderr)
            for line in run.stop_servers():
                print(f"-- {line}", file=sys.stderr)
        error = run.director.error
        code = run.app.return_code or 0
        trace = run.director.trace
    if trace is not None:
        print(trace, file=sys.stderr)
    if error is not None:
        print(f"gdnconsole: the story stopped: {error}", file=sys.stderr)
        return code or 1
    return code
