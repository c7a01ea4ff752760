"""Toasts (and the terminal bell) for what an operator who looked away must hear about, per host, once.

One place says them all, whatever started the server (this console's `L`, the CLI's `launch`, someone's
`nohup`): a small state machine per host compares each look at the session with the previous one.

- the server became **ready** (the log says so), then **VERIFIED** (a real answer), or **VERIFY FAILED**,
  or a verified server **lost VERIFIED**;
- the server **crashed** (a fatal error in its log, or an exit with a failing status) or **exited**;
- the **link dropped**, and **came back**.

What the first complete look finds (a server ready long ago, an old crash in the log) is the baseline, not
news; while the log is still being caught up (a first connect, a reconnect) nothing is said, and the next
complete look is compared with the last one, so that a server that became ready during an outage is
announced once the link is back. The link is compared on every look.

The bell (``[console] bell = true``) rings on a crash, a lost link, VERIFY FAILED and VERIFIED LOST, and
once per startup on ready or VERIFIED when that startup took longer than ``SLOW_STARTUP_S``.

Pure logic: ``Look`` is built from a session by ``look``; ``HostAlerts.observe`` returns the alerts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from gdnconsole.timefmt import span

if TYPE_CHECKING:
    from gdnconsole.host.session import HostSession

SLOW_STARTUP_S = 30.0  # a ready / VERIFIED after a startup this long rings the bell (when configured)
STOP_CODES = frozenset({0, -2, -9, -15})  # exit statuses of a server that was stopped, not one that crashed

Severity = Literal["information", "warning", "error"]
Kind = Literal[
    "ready", "verified", "verify-failed", "verified-lost", "crashed", "exited", "link-lost", "link-back"
]


@dataclass(frozen=True)
class Look:
    """What the alerts look at in one host's state."""

    connected: bool
    link_message: str | None = None
    stopping: bool = False  # the console is closing the session: a link going down is not news
    complete: bool = True  # the first look is done and the log caught up
    generation: int = 0  # the log's generation: a relaunch rewrites the log
    startup: int = 0  # which startup in that log (a server restarted by hand appends to the same file)
    pid: int | None = None  # the server's
    ready: bool = False
    startup_s: float | None = None  # from the startup's first line to ready, by the log's clock
    fatal: str | None = None  # the fatal error of the current startup: "summary (log line N)"
    serving: tuple[int | None, int] | None = None  # the server the verification state belongs to
    verified: bool | None = None
    latency_ms: float | None = None
    reason: str | None = None
    exits: tuple[tuple[int, int | None], ...] = ()  # (pid, returncode) of each server seen to exit
    expected_exit: bool = False  # this console is stopping or relaunching the server


@dataclass(frozen=True)
class Alert:
    kind: Kind
    message: str  # with the host's name first
    severity: Severity
    bell: bool


@dataclass
class HostAlerts:
    """One host's state machine."""

    host: str
    baseline: Look | None = None  # the last complete look
    last: Look | None = None  # the last look, complete or not
    link_lost: bool = False  # a lost link was announced, and not yet its return
    exits_seen: set[int] = field(default_factory=set)
    fatal_seen: set[tuple[int, int]] = field(default_factory=set)  # startups whose fatal error is known
    crashed: set[tuple[int, int]] = field(default_factory=set)  # startups whose crash was announced
    rang_slow: set[tuple[int, int]] = field(default_factory=set)  # startups whose slow start rang the bell

    def observe(self, now: Look) -> list[Alert]:
        """The alerts ``now`` gives rise to, compared with what was seen before."""
        out = self._link(now)
        self.last = now
        if not now.complete:
            return out
        before, self.baseline = self.baseline, now
        if before is None:
            self.exits_seen.update(pid for pid, _code in now.exits)
            if now.fatal is not None:
                self.fatal_seen.add(_startup(now))  # an old crash: its server's exit is still news
            return out
        out += self._ready(before, now)
        out += self._verified(before, now)
        out += self._crashed(before, now)
        return out

    def _alert(self, kind: Kind, what: str, severity: Severity = "information", bell: bool = False) -> Alert:
        return Alert(kind, f"{self.host}: {what}", severity, bell)

    def _link(self, now: Look) -> list[Alert]:
        last = self.last
        if last is None:
            return []
        if last.connected and not now.connected and not now.stopping:
            self.link_lost = True
            why = f": {now.link_message}" if now.link_message else ""
            return [self._alert("link-lost", f"link lost{why}", "warning", bell=True)]
        if now.connected and not last.connected and self.link_lost:
            self.link_lost = False
            return [self._alert("link-back", "link back")]
        return []

    def _slow_bell(self, now: Look) -> bool:
        """Once per startup: ready or VERIFIED after a long startup (the operator may have looked away)."""
        if now.startup_s is None or now.startup_s < SLOW_STARTUP_S or _startup(now) in self.rang_slow:
            return False
        self.rang_slow.add(_startup(now))
        return True

    def _ready(self, before: Look, now: Look) -> list[Alert]:
        if not now.ready or (_startup(before) == _startup(now) and before.ready):
            return []
        took = f" after {_duration(now.startup_s)}" if now.startup_s is not None else ""
        pid = f" (pid {now.pid})" if now.pid is not None else ""
        return [self._alert("ready", f"server ready{pid}{took}", bell=self._slow_bell(now))]

    def _verified(self, before: Look, now: Look) -> list[Alert]:
        if now.serving is None or now.verified is None:
            return []
        was = before.verified if before.serving == now.serving else None
        if now.verified == was:
            return []
        if now.verified:
            took = f" in {span(now.latency_ms / 1000)}" if now.latency_ms is not None else ""
            return [self._alert("verified", f"VERIFIED: the model answered{took}", bell=self._slow_bell(now))]
        if was:
            return [self._alert("verified-lost", f"VERIFIED LOST: {now.reason}", "error", bell=True)]
        return [self._alert("verify-failed", f"VERIFY FAILED: {now.reason}", "error", bell=True)]

    def _crashed(self, before: Look, now: Look) -> list[Alert]:
        out: list[Alert] = []
        startup = _startup(now)
        if now.fatal is not None and startup not in self.fatal_seen:
            self.fatal_seen.add(startup)
            self.crashed.add(startup)
            out.append(self._alert("crashed", f"server crashed: {now.fatal}", "error", bell=True))
        for pid, code in now.exits:
            if pid in self.exits_seen:
                continue
            self.exits_seen.add(pid)
            if startup in self.crashed or now.expected_exit:
                continue  # said already, or this console is stopping it
            if now.fatal is not None or (code is not None and code not in STOP_CODES):
                self.crashed.add(startup)
                what = now.fatal or f"exit status {code}, nothing fatal in its log yet"
                out.append(self._alert("crashed", f"server {pid} exited: {what}", "error", bell=True))
            else:
                status = f"exit status {code}" if code is not None else "stopped outside this console"
                out.append(self._alert("exited", f"server {pid} exited: {status}", "warning"))
        return out


def _startup(look: Look) -> tuple[int, int]:
    return look.generation, look.startup


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def look(session: HostSession, *, expected_exit: bool = False) -> Look:
    """What the alerts need from ``session``."""
    from gdnconsole.host.link import LinkState
    from gdnconsole.sglang.stages import Stage

    startup = session.startup
    server = session.server
    fatal = startup.fatal if startup is not None else None
    startup_s: float | None = None
    if startup is not None and startup.ready and startup.started:
        ready_at = startup.started.get(Stage.READY)
        if ready_at is not None:
            startup_s = max(0.0, ready_at - min(startup.started.values()))
    serving = session.serving
    pid = server.pid if server is not None else None
    current = session.serving_now is not None
    exits = tuple((ended.pid, ended.returncode) for ended in session.exits.values())
    return Look(
        connected=session.link is LinkState.CONNECTED,
        link_message=session.link_message,
        stopping=session.stopping,
        complete=session.complete,
        generation=session.log.resets,
        startup=startup.index if startup is not None else -1,
        pid=pid,
        ready=bool(startup is not None and startup.ready),
        startup_s=startup_s,
        fatal=f"{fatal.summary} (log line {fatal.line})" if fatal is not None else None,
        serving=serving.server if current else None,
        verified=serving.verified if current else None,
        latency_ms=serving.latency_ms,
        reason=serving.reason,
        exits=exits,
        expected_exit=expected_exit,
    )
