"""`L` launch, `R` relaunch, `S` stop on the dashboard: confirmations, workers, and the progress line.

The launcher (``host.launcher``) does the work through the host's agent; this only asks the user first,
runs it in a worker per host (one action at a time), keeps the stage it reports for the status bar, and
says how it ended: a rejected launch offers the form on the field the rule concerns. Ready, VERIFIED,
VERIFY FAILED and a crash are announced by ui/alerts.py, for every server, whoever started it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.screen import Screen

from gdnconsole.config.hosts import Profile
from gdnconsole.errors import EXPLAINED
from gdnconsole.host import launcher
from gdnconsole.host.consolelog import record_bug
from gdnconsole.host.journal import Attempt, Journal, RuleBreak
from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible
from gdnconsole.sglang.launch import launch_spec, mask_known, profile_secrets
from gdnconsole.timefmt import duration
from gdnconsole.ui.dialogs.confirm import ConfirmScreen, processes_text, relaunch_dialog, stop_dialog
from gdnconsole.ui.models.formmodel import field_of
from gdnconsole.ui.tones import Tones

VERIFY_WAIT_S = 300.0  # the verification prompt's own timeout ends it sooner

STOP_GRACE_S = 30.0

OpenForm = Callable[[int, Profile, str | None], None]  # host index, profile, field to focus


@dataclass
class Progress:
    """An action in flight on one host, as the launcher last reported it."""

    action: str  # launch | relaunch | stop
    phase: str  # the launcher's words: "waiting for GPU memory to be released: GPU 0 31480 MiB, …"
    started: float


def progress_text(progress: Progress, now: float, tones: Tones) -> Text:
    """``◐ relaunch: waiting for GPU memory to be released: GPU 0 31480 MiB, GPU 1 30990 MiB 12s``."""
    out = Text(f"◐ {progress.action}: ", tones.warn)
    out.append(progress.phase)
    out.append(f" {duration(now - progress.started)}", Style(dim=True))
    return out


def outcome_text(attempt: Attempt, tones: Tones) -> Text:
    """How the last attempt ended, for the status bar."""
    if attempt.outcome in ("ready", "verified"):
        return Text(f"✔ attempt {attempt.number} {attempt.outcome}", tones.good)
    out = Text(f"✖ attempt {attempt.number} {attempt.outcome}", tones.bad)
    if attempt.rule:
        out.append(visible(f": {attempt.rule.message}"))
    elif attempt.fatal:  # the log's words: shown, never obeyed
        line = attempt.fatal.line
        out.append(visible(f": {attempt.fatal.summary}") + (f" (log line {line})" if line else ""))
    return out


class LaunchControl:
    """Per dashboard. ``changed(index)`` repaints a host; ``open_form`` opens the flag form."""

    def __init__(
        self,
        screen: Screen[Any],
        sessions: Sequence[HostSession],
        journals: Callable[[int], Journal],
        changed: Callable[[int], None],
        open_form: OpenForm,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.screen = screen
        self.sessions = list(sessions)
        self.journals = journals
        self.changed = changed
        self.open_form = open_form
        self.clock = clock
        self.progress: dict[int, Progress] = {}
        self.last: dict[int, Attempt] = {}

    def note(self, index: int) -> Text | None:
        """What the status bar says about launching: the action in flight, else the last outcome (in the
        theme's colours: the dashboard asks again every tick, so a new theme shows within one)."""
        tones = Tones.of(self.screen.app)
        progress = self.progress.get(index)
        if progress is not None:
            return progress_text(progress, self.clock(), tones)
        last = self.last.get(index)
        return outcome_text(last, tones) if last is not None else None

    def _busy(self, index: int) -> bool:
        progress = self.progress.get(index)
        if progress is not None:
            self.screen.notify(f"{self._name(index)}: {progress.action} already in progress", timeout=3)
        return progress is not None

    def _name(self, index: int) -> str:
        return self.sessions[index].host.name

    def expects_exit(self, index: int) -> bool:
        """This console is stopping host ``index``'s server (a stop, or the first half of a relaunch)."""
        progress = self.progress.get(index)
        return progress is not None and progress.action in ("stop", "relaunch")

    def server_exited(self, index: int) -> None:
        """The agent saw a server exit: the last attempt, if it was that server and this console did not
        stop it, ended "crashed" (a ready or verified server that dies), and the journal says so."""
        attempt = self.last.get(index)
        session = self.sessions[index]
        if attempt is None or attempt.pid not in session.exits or self.expects_exit(index):
            return
        if attempt.outcome not in ("ready", "verified", "timeout"):
            return
        if launcher.observe(session, attempt).outcome == "crashed":
            self.journals(index).update(attempt)
            self.changed(index)

    # -- the keys --------------------------------------------------------------------------------------

    def launch(self, index: int, profile: Profile) -> None:
        if self._busy(index):
            return
        if self.sessions[index].server is not None:
            self.screen.notify(f"{self._name(index)}: a server runs; R relaunches it, S stops it", timeout=4)
            return
        self._start(index, "launch", "checking")
        self._work(index, "launch", self._launch(index, profile))

    def relaunch(self, index: int, profile: Profile) -> None:
        session = self.sessions[index]
        if self._busy(index):
            return
        if session.server is None or self._rejected(index, profile):
            # Nothing to replace, or a profile our rules reject: no adopt or relaunch question first (it
            # would ask to stop a server for a launch that cannot happen); the rejection says why at once.
            self._start(index, "launch", "checking")
            self._work(index, "launch", self._launch(index, profile))
            return
        plan = launcher.stop_plan(session)
        if plan.empty:
            self._offer_adopt(index, lambda: self.relaunch(index, profile))
            return
        running = plan.argv or list(session.server.cmdline)
        diff = launcher.flag_diff(running, launch_spec(profile, session.host.python).argv)
        dialog = relaunch_dialog(self._name(index), profile.name, plan, diff, STOP_GRACE_S)
        self.screen.app.push_screen(dialog, lambda yes: self._relaunch_confirmed(index, profile, yes))

    def _rejected(self, index: int, profile: Profile) -> bool:
        """Whether our rules reject ``profile`` on this host now, as the launch itself would check it: with
        the model's config.json as the host last showed it, when one is kept (the launch reads it anew)."""
        from gdnconsole.host import profilecheck  # the flag tables load only when a launch is checked
        from gdnconsole.sglang.profilerules import model_of

        session = self.sessions[index]
        spec = launch_spec(profile, session.host.python)
        kept = profilecheck.kept_model_config(session.host.name, model_of(spec.args))
        return launcher.check_rules(session, spec, kept.config if kept is not None else None) is not None

    def _relaunch_confirmed(self, index: int, profile: Profile, yes: bool | None) -> None:
        if yes and not self._busy(index):
            self._start(index, "relaunch", "checking the flags")
            self._work(index, "relaunch", self._relaunch(index, profile))

    def stop(self, index: int) -> None:
        session = self.sessions[index]
        if self._busy(index):
            return
        if session.server is None:
            self.screen.notify(f"{self._name(index)}: no server runs", timeout=3)
            return
        plan = launcher.stop_plan(session)
        if plan.empty:
            self._offer_adopt(index, lambda: self.stop(index))
            return
        dialog = stop_dialog(self._name(index), plan, STOP_GRACE_S)
        self.screen.app.push_screen(dialog, lambda yes: self._stop_confirmed(index, yes))

    def _stop_confirmed(self, index: int, yes: bool | None) -> None:
        if yes and not self._busy(index):
            self._start(index, "stop", "SIGTERM, waiting for it to drain")
            self._work(index, "stop", self._stop(index))

    def _offer_adopt(self, index: int, then: Callable[[], None]) -> None:
        """A server gdnconsole did not start is only ever stopped once the user adopts it, pids in view."""
        server = self.sessions[index].server
        if server is None:  # gone since the key was pressed
            return
        processes = launcher.adopt_processes(server)
        dialog = ConfirmScreen(
            launcher.adopt_question(self._name(index)),
            [("its processes", lambda _tones, width: processes_text(processes, width))],
            yes="Adopt it",
            no="Leave it alone",
            dialog_id="confirm-adopt",
        )
        pid = server.pid
        self.screen.app.push_screen(dialog, lambda yes: self._adopt(index, pid, then) if yes else None)

    def _adopt(self, index: int, pid: int, then: Callable[[], None]) -> None:
        async def adopt() -> None:
            try:
                await launcher.adopt(self.sessions[index], pid)
            except EXPLAINED as exc:
                self._failed(index, "adopt", exc)
                return
            then()

        self._work(index, "adopt", adopt())

    # -- the work (asyncio workers on the app's loop: the launcher talks to the agent) ------------------

    def _start(self, index: int, action: str, phase: str) -> None:
        self.progress[index] = Progress(action, phase, self.clock())
        self.changed(index)

    def _work(self, index: int, action: str, job: Coroutine[Any, Any, None]) -> None:
        """An asyncio worker on the app's loop: the launcher talks to the agent through the session. A
        failure the job does not explain itself is a bug, said as one (a worker would drop it silently)."""

        async def guarded() -> None:
            try:
                await job
            except Exception as exc:
                self._bug(index, action, exc)

        self.screen.run_worker(guarded(), group=f"launch-{index}", exit_on_error=False)

    def _reporter(self, index: int) -> Callable[[str], None]:
        def report(phase: str) -> None:
            progress = self.progress.get(index)
            if progress is not None:
                progress.phase = phase
                self.changed(index)

        return report

    async def _launch(self, index: int, profile: Profile) -> None:
        session, journal = self.sessions[index], self.journals(index)
        try:
            attempt = await launcher.launch(
                session, profile, journal=journal, on_progress=self._reporter(index)
            )
        except EXPLAINED as exc:  # refused by the agent, lock held, link lost: say it, change nothing
            self._failed(index, "launch", exc)
            return
        await self._follow(index, profile, attempt, journal)

    async def _relaunch(self, index: int, profile: Profile) -> None:
        session, journal = self.sessions[index], self.journals(index)
        try:
            attempt = await launcher.relaunch(
                session, profile, journal=journal, on_progress=self._reporter(index)
            )
        except EXPLAINED as exc:
            self._failed(index, "relaunch", exc)
            return
        await self._follow(index, profile, attempt, journal)

    async def _follow(self, index: int, profile: Profile, attempt: Attempt, journal: Journal) -> None:
        """From the process start to ready or its end; the status bar's stage shows the way there."""
        if attempt.outcome == "running":
            self._reporter(index)(f"pid {attempt.pid} started, following its log")
            attempt = await launcher.settle(self.sessions[index], attempt, journal=journal)
        self._finished(index, profile, attempt)
        if attempt.outcome == "ready":
            # Ready is what the log says; the verification prompt says whether the model answers.
            attempt = await launcher.verification(
                self.sessions[index], attempt, timeout=VERIFY_WAIT_S, journal=journal
            )
            self._verified(index, attempt)

    async def _stop(self, index: int) -> None:
        session, journal = self.sessions[index], self.journals(index)
        try:
            await launcher.stop(session, grace=STOP_GRACE_S, journal=journal)
        except EXPLAINED as exc:
            self._failed(index, "stop", exc)
            return
        self.progress.pop(index, None)
        self.changed(index)
        self.screen.notify(f"{self._name(index)}: server stopped", timeout=4)

    def _failed(self, index: int, action: str, exc: Exception) -> None:
        self.progress.pop(index, None)
        self.changed(index)
        said = f"{self._name(index)}: {action} failed: {self._masked(index, str(exc))}"
        self.screen.notify(said, severity="error", timeout=10)

    def _masked(self, index: int, text: str) -> str:
        """The host's or SGLang's words, which may echo an argument, with the host's secrets masked."""
        return mask_known(text, profile_secrets(self.sessions[index].host.profiles.values()))

    def _bug(self, index: int, action: str, exc: Exception) -> None:
        """Not the host's doing: a bug of ours, said as one, its traceback in the console's log."""
        self.progress.pop(index, None)
        self.changed(index)
        line = record_bug(f"{self._name(index)}: {action}", exc)
        self.screen.notify(line, title="gdnconsole bug", severity="error", timeout=30)

    def _finished(self, index: int, profile: Profile, attempt: Attempt) -> None:
        self.progress.pop(index, None)
        self.last[index] = attempt
        self.changed(index)
        if attempt.outcome == "rejected":
            self._offer_form(index, profile, attempt)
        elif attempt.outcome not in ("ready", "verified", "crashed"):  # those are the alerts' (alerts.py)
            self._alarm(index, outcome_text(attempt, Tones.of(self.screen.app)).plain)

    def _verified(self, index: int, attempt: Attempt) -> None:
        """VERIFIED or VERIFY FAILED: the status bar's outcome (the alerts say it, alerts.py)."""
        self.last[index] = attempt
        self.changed(index)

    def _offer_form(self, index: int, profile: Profile, attempt: Attempt) -> None:
        rule = attempt.rule or RuleBreak("?", "rejected by our rules")
        body = Text(visible(rule.message))
        source = f" · {rule.source}" if rule.source else ""
        body.append(f"\n\nrule {rule.id}{source}", Style(dim=True))
        where = field_of(rule.flag) or "args"
        dialog = ConfirmScreen(
            f"{self._name(index)}: nothing was started — our rules reject this profile",
            [("", body)],
            yes=f"Open the form on {where.replace('_', ' ')}",
            no="Close",
            dialog_id="confirm-rejected",
        )
        self.screen.app.push_screen(dialog, lambda yes: self._rejected_answered(index, profile, where, yes))

    def _rejected_answered(self, index: int, profile: Profile, where: str, yes: bool | None) -> None:
        if yes:
            self.open_form(index, profile, where)

    def _alarm(self, index: int, what: str) -> None:
        self.screen.notify(f"{self._name(index)}: {self._masked(index, what)}", severity="error", timeout=15)
