"""The sweep: the baseline, then each combination the rules accept: stop ours, launch, wait for VERIFIED,
measure at each batch size. A combination that crashes, times out or is refused is recorded as such and
the sweep goes on; a cancelled sweep (Ctrl-C, the screen closed) stops the server it started and keeps
what it measured. Only the server this console launched is ever stopped (``host.launcher``)."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gdnconsole.chat.model import ChatError
from gdnconsole.config.hosts import Profile
from gdnconsole.host import launcher, modelconfig
from gdnconsole.host.journal import Attempt, Journal
from gdnconsole.host.replies import LinkLost
from gdnconsole.host.session import HostSession
from gdnconsole.sglang.launch import launch_spec
from gdnconsole.tune.grid import Combo, grid_text
from gdnconsole.tune.measure import Load, measure
from gdnconsole.tune.plan import Planned, baseline_profile, plan
from gdnconsole.tune.poolmem import PoolWatch
from gdnconsole.tune.results import Best, ComboResult, Identity, best_of, set_speedups
from gdnconsole.tune.store import TuneStore

Say = Callable[[str], None]
STOP_GRACE_S = 10.0  # a sweep's own server has no one else's requests to drain
LAUNCH_RECORD_S = 5.0  # a launch sent when the sweep was cancelled: the agent's record of it comes soon


@dataclass(frozen=True)
class Options:
    combos: tuple[Combo, ...]
    load: Load
    timeout: float = 600.0  # per combination, from its launch to VERIFIED
    resume: bool = False


@dataclass
class Timing:
    """Where one combination's wall time went (the bench: overhead is what is left)."""

    label: str
    total_s: float = 0.0
    stop_s: float = 0.0  # the previous server's drain and its GPU memory's release
    startup_s: float = 0.0  # launch to VERIFIED
    busy_s: float = 0.0  # requests in flight

    @property
    def overhead_s(self) -> float:
        return max(0.0, self.total_s - self.stop_s - self.startup_s - self.busy_s)


@dataclass
class Sweep:
    identity: Identity
    batches: tuple[int, ...]
    planned: list[Planned] = field(default_factory=list)
    results: list[ComboResult] = field(default_factory=list)  # in the plan's order, the baseline first
    timings: list[Timing] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    ended: float | None = None
    interrupted: bool = False
    launching: tuple[int | None] | None = None  # (our server's pid before it) while a launch is in flight
    halted: str | None = None  # why the host refused a launch: every later combination would meet it too
    profile: str = ""  # the profile's name

    @property
    def baseline(self) -> ComboResult | None:
        return next((r for r in self.results if r.combo is None), None)

    @property
    def combos(self) -> list[ComboResult]:
        return [r for r in self.results if r.combo is not None]

    @property
    def best(self) -> Best | None:
        return best_of(self.combos, self.batches)

    @property
    def measured_any(self) -> bool:
        return any(r.status == "measured" for r in self.results)

    def to_json(self) -> dict[str, Any]:
        """The `tune --json` object (issue 19)."""
        best = self.best
        baseline = self.baseline
        return {
            "host": self.identity.host,
            "sglang": self.identity.sglang,
            "model": self.identity.model,
            "gpus": list(self.identity.gpus),
            "prompts": self.identity.prompts,
            "batches": list(self.batches),
            "baseline": baseline.to_json() if baseline is not None else None,
            "results": [r.to_json() for r in self.combos],
            "best": best.to_json() if best is not None else None,
            "flags": self.identity.flags,
            "interrupted": self.interrupted,
        }


def flags_digest(profile: Profile, python: str) -> str:
    """The profile's command line apart from its speculative flags, as a short digest: figures measured
    with other flags (another memory split, another model) are not this profile's."""
    flags = " ".join(launch_spec(baseline_profile(profile), python).argv)
    return hashlib.sha256(flags.encode("utf-8")).hexdigest()[:12]


def identity_of(session: HostSession, profile: Profile, load: Load) -> Identity:
    return Identity(
        host=session.host.name,
        sglang=session.facts.sglang,
        model=profile.model,
        gpus=[g.name or "?" for g in session.gpus],
        prompts=load.prompts.ident,
        flags=flags_digest(profile, session.host.python),
        max_tokens=load.max_tokens,
    )


async def run(
    session: HostSession,
    profile: Profile,
    options: Options,
    *,
    store: TuneStore,
    journal: Journal,
    say: Say,
    on_result: Callable[[ComboResult], None] | None = None,
    sweep: Sweep | None = None,
) -> Sweep:
    """Run the sweep on a connected session; ``sweep`` (when given) is filled as it goes, so a caller
    that is interrupted still holds what was measured."""
    identity = identity_of(session, profile, options.load)
    sweep = sweep or Sweep(identity, options.load.batches)
    sweep.identity, sweep.batches, sweep.profile = identity, options.load.batches, profile.name
    read = await modelconfig.fetch(session.host, profile.model, ssh=session.ssh_target)  # issue 26
    model_config = modelconfig.warn_once(read, say)
    sweep.planned = plan(session.facts, profile, options.combos, session.host.python, model_config)
    reuse = store.measured(sweep.identity, options.load.batches) if options.resume else {}
    try:
        for index, planned in enumerate(sweep.planned):
            label = planned.combo.label if planned.combo else "baseline"
            say(f"[{index + 1}/{len(sweep.planned)}] {label}")
            result = reuse.get(planned.combo)
            shared = _shared(sweep, planned)
            if shared is not None:
                result = shared
                say(f"{label}: {same_as_text(planned.same_as)}: not launched again")
            elif result is None:
                result = await _one(session, planned, options, journal, say, sweep)
                store.add_result(sweep.identity, result)
            else:
                say(f"{label}: measured before (--resume), kept")
            sweep.results.append(result)
            set_speedups(sweep.baseline, sweep.results)
            if on_result is not None:
                on_result(result)
            if sweep.halted is not None:
                say(f"the sweep stops: {sweep.halted}")
                break
    except asyncio.CancelledError:
        sweep.interrupted = True
        await _stop_interrupted(session, sweep, journal, say)
        raise
    finally:
        sweep.ended = time.time()
        set_speedups(sweep.baseline, sweep.results)
        store.add_sweep(sweep_record(sweep))
    await _stop_ours(session, journal, say)
    return sweep


def same_as_text(combo: Combo | None) -> str:
    return f"same as {combo.label} (SGLang's adjustment)" if combo is not None else ""


def _shared(sweep: Sweep, planned: Planned) -> ComboResult | None:
    """The result of a combination SGLang runs identically to one measured earlier in this sweep: that
    one's figures (the plan puts it first)."""
    if planned.same_as is None or planned.combo is None:
        return None
    lead = next((r for r in sweep.results if r.combo == planned.same_as), None)
    return lead.shared_by(planned.combo, planned.notices) if lead is not None else None


def sweep_record(sweep: Sweep) -> dict[str, Any]:
    """The store's ``sweep`` line: the journal's entry (store.SweepEntry) and the whole `tune --json`
    object, from which the tune screen shows the last sweep again (``stored``)."""
    best = sweep.best
    attempts = [r.attempt for r in sweep.results if r.attempt is not None and not r.resumed]
    return {
        "key": sweep.identity.key(),
        "profile": sweep.profile,
        "grid": grid_text(
            [c for c in [*(p.combo for p in sweep.planned), *(r.combo for r in sweep.results)] if c]
        ),
        "batches": list(sweep.batches),
        "started": sweep.started,
        "ended": sweep.ended,
        "interrupted": sweep.interrupted,
        "attempts": list(dict.fromkeys(attempts)),  # a combination sharing another's server: once
        "results": [
            {"combo": r.label, "status": r.status, "attempt": None if r.resumed else r.attempt}
            for r in sweep.results
        ],
        "best": best.to_json() if best is not None else None,
        "sweep": sweep.to_json(),
    }


def stored(store: TuneStore, profile: str) -> Sweep | None:
    """The last sweep stored for ``profile`` (the tune screen shows it on opening), None without one."""
    for record in reversed(store.sweeps()):
        if record.get("profile") == profile and isinstance(record.get("sweep"), dict):
            return from_record(record)
    return None


def from_record(record: dict[str, Any]) -> Sweep | None:
    raw = record["sweep"]
    key = record.get("key") if isinstance(record.get("key"), dict) else {}
    assert isinstance(key, dict)
    identity = Identity(
        host=str(raw.get("host") or ""),
        sglang=raw.get("sglang") if isinstance(raw.get("sglang"), str) else None,
        model=str(raw.get("model") or ""),
        gpus=[str(g) for g in raw.get("gpus") or []],
        prompts=str(raw.get("prompts") or ""),
        flags=str(raw.get("flags") or ""),
        max_tokens=int(key.get("max_tokens") or 0),
    )
    batches = tuple(b for b in raw.get("batches") or [] if isinstance(b, int))
    results = [raw.get("baseline"), *(raw.get("results") or [])]
    parsed = [ComboResult.from_json(r) for r in results if isinstance(r, dict)]
    sweep = Sweep(identity, batches, results=[r for r in parsed if r is not None])
    sweep.profile = str(record.get("profile") or "")
    sweep.started = float(record.get("started") or record.get("time") or 0.0)
    ended = record.get("ended")
    sweep.ended = float(ended) if isinstance(ended, int | float) else None
    sweep.interrupted = bool(record.get("interrupted"))
    set_speedups(sweep.baseline, sweep.results)
    return sweep


async def _stop_interrupted(session: HostSession, sweep: Sweep, journal: Journal, say: Say) -> None:
    """Ctrl-C, the screen closed: stop the server the sweep launched, even one whose launch was on its
    way to the agent when the sweep was cancelled (its record comes a moment later)."""
    say("interrupted: stopping the sweep's server")
    if sweep.launching is not None:
        before = sweep.launching[0]
        await session.wait_until(lambda: session.launched_pid not in (before, None), LAUNCH_RECORD_S)
    await _stop_ours(session, journal, say)


async def _stop_ours(session: HostSession, journal: Journal, say: Say) -> float:
    """Stop the server this console launched, if one runs; seconds it took."""
    if not session.launched_alive:
        return 0.0
    started = time.monotonic()
    try:
        await launcher.stop(session, grace=STOP_GRACE_S, journal=journal)
    except (launcher.LaunchRefused, LinkLost) as exc:
        say(f"could not stop the sweep's server: {exc}")
    return time.monotonic() - started


async def _one(
    session: HostSession, planned: Planned, options: Options, journal: Journal, say: Say, sweep: Sweep
) -> ComboResult:
    label = planned.combo.label if planned.combo else "baseline"
    timing = Timing(label)
    sweep.timings.append(timing)
    started = time.monotonic()
    pool = PoolWatch(session)  # before the launch: the new server's first lines may come with its reply
    try:
        return await _launch_and_measure(session, planned, options, journal, say, timing, sweep, pool)
    finally:
        pool.close()
        timing.total_s = time.monotonic() - started


async def _launch_and_measure(
    session: HostSession,
    planned: Planned,
    options: Options,
    journal: Journal,
    say: Say,
    timing: Timing,
    sweep: Sweep,
    pool: PoolWatch,
) -> ComboResult:
    result = ComboResult(planned.combo, "rejected", notices=list(planned.notices))
    if planned.rule is not None:
        result.rule = (planned.rule.id, planned.rule.message)
        say(f"rejected by rule {planned.rule.id}: never launched")
        return result
    timing.stop_s = await _stop_ours(session, journal, say)
    sweep.launching = (session.launched_pid,)  # kept when cancelled: run() then waits for the record
    try:
        attempt = await launcher.relaunch(session, planned.profile, journal=journal, on_progress=say)
    except (launcher.LaunchRefused, LinkLost) as exc:  # a server not ours on the port, memory held, no link
        sweep.launching, sweep.halted = None, str(exc)
        result.status, result.fatal = "crashed", f"not launched: {exc}"
        return result
    sweep.launching = None
    result.attempt = attempt.number
    if attempt.outcome == "rejected":
        result.rule = (attempt.rule.id, attempt.rule.message) if attempt.rule else ("?", "")
        return result
    launched = time.monotonic()
    say(f"pid {attempt.pid}: waiting for VERIFIED (up to {options.timeout:g} s)")
    attempt = await launcher.settle(
        session, attempt, until="verified", timeout=options.timeout, journal=journal
    )
    timing.startup_s = time.monotonic() - launched
    result.startup_s = timing.startup_s
    _note_startup(session, attempt, result, pool)
    pool.close()  # the startup is over: the measured requests' lines are not read
    if attempt.outcome != "verified":
        _not_measured(attempt, result)
        say(f"{result.status}: {result.fatal or 'no answer'}")
        return result
    say("VERIFIED; measuring")
    try:
        measured = await measure(session, options.load, say)
    except ChatError as exc:  # no model list: the server went away between VERIFIED and the prompts
        _died(session, attempt)
        _not_measured(attempt, result)
        result.fatal = result.fatal or str(exc)
        return result
    timing.busy_s = measured.busy_s
    result.by_batch = measured.figures
    if _died(session, attempt):  # died while measured: the figures are not this server's best
        _not_measured(attempt, result)
    else:
        result.status = "measured"
    return result


def _died(session: HostSession, attempt: Attempt) -> bool:
    launcher.observe(session, attempt)
    return attempt.outcome == "crashed"


def _not_measured(attempt: Attempt, result: ComboResult) -> None:
    if attempt.outcome in ("crashed", "stopped"):
        result.status = "crashed"
        result.fatal = attempt.fatal.summary if attempt.fatal else "the server ended"
    elif attempt.verify is not None and attempt.verify.ok is False:
        result.status = "crashed"
        result.fatal = f"VERIFY FAILED: {attempt.verify.reason or 'no answer'}"
    else:
        result.status = "timeout"
        result.fatal = f"not VERIFIED in time (stage {attempt.stage})"


def _note_startup(session: HostSession, attempt: Attempt, result: ComboResult, pool: PoolWatch) -> None:
    """KV-cache tokens (the log's TP0), warnings, and the GPU memory each rank's GPU used once its memory
    pool was allocated (``poolmem``: the GPU's total less the ``avail mem`` of the rank's `Memory pool
    end` line; not NVML's figure after VERIFIED, which also holds the CUDA graphs)."""
    result.warnings = list(attempt.warnings)
    startup = session.startup_of(attempt.pid)
    if startup is not None:
        ranks = startup.scheduler_ranks()
        first = ranks[sorted(ranks)[0]] if ranks else None
        kv = first.numbers.get("kv_tokens") if first is not None else None
        result.kv_tokens = int(kv) if kv is not None else None
    result.gpu_mib = pool.used_mib()
