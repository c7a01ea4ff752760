"""`gdnconsole launch HOST`, `stop HOST` and `adopt HOST`: the launch keys, without the dashboard.

`launch` replaces the server this console launched before (stop, wait for its GPU memory, start), checks
the flags first, waits for the outcome and records the attempt in the host's journal. The server keeps
running after the command ends, whatever it printed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import click

from gdnconsole.cli.common import EXIT_FAILED, EXIT_USAGE, ask, fail, host_named
from gdnconsole.cli.connect import connected
from gdnconsole.config import profileset
from gdnconsole.config.hosts import Host, Profile
from gdnconsole.host import launcher
from gdnconsole.host.journal import Attempt, Journal
from gdnconsole.host.replies import LinkLost
from gdnconsole.host.session import HostSession
from gdnconsole.host.topics import Topic
from gdnconsole.logs.textsafe import visible
from gdnconsole.timefmt import span


def _profile(host: Host, name: str | None, sets: tuple[str, ...]) -> Profile:
    chosen = host.profiles.get(name) if name else host.profile
    if chosen is None:
        known = ", ".join(host.profiles) or "none"
        fail(
            f"{host.name} has no profile {name!r} (profiles: {known})"
            if name
            else f"{host.name} has no launch profile",
            EXIT_USAGE,
        )
    try:
        return profileset.apply_sets(chosen, sets)
    except profileset.SetError as exc:
        fail(str(exc), EXIT_USAGE)


def attempt_json(attempt: Attempt) -> dict[str, Any]:
    """The `launch --json` object (issue 5 §4)."""
    record = attempt.to_json()  # the journal's own form of fatal, rule and verify
    return {
        "attempt": attempt.number,
        "argv": attempt.argv,
        "env": attempt.env,
        "outcome": attempt.outcome,
        "stage": attempt.stage,
        "fatal": record["fatal"],
        "rule": record["rule"],
        "durations": attempt.stages,
        "verify": record["verify"],
    }


def _to_stderr(message: str) -> None:
    click.echo(f"-- {visible(message)}", err=True)


PROGRESS_EVERY_S = 15.0  # a wait with no new stage says it still waits this often


class StageNotes:
    """`launch --wait` as it goes: each stage the attempt's server reaches, when it reaches it, with the
    time since the launch (the stage names are the JSON's `stage` and `durations` keys); a wait with no
    news says every PROGRESS_EVERY_S that it still waits, and where."""

    def __init__(self, session: HostSession, attempt: Attempt, say: Callable[[str], None]) -> None:
        self.session, self.attempt, self.say = session, attempt, say
        self.stage = ""
        self.said_at = time.monotonic()

    def __call__(self, _topic: Topic) -> None:
        """A session listener: a change may be a new stage."""
        startup = self.session.startup_of(self.attempt.pid) if self.attempt.pid is not None else None
        if startup is not None and startup.stage.label != self.stage:
            self.stage = startup.stage.label
            self._note(self.stage)

    def _note(self, text: str) -> None:
        self.say(f"{text} ({span(time.time() - self.attempt.time)})")
        self.said_at = time.monotonic()

    async def keep_saying(self) -> None:
        """Until cancelled: that it still waits, after each quiet PROGRESS_EVERY_S."""
        while True:
            await asyncio.sleep(max(0.0, self.said_at + PROGRESS_EVERY_S - time.monotonic()))
            if time.monotonic() - self.said_at >= PROGRESS_EVERY_S:
                self._note(f"still {self.stage or 'starting'}")


async def _settle_saying(session: HostSession, attempt: Attempt, notes: StageNotes, **settle: Any) -> Attempt:
    session.subscribe(notes)
    heartbeat = asyncio.create_task(notes.keep_saying())
    try:
        return await launcher.settle(session, attempt, **settle)
    finally:
        heartbeat.cancel()
        session.unsubscribe(notes)


async def _launch(
    host: Host, profile: Profile, *, check: bool, wait: str, timeout: float, say: Any
) -> Attempt:
    journal = Journal(host.name)
    async with connected(host) as session:
        attempt = await launcher.relaunch(session, profile, check=check, journal=journal, on_progress=say)
        if attempt.outcome == "running" and wait != "started":
            say(f"started pid {attempt.pid}; waiting for it to be {wait} (up to {timeout:g} s)")
            notes = StageNotes(session, attempt, _to_stderr)  # --json too: stdout holds only the JSON
            attempt = await _settle_saying(
                session, attempt, notes, until=wait, timeout=timeout, journal=journal
            )
        return attempt


@click.command("launch")
@click.argument("host_name", metavar="HOST")
@click.option("--profile", "profile_name", help="Launch profile (default: the host's default).")
@click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE", help=f"Change a profile field ({profileset.KNOWN})."
)
@click.option(
    "--wait",
    type=click.Choice(["started", "ready", "verified"]),
    default="ready",
    show_default=True,
    help="What to wait for before exiting.",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0.1), default=600.0, show_default=True, help="Seconds to wait."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for scripts.")
@click.option("--no-check", is_flag=True, help="Launch even when the flag checker rejects the flags.")
def launch_cmd(
    host_name: str,
    profile_name: str | None,
    sets: tuple[str, ...],
    wait: str,
    timeout: float,
    as_json: bool,
    no_check: bool,
) -> None:
    """Launch (or relaunch) SGLang on HOST from a profile, checked first; exit 0 once it is ready
    (or, with --wait verified, once the model answered the profile's verification prompt).

    A server this console launched before is stopped first (SIGTERM, then SIGKILL to its process group)
    and its GPU memory awaited; a server started by hand is never touched. The attempt goes to the journal.
    """
    host = host_named(host_name)
    profile = _profile(host, profile_name, sets)

    def say(message: str) -> None:
        if not as_json:
            _to_stderr(message)

    try:
        attempt = asyncio.run(_launch(host, profile, check=not no_check, wait=wait, timeout=timeout, say=say))
    except (launcher.LaunchRefused, LinkLost) as exc:
        if as_json:
            click.echo(json.dumps({"attempt": None, "outcome": "refused", "message": str(exc)}))
        fail(str(exc), EXIT_FAILED)
    if as_json:
        click.echo(json.dumps(attempt_json(attempt)))  # one line, as every --json
    else:
        _print_attempt(attempt)
    good = attempt.outcome in ("ready", "verified") or (wait == "started" and attempt.outcome == "running")
    if wait == "verified":
        good = attempt.outcome == "verified"
    sys.exit(0 if good else EXIT_FAILED)


def _print_attempt(attempt: Attempt) -> None:
    """The attempt for people: its argv, the log's fatal summary and warnings, the verification's reason
    came from the operator, the log and the server, and are shown, never obeyed (textsafe)."""
    for line in _attempt_lines(attempt):
        click.echo(visible(line))


def _attempt_lines(attempt: Attempt) -> Iterator[str]:
    yield f"attempt {attempt.number}: {attempt.outcome} (stage {attempt.stage})"
    for change in attempt.diff:
        yield f"  {change}"
    if attempt.rule:
        yield f"  rejected by rule {attempt.rule.id}: {attempt.rule.message}"
    if attempt.fatal:
        line = attempt.fatal.line
        yield f"  fatal{f' (log line {line})' if line else ''}: {attempt.fatal.summary}"
    for warning in attempt.warnings:
        yield f"  warning: {warning}"
    verify = attempt.verify
    if verify and verify.ok:
        took = f" in {span(verify.latency_ms / 1000)}" if verify.latency_ms is not None else ""
        yield f"  VERIFIED: the model answered{took}"
    elif verify:
        yield f"  VERIFY FAILED: {verify.reason}"
    elif attempt.outcome == "ready":
        yield "  not verified: no answer to the verification prompt yet"


async def _stop(host: Host, grace: float, say: Any) -> launcher.StopResult | str:
    """The stop result, or why there was nothing to stop (a message: stop is idempotent)."""
    async with connected(host, probe=False) as session:
        plan = launcher.stop_plan(session)
        if plan.empty:
            stranger = launcher.adoptable(session)
            if stranger is None:
                return f"nothing to stop: no server gdnconsole launched or adopted runs on {host.name}"
            raise launcher.LaunchRefused(
                f"pid {stranger.pid} on {host.name} was not started by gdnconsole: adopt it first "
                f"(gdnconsole adopt {host.name} --pid {stranger.pid})"
            )
        say(f"stopping pid {plan.pid} (process group {plan.pgid}), up {plan.uptime_s} s")
        return await launcher.stop(session, grace=grace, journal=Journal(host.name))


def stop_owned(host: Host, grace: float = 30.0) -> str:
    """Stop the server gdnconsole launched or adopted on ``host``, if one runs; one line on what happened
    (`gdnconsole demo` at its end: the console's own server, never another)."""
    try:
        result = asyncio.run(_stop(host, grace, lambda _: None))
    except (launcher.LaunchRefused, LinkLost) as exc:
        return f"the demo server was not stopped: {exc}"
    if isinstance(result, str):
        return result
    return f"stopped the demo server, pid {result.pid} ({result.how}, {span(result.elapsed)})"


@click.command("stop")
@click.argument("host_name", metavar="HOST")
@click.option(
    "--grace", type=click.FloatRange(min=0), default=30.0, show_default=True, help="Seconds to drain."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for scripts.")
def stop_cmd(host_name: str, grace: float, as_json: bool) -> None:
    """Stop the server gdnconsole launched (or adopted) on HOST: SIGTERM, then SIGKILL to its group.
    Nothing running is not an error (exit 0); a server gdnconsole did not start is refused (exit 1)."""
    host = host_named(host_name)

    def say(message: str) -> None:
        if not as_json:
            _to_stderr(message)

    try:
        result = asyncio.run(_stop(host, grace, say))
    except (launcher.LaunchRefused, LinkLost) as exc:
        if as_json:
            click.echo(json.dumps({"stopped": False, "message": str(exc)}))
        fail(str(exc), EXIT_FAILED)
    if isinstance(result, str):
        nothing = {"stopped": False, "running": False, "message": result}
        click.echo(json.dumps(nothing) if as_json else visible(result))
        return
    payload = {
        "stopped": True,
        "pid": result.pid,
        "pgid": result.pgid,
        "how": result.how,
        "elapsed": result.elapsed,
    }
    click.echo(
        json.dumps(payload) if as_json else f"stopped pid {result.pid} ({result.how}, {span(result.elapsed)})"
    )


class AlreadyOurs(Exception):
    """The server to adopt is gdnconsole's already: nothing to do, and nothing wrong."""

    def __init__(self, pid: int, host: str) -> None:
        super().__init__(f"pid {pid} on {host} is gdnconsole's already: nothing to adopt")
        self.pid = pid


async def _adopt(host: Host, pid: int | None, confirm: Callable[[str], bool]) -> tuple[int, bool]:
    """(pid, adopted): ask ``confirm`` with the dashboard's question, then adopt; LaunchRefused when
    there is no server to adopt, AlreadyOurs when it is gdnconsole's."""
    async with connected(host, probe=False) as session:
        server = launcher.adoptable(session, pid)
        if server is None:
            ours = session.launched_pid
            if ours is not None and pid in (None, ours):
                raise AlreadyOurs(ours, host.name)
            which = f"no SGLang server with pid {pid}" if pid is not None else "no SGLang server"
            raise launcher.LaunchRefused(f"{which} runs on {host.name}: nothing to adopt")
        lines = [launcher.adopt_question(host.name), "its processes:"]
        lines += [f"  pid {p}  {what}" for p, what in launcher.adopt_processes(server)]
        if not confirm("\n".join(lines)):
            return server.pid, False
        await launcher.adopt(session, server.pid)
        return server.pid, True


@click.command("adopt")
@click.argument("host_name", metavar="HOST")
@click.option("--pid", type=int, help="The server's pid (default: the server on the profile's port).")
@click.option("--yes", is_flag=True, help="Adopt without asking (scripts).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for scripts.")
def adopt_cmd(host_name: str, pid: int | None, yes: bool, as_json: bool) -> None:
    """Make a server started by hand on HOST gdnconsole's, so that stop and relaunch may end it."""
    host = host_named(host_name)
    if not yes and not sys.stdin.isatty():
        fail("adopting asks first, and there is no terminal to ask on: pass --yes", EXIT_USAGE)

    def confirm(question: str) -> bool:
        if yes:
            return True
        click.echo("\n".join(map(visible, question.split("\n"))), err=True)  # the host's command lines
        return ask("Adopt it?")

    try:
        adopted_pid, adopted = asyncio.run(_adopt(host, pid, confirm))
    except AlreadyOurs as ours:  # what adopt was asked for holds already: exit 0
        payload = {"adopted": False, "already": True, "pid": ours.pid, "message": str(ours)}
        click.echo(json.dumps(payload) if as_json else str(ours))
        return
    except (launcher.LaunchRefused, LinkLost) as exc:
        if as_json:
            click.echo(json.dumps({"adopted": False, "message": str(exc)}))
        fail(str(exc), EXIT_FAILED)
    if as_json:
        click.echo(json.dumps({"adopted": adopted, "pid": adopted_pid}))
    else:
        click.echo(f"adopted pid {adopted_pid}" if adopted else f"left pid {adopted_pid} alone")
    sys.exit(0 if adopted else EXIT_FAILED)
