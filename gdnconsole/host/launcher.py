"""Launch, stop and relaunch SGLang on a connected host, through its agent; each attempt is journaled.

The rules this module keeps (ARCHITECTURE.md, "The remote side"; FACTS §7):

- Nothing starts before the flag checker has passed the argv (unless asked not to check): a rejected
  attempt is recorded and nothing runs, nothing is stopped.
- Only the server this console launched, or one the user adopted after seeing its pids, is ever stopped:
  SIGTERM to it, then SIGKILL to its process group; never a process found by its name.
- A relaunch starts the new server only once the old one's GPU memory is released, and not at all while
  other processes hold the memory the new one needs (they are named).
"""

from __future__ import annotations

import getpass
import os
import socket
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gdnconsole.config.hosts import Profile
from gdnconsole.errors import ConsoleError
from gdnconsole.host import gpumem, portcheck
from gdnconsole.host.answers import Launched, Stopped, Stopping
from gdnconsole.host.journal import (
    FINAL_OUTCOMES,
    Attempt,
    Fatal,
    Journal,
    JournalError,
    RuleBreak,
    flag_diff,
)
from gdnconsole.host.replies import AgentRefused
from gdnconsole.host.session import HostSession
from gdnconsole.sglang import fatalrule
from gdnconsole.sglang.launch import LaunchSpec, launch_spec, redact

if TYPE_CHECKING:
    from gdnconsole.host.state import Rank, Server, ServerExit
    from gdnconsole.sglang.tracker import Problem

__all__ = [
    "LaunchRefused",
    "StopPlan",
    "StopResult",
    "adopt",
    "flag_diff",
    "launch",
    "observe",
    "relaunch",
    "settle",
    "stop",
    "stop_plan",
]

STOP_GRACE_S = 30.0  # SGLang drains running requests on SIGTERM; a relaunch gives it this long
RELEASE_TIMEOUT_S = 120.0  # a driver tears a large context down in seconds; minutes means something holds it
RELEASE_SAMPLE_S = 0.05  # GPU sampling while waiting for the release: the wait is the relaunch's latency
STOP_ANSWER_SLACK_S = 30.0  # beyond the grace: SIGKILL and the group's end
Say = Callable[[str], None]


class LaunchRefused(ConsoleError):
    """The launch did not start, and why (a lock, a running server, memory held by others…)."""


@dataclass(frozen=True)
class StopResult:
    pid: int
    pgid: int | None
    how: str  # "sigterm" (drained and exited), "sigkill" (after the grace), "gone" (it had ended already)
    elapsed: float
    strays: int = 0  # group members still there after the main process exited (killed at once)


@dataclass(frozen=True)
class PlanProcess:
    pid: int
    title: str  # "python3 -m sglang.launch_server …" or a process title like "sglang::scheduler_TP0"
    uptime_s: float | None


@dataclass(frozen=True)
class StopPlan:
    """What a stop would signal, for the confirmation dialog; ``untouched``: look-alikes left alone."""

    pid: int | None = None
    pgid: int | None = None
    start_time: float | None = None
    uptime_s: float | None = None
    adopted: bool = False
    owner: str | None = None
    argv: list[str] = field(default_factory=list)
    processes: list[PlanProcess] = field(default_factory=list)
    untouched: list[PlanProcess] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return self.pid is None


def owner() -> str:
    """Who launches, as the lock and the pid file on the host name it."""
    return f"{getpass.getuser()}@{socket.gethostname()} pid {os.getpid()}"


# -- the checker -----------------------------------------------------------------------------------


def check_rules(
    session: HostSession, spec: LaunchSpec, model_config: Mapping[str, Any] | None = None
) -> RuleBreak | None:
    """The first rule the argv breaks on this host's SGLang version (the one SGLang stops at), or None;
    its flag tells the UI which field to open, and its message counts the errors that come after it.
    ``model_config``: the model's config.json as the host holds it (its context length, quantization).
    The one check (host/profilecheck.py), on the session's facts."""
    from gdnconsole.host import profilecheck  # the flag tables load only when a launch is checked

    return profilecheck.check_rules(session.facts, spec, model_config)


def _model_of(spec: LaunchSpec) -> str:
    from gdnconsole.sglang import profilerules

    return profilerules.model_of(spec.args)


async def _model_config(
    session: HostSession, profile: Profile, check: bool, say: Say
) -> dict[str, Any] | None:
    """The model's config.json on the host, for the checker (issue 26); None unchecked or unknown."""
    if not check:
        return None
    from gdnconsole.host import modelconfig

    spec = launch_spec(profile, session.host.python)
    return modelconfig.warn_once(
        await modelconfig.fetch(session.host, _model_of(spec), ssh=session.ssh_target), say
    )


# -- launching -------------------------------------------------------------------------------------


def _journal(session: HostSession, journal: Journal | None) -> Journal:
    return journal if journal is not None else Journal(session.host.name)


def _begin(
    session: HostSession,
    profile: Profile,
    check: bool,
    journal: Journal,
    model_config: Mapping[str, Any] | None = None,
) -> tuple[LaunchSpec, Attempt]:
    spec = launch_spec(profile, session.host.python)
    try:  # journaled ("starting") before anything runs: a journal that cannot be written refuses the launch
        attempt = journal.begin(profile.name, spec.argv, spec.env)
    except JournalError as exc:
        raise LaunchRefused(str(exc)) from None
    rule = check_rules(session, spec, model_config) if check else None
    if rule is not None:
        attempt.outcome, attempt.rule = "rejected", rule
        journal.record(attempt)
    return spec, attempt


async def launch(
    session: HostSession,
    profile: Profile,
    *,
    check: bool = True,
    journal: Journal | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> Attempt:
    """Start ``profile`` on the host (nothing of ours may run there); returns once the process runs.

    The attempt is "rejected" when the checker refuses the flags, else "running": follow it with
    ``settle`` (or ``observe`` on each session change). LaunchRefused when the host refuses. Right after
    our server crashed, its ranks' memory is waited for, as in ``relaunch``.
    """
    journal = _journal(session, journal)
    model_config = await _model_config(session, profile, check, on_progress or (lambda _: None))
    spec, attempt = _begin(session, profile, check, journal, model_config)
    if attempt.outcome == "rejected":
        return attempt
    with _journaled_refusal(attempt, journal):
        await _refuse_taken_port(session, spec, ours=set())
        leftovers = _crashed_leftovers(session)
        _refuse_for_memory(session, spec, profile, ours=leftovers)
        if leftovers:
            await _wait_for_leftovers(session, spec, profile, leftovers, on_progress or (lambda _: None))
        return await _start(session, spec, attempt, journal)


@contextmanager
def _journaled_refusal(attempt: Attempt, journal: Journal) -> Iterator[None]:
    """A launch the host refuses (a log directory that does not exist, memory held by others, a server
    that is not ours) is an attempt too: journaled as "refused", with the reason, before it is raised."""
    try:
        yield
    except LaunchRefused as exc:
        attempt.outcome, attempt.fatal = "refused", Fatal(None, str(exc))
        journal.record(attempt)
        raise


async def _wait_for_leftovers(
    session: HostSession, spec: LaunchSpec, profile: Profile, leftovers: set[int], say: Say
) -> None:
    """A server that just crashed: its ranks die with it (or are still dying), and their memory comes
    back a moment later. Wait for that rather than refuse; then the new server's memory must be free."""
    record = session.launched
    gpus = gpumem.rank_gpus(record.argv, record.env) if record is not None else []
    await wait_released(session, gpus, leftovers, say)
    _refuse_for_memory(session, spec, profile, ours=set())


async def _start(session: HostSession, spec: LaunchSpec, attempt: Attempt, journal: Journal) -> Attempt:
    request = {
        "op": "launch",
        "argv": list(spec.argv),
        "env": dict(spec.env),
        "cwd": None,  # the agent's own directory: the host's workdir
        "log": session.log.path,
        "rotate": True,
        "owner": owner(),
    }
    try:
        reply = await session.request(request, "launched")
    except AgentRefused as exc:
        raise LaunchRefused(str(exc)) from None
    launched = Launched.parse(reply)
    if launched is None:
        raise LaunchRefused(f"the agent's answer to the launch names no server pid: {_unreadable(reply)}")
    attempt.pid = launched.server.pid
    attempt.outcome = "running"
    journal.record(attempt)
    return attempt


def _refuse_for_memory(session: HostSession, spec: LaunchSpec, profile: Profile, ours: set[int]) -> None:
    problems = gpumem.shortfalls(
        session.gpus, gpumem.rank_gpus(spec.argv, spec.env), profile.mem_fraction, ours
    )
    if problems:
        raise LaunchRefused("other processes hold the GPU memory the server needs: " + " | ".join(problems))


# -- following an attempt --------------------------------------------------------------------------


def observe(session: HostSession, attempt: Attempt) -> Attempt:
    """Bring ``attempt`` up to date with what the session knows: stages, warnings, ready, the exit.

    Call it on each session change (the TUI) or let ``settle`` do it. A final outcome is kept, except
    that a ready server which then dies is "crashed".
    """
    if attempt.pid is None or attempt.outcome in ("rejected", "stopped", "crashed"):
        return attempt
    startup = session.startup_of(attempt.pid)  # this attempt's server, not another writer's startup
    if startup is not None:
        attempt.stage = startup.stage.label
        attempt.stages = startup.durations(include_current=attempt.outcome == "running")
        attempt.warnings = [w.summary for w in startup.warnings]
        fatal = startup.fatal
        if fatal is not None and not _said(attempt.fatal, fatal):
            attempt.fatal = _fatal_of(session, attempt, fatal)
        if startup.ready and attempt.outcome in ("running", "timeout"):
            attempt.outcome = "ready"
    _observe_verification(session, attempt)
    ended = session.exits.get(attempt.pid)
    if ended is not None:
        attempt.outcome = "crashed"
        if attempt.fatal is None:
            attempt.fatal = Fatal(None, _exit_summary(ended))
    return attempt


def _said(said: Fatal | None, problem: Problem) -> bool:
    """The attempt already says this problem as the log now tells it (the rule check is not rerun)."""
    return said is not None and said.line == problem.line and said.summary.startswith(problem.summary)


def _fatal_of(session: HostSession, attempt: Attempt, problem: Problem) -> Fatal:
    """The log's fatal error, with what the console knows beside it: the flag rule that foretold a bare
    AssertionError at argument processing, and the known fix of a CUDA-graph OOM (a hint, not a cause)."""
    version = session.hello.sglang if session.hello is not None else None
    summary = fatalrule.explained(problem.summary, problem.stage, attempt.argv, version)
    if problem.hint:
        summary = f"{summary}; {problem.hint}"
    return Fatal(problem.line, summary)


def _observe_verification(session: HostSession, attempt: Attempt) -> None:
    """VERIFIED (a real answer) is the furthest an attempt goes; ``verify`` keeps the latest proof,
    so a server that stops answering later shows it while its outcome stays "verified"."""
    serving = session.serving
    if serving.server is None or serving.server[0] != attempt.pid or serving.verified is None:
        return
    attempt.verify = serving.proof()
    if serving.verified and attempt.outcome in ("running", "timeout", "ready"):
        attempt.outcome = "verified"


def recall_verification(session: HostSession, journal: Journal | None = None) -> None:
    """A console that did not verify the running server itself takes the journal's word for it (the
    attempt that started this pid), so `status` agrees with the dashboard that verified it."""
    server = session.server
    if server is None or session.serving.verified is not None:
        return
    attempt = _journal(session, journal).of_pid(server.pid)
    if attempt is not None and attempt.verify is not None:
        session.prober.sync()
        session.serving.recall(attempt.verify, once_verified=attempt.outcome == "verified")


def record_verification(session: HostSession, journal: Journal | None = None) -> None:
    """The session's latest proof (a prompt's answer or failure) into the journal's attempt of the
    running server, so that a console that did not see the prompt (`status`, another dashboard) knows."""
    server = session.server
    pid = server.pid if server is not None else session.launched_pid
    if pid is None:
        return
    journal = _journal(session, journal)
    attempt = journal.of_pid(pid)
    if attempt is not None:
        _observe_verification(session, attempt)
        if attempt.verify is not None:
            journal.update(attempt)


def _exit_summary(ended: ServerExit) -> str:
    code = ended.returncode
    if code is not None and code < 0:
        return f"the server was killed by signal {-code} with nothing in its log"
    if code is not None:
        return f"the server exited with code {code} with nothing fatal in its log"
    return "the server exited with nothing fatal in its log"


async def settle(
    session: HostSession,
    attempt: Attempt,
    *,
    until: str = "ready",
    timeout: float = 600.0,
    journal: Journal | None = None,
) -> Attempt:
    """Wait until the attempt is ready or has ended; "timeout" after ``timeout`` s. With
    ``until="verified"``, a ready attempt then waits for the verification prompt's outcome too.

    The server is left running on a timeout: a slow start is not a failed one.
    """
    journal = _journal(session, journal)
    deadline = time.monotonic() + timeout

    def done() -> bool:
        observe(session, attempt)
        return attempt.outcome in FINAL_OUTCOMES

    if attempt.outcome == "running" and not await session.wait_until(done, timeout):
        attempt.outcome = "timeout"
    journal.update(attempt)
    if until == "verified" and attempt.outcome == "ready":
        await verification(session, attempt, timeout=deadline - time.monotonic(), journal=journal)
    return attempt


async def verification(
    session: HostSession, attempt: Attempt, *, timeout: float, journal: Journal | None = None
) -> Attempt:
    """After ready: wait for the verification prompt's outcome (the session's prober sends it) and
    record it; stops waiting when the server is no longer this attempt's (stopped, replaced, gone)."""

    def done() -> bool:
        _observe_verification(session, attempt)
        return attempt.verify is not None or session.launched_pid != attempt.pid

    await session.wait_until(done, max(timeout, 0.0))
    if attempt.verify is not None:
        _journal(session, journal).update(attempt)
    return attempt


# -- stopping --------------------------------------------------------------------------------------


def stop_plan(session: HostSession) -> StopPlan:
    """What ``stop`` would signal now (empty when this console has launched or adopted nothing alive)."""
    record = session.launched if session.launched_alive else None
    now = time.time()
    untouched = [_plan_server(s, now) for s in session.servers if record is None or s.pid != record.pid]
    untouched += [_plan_rank(o, now) for o in session.orphans]
    if record is None:
        return StopPlan(untouched=untouched)
    server = next((s for s in session.servers if s.pid == record.pid), None)
    if server is not None:
        processes = [_plan_server(server, now), *(_plan_rank(c, now) for c in server.children)]
    else:  # not listed by a scan yet: the pid file's record is what we know
        processes = [_plan_entry(record.pid, " ".join(redact(record.argv)), record.start_time, now)]
    start = record.start_time
    return StopPlan(
        pid=record.pid,
        pgid=record.pgid,
        start_time=start,
        uptime_s=round(now - start, 1) if start is not None else None,
        adopted=record.adopted,
        owner=record.owner,
        argv=list(record.argv),
        processes=processes,
        untouched=untouched,
    )


def _plan_server(server: Server, now: float) -> PlanProcess:
    return _plan_entry(server.pid, " ".join(redact(server.cmdline)), server.start_time, now)


def _plan_rank(rank: Rank, now: float) -> PlanProcess:
    return _plan_entry(rank.pid, rank.title or " ".join(redact(rank.cmdline)), rank.start_time, now)


def _cut_words(title: str, limit: int) -> str:
    """``title`` within ``limit`` characters, cut between two words and marked "…", never mid-flag."""
    if len(title) <= limit:
        return title
    cut = title.rfind(" ", 0, limit - 1)
    return title[: cut if cut > 0 else limit - 1] + " …"


def _plan_entry(pid: int, title: str, start: float | None, now: float) -> PlanProcess:
    return PlanProcess(
        pid=pid, title=_cut_words(title, 200), uptime_s=round(now - start, 1) if start is not None else None
    )


async def stop(session: HostSession, *, grace: float = 30.0, journal: Journal | None = None) -> StopResult:
    """SIGTERM the server this console launched or adopted; SIGKILL its process group after ``grace`` s.

    Returns once its GPU memory is released (NVML), so that a launch may follow at once.
    """
    return await _stop(session, grace, _journal(session, journal), lambda _: None)


async def _stop(session: HostSession, grace: float, journal: Journal, say: Say) -> StopResult:
    record = session.launched if session.launched_alive else None
    if record is None:
        raise LaunchRefused(
            f"no server launched or adopted by gdnconsole runs on {session.host.name}: nothing to stop "
            "(a server started by hand must be adopted first)"
        )
    pid = record.pid
    old = _server_pids(session, pid)  # its ranks may linger in NVML's list as zombies: still its memory
    say(f"stopping pid {pid}: SIGTERM, SIGKILL to its group after {grace:g} s")

    def progress(message: Mapping[str, Any]) -> None:
        stopping = Stopping.parse(message)
        sent = f"{stopping.signal} sent, " if stopping.signal else ""
        say(f"stopping pid {pid}: {sent}{stopping.alive} processes left, {stopping.elapsed} s")

    request = {"op": "stop", "pid": pid, "pgid": record.pgid, "start_time": record.start_time}
    session.stops.add(pid)  # its exit is this console's doing, whatever signal ends it
    try:
        reply = await session.request(
            {**request, "grace": grace}, "stopped", timeout=grace + STOP_ANSWER_SLACK_S, progress=progress
        )
    except AgentRefused as exc:
        raise LaunchRefused(str(exc)) from None
    _mark_stopped(journal, pid)
    # Stopped means the GPUs are free again: a launch right after must not find the old ranks' memory.
    await wait_released(session, gpumem.rank_gpus(record.argv, record.env), old, say)
    stopped = Stopped.parse(reply)
    if stopped is None:
        raise LaunchRefused(f"pid {pid} stopped, but the agent's answer is damaged: {_unreadable(reply)}")
    return StopResult(pid, stopped.pgid, stopped.how, stopped.elapsed, stopped.strays)


def _unreadable(reply: Mapping[str, Any]) -> str:
    """An answer the launcher cannot read, in one short line (its keys, not its values: no secrets)."""
    return "{" + ", ".join(sorted(str(key) for key in reply)[:12]) + "}"


def _mark_stopped(journal: Journal, pid: int) -> None:
    """An attempt stopped before it was ready (or while the journal still says running) ends "stopped"."""
    attempt = journal.of_pid(pid)
    if attempt is not None and attempt.outcome in ("running", "timeout"):
        attempt.outcome = "stopped"
        journal.update(attempt)


def adopt_question(host: str) -> str:
    """What the dashboard and `gdnconsole adopt` ask before adopting, in the same words."""
    return (
        f"{host}: this server was not started by gdnconsole. Adopt it, so that stop and relaunch may end it?"
    )


def adopt_processes(server: Server) -> list[tuple[int, str]]:
    """(pid, what it runs) of a server and its children, as the adopt question shows them: the whole
    command line (API keys masked), never cut mid-flag."""
    return [
        (server.pid, " ".join(redact(server.cmdline))),
        *((c.pid, c.title or "") for c in server.children),
    ]


def adoptable(session: HostSession, pid: int | None = None) -> Server | None:
    """The server ``pid`` (else the host's current server) when it is not the console's already."""
    servers = [s for s in session.servers if pid is None or s.pid == pid]
    server = session.server if pid is None else (servers[0] if servers else None)
    if server is None or server.pid == session.launched_pid:
        return None
    return server


async def adopt(session: HostSession, pid: int) -> None:
    """Take over a server started by hand (the user saw its pids): stop and relaunch may end it now."""
    try:
        await session.request(
            {"op": "adopt", "pid": pid, "log": session.log.path, "owner": owner()}, "adopted"
        )
    except AgentRefused as exc:
        raise LaunchRefused(str(exc)) from None


# -- relaunching -----------------------------------------------------------------------------------


def _server_pids(session: HostSession, pid: int | None) -> set[int]:
    """The launched server and its children as the last process scan saw them, and the GPU processes
    of its group (a rank started since that scan)."""
    if pid is None:
        return set()
    server = next((s for s in session.servers if s.pid == pid), None)
    pids = {pid, *(c.pid for c in (server.children if server is not None else ()))}
    return (pids | _launched_group_on_gpus(session)) if pid == session.launched_pid else pids


def _crashed_leftovers(session: HostSession) -> set[int]:
    """The ranks of the server this console launched, after that server's main process ended: those
    a scan still lists (orphans of its process group), those it had when it exited (dying ranks are
    no longer listed, yet hold their GPU memory until they are gone), and those of its group that the
    GPU sample lists (a rank started after the last scan)."""
    record = session.launched
    if record is None or session.launched_alive or record.pgid is None:
        return set()
    orphans = {o.pid for o in session.orphans if o.pgid == record.pgid}
    return orphans | session.exit_children.get(record.pid, set()) | _launched_group_on_gpus(session)


def _launched_group_on_gpus(session: HostSession) -> set[int]:
    """The GPU processes in the launched server's process group, by the latest GPU sample: its ranks,
    whether or not a process scan has seen them (one started or died between two scans)."""
    record = session.launched
    pgid = record.pgid if record is not None else None
    return gpumem.group_pids(session.gpus, pgid) if pgid is not None else set()


async def _refuse_taken_port(session: HostSession, spec: LaunchSpec, ours: set[int]) -> None:
    """A port someone else listens on fails the startup only after minutes (uvicorn binds last):
    refused now, naming who holds it; the server a relaunch replaces may hold it."""
    problem = await portcheck.taken(session, spec, ours)
    if problem is not None:
        raise LaunchRefused(problem)


def _refuse_foreign_server(session: HostSession, profile: Profile, ours: int | None) -> None:
    for server in session.servers:
        if server.pid != ours and server.port == profile.port:
            raise LaunchRefused(
                f"a server gdnconsole did not launch uses port {profile.port}: pid {server.pid} "
                f"({' '.join(redact(server.cmdline))[:120]}); adopt it to let relaunch replace it"
            )


async def wait_released(
    session: HostSession,
    gpus: Sequence[int],
    old: Collection[int],
    say: Say,
    timeout: float = RELEASE_TIMEOUT_S,
) -> None:
    """Until the rank GPUs' memory is back to what live processes account for (NVML), sampling fast."""
    after = session.gpu_samples  # only samples taken after the old server ended count
    shown: dict[int, int] = {}

    def released() -> bool:
        nonlocal shown
        if session.gpu_samples <= after:
            return False
        left = gpumem.unreleased_mib(session.gpus, gpus, old)
        if left and left != shown:
            say(
                "waiting for GPU memory to be released: "
                + ", ".join(f"GPU {g} {m} MiB" for g, m in left.items())
            )
        shown = left
        return not left

    await session.send({"op": "sample", "interval": RELEASE_SAMPLE_S})
    try:
        if not await session.wait_until(released, timeout):
            held = ", ".join(f"GPU {g}: {m} MiB" for g, m in shown.items())
            raise LaunchRefused(f"GPU memory was not released within {timeout:g} s ({held} unaccounted for)")
    finally:
        await session.send({"op": "sample", "interval": session.sample_interval})


async def relaunch(
    session: HostSession,
    profile: Profile,
    *,
    check: bool = True,
    journal: Journal | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> Attempt:
    """Check, stop the server this console launched (if it runs), wait for its GPU memory, launch.

    A rejected profile stops nothing. A server on the profile's port that gdnconsole did not launch, or
    other processes holding the memory the new server needs, refuse the relaunch before anything stops.
    """
    say: Say = on_progress or (lambda _: None)
    journal = _journal(session, journal)
    model_config = await _model_config(session, profile, check, say)
    spec, attempt = _begin(session, profile, check, journal, model_config)
    if attempt.outcome == "rejected":
        rule = attempt.rule.id if attempt.rule is not None else "?"
        say(f"rejected by the checker's rule {rule}, nothing started (--no-check launches anyway)")
        return attempt
    with _journaled_refusal(attempt, journal):
        old = session.launched_pid
        _refuse_foreign_server(session, profile, old)
        await _refuse_taken_port(session, spec, ours=_server_pids(session, old))
        leftovers = _crashed_leftovers(session)
        _refuse_for_memory(session, spec, profile, ours=_server_pids(session, old) | leftovers)
        if old is not None:
            await _stop(session, STOP_GRACE_S, journal, say)  # returns once the old server's memory is free
            _refuse_for_memory(session, spec, profile, ours=set())
        elif leftovers:
            await _wait_for_leftovers(session, spec, profile, leftovers, say)
        say("starting the server")
        return await _start(session, spec, attempt, journal)
