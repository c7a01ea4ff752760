"""Follow a log line by line: which startup, which stage per rank and overall, when, and what went wrong.

Feed it every line in order (``feed``); it keeps, per startup, the furthest stage each rank reached, when
each stage began, the numbers the log printed, and the problems: warnings SGLang survives and the fatal
error that ended the server, summarised by the line that names the error (not the first frame).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from gdnconsole.sglang import events, logline
from gdnconsole.sglang.events import Event
from gdnconsole.sglang.logline import Kind
from gdnconsole.sglang.stages import MAIN_STAGES, Severity, Stage

MAIN = "main"  # the label of lines without a rank prefix that come from the main process
SOLE_RANK = "TP0"  # scheduler lines without a prefix come from the only rank (tp = 1)

# Kinds of lines that, after a startup has moved on, can only mean a new process is starting.
_OPENERS = frozenset(
    {
        "args",
        "notice_attention",
        "notice_max_running",
        "notice_spec_v2",
        "notice_spec_v1",
        "notice_draft_tokens",
    }
)
_SUMMARY_MAX = 300
# Kinds of lines any program can print: they alone do not make a file an SGLang log.
_GENERIC_KINDS = frozenset(
    {"text", "blank", "message", "library", "tqdm", "py_warning", "exception", "traceback", "killed"}
    | {"uvicorn", "access", "bind_failed", "uvicorn_started", "uvicorn_waiting", "uvicorn_complete"}
    | {"uvicorn_running", "uvicorn_shutdown", "uvicorn_finished"}  # any ASGI server's, unless framed
)
# Fatal lines that report another failure rather than explain one (FACTS §3): the main process's SIGQUIT
# notices, a child's exit code, "see the error messages above", the shell's "Killed". The root cause is
# the other fatal line, when there is one.
_WRAPPERS = frozenset({"sigquit_launch", "sigquit_running", "subprocess_crashed", "init_failed", "killed"})
# Lines only a scheduler writes: without a rank prefix they are the only rank's (tp = 1), not the main
# process's.
# (A retraction is placed by its stage; a bare traceback without a prefix, by its frames.)
_SCHEDULER_KINDS = frozenset({"scheduler_exception", "runtime_oom"})
# Which process reports a fatal line that has no rank prefix (the rest are the main process's or unknown).
_MAIN_KINDS = frozenset(
    {"sigquit_launch", "sigquit_running", "subprocess_crashed", "init_failed", "scheduler_died"}
    | {"warmup_failed", "bind_failed", "args_refused", "health_failed", "uvicorn"}
)
# Warnings of a module SGLang could not import and went on without (FACTS §3, torchcodec).
_IMPORT_KINDS = frozenset({"import_error", "torchcodec_missing"})
# Watchdog timeouts this close together are one event (every rank stuck in the same collective).
COLLECTIVE_WINDOW_S = 30.0
_MISSING_LIB = re.compile(r"(?P<lib>lib[\w+-]+\.so[\w.]*): cannot open shared object file")
# A CUDA graph capture that ran out of memory: what SGLang's own hint block says to do (FACTS §3).
GRAPH_OOM_HINT = (
    "hint: capturing CUDA graphs ran out of GPU memory; the usual fixes are a lower --cuda-graph-max-bs "
    "(fewer batch sizes captured), a lower --mem-fraction-static (more room left beside the KV cache), "
    "or --disable-cuda-graph (slower decoding)"
)


@dataclass
class Problem:
    line: int
    rank: str | None
    stage: Stage
    severity: Severity
    summary: str
    where: str | None = None  # the last traceback frame, for a bare `AssertionError`
    last_line: int = 0  # the block's last line, for folding
    wrapper: bool = False  # a fatal line that only reports another one (a SIGQUIT notice)
    kind: str = ""  # the kind of the line that opened it
    process: str | None = None  # "scheduler", "detokenizer", "main", or None when the lines do not say
    ranks: list[str] = field(default_factory=list)  # every rank that reported it (a watchdog on each)
    hint: str | None = None  # the known fix, when the error has one (a hint, not a cause)
    explained: bool = False  # an exception line (the error's own words) was read
    causes: list[str] = field(default_factory=list)  # the libraries an import warning could not open
    head: str = ""  # the opening line's summary, before the block said more

    def as_dict(self) -> dict[str, object]:
        return {"line": self.line, "rank": self.rank, "stage": self.stage.label, "summary": self.summary}

    @property
    def collective(self) -> bool:
        """Reported by several ranks at once and blamed on none (a hang in a collective)."""
        return self.rank is None and len(self.ranks) > 1


@dataclass
class RankState:
    label: str
    stage: Stage = Stage.STARTING
    started: dict[Stage, float] = field(default_factory=dict)  # first time each stage was seen
    numbers: dict[str, float] = field(default_factory=dict)
    weights_gb: float | None = None  # the target model's, from the first `Load weight end`
    draft_weights_gb: float | None = None

    def reach(self, stage: Stage, time: float | None) -> None:
        self.stage = max(self.stage, stage)
        if time is not None and stage not in self.started:
            self.started[stage] = time


@dataclass
class Startup:
    index: int
    first_line: int
    ranks: dict[str, RankState] = field(default_factory=dict)
    stage: Stage = Stage.STARTING
    started: dict[Stage, float] = field(default_factory=dict)
    last_time: float | None = None
    problems: list[Problem] = field(default_factory=list)
    accept_len: float | None = None
    accept_rate: float | None = None
    gen_throughput: float | None = None
    port: int | None = None
    pid: int | None = None
    seen: set[Stage] = field(default_factory=set)  # stages some line proved (an excerpt skips some)
    saw_args: bool = False
    saw_ready: bool = False
    served: bool = False  # a line proved requests were served after ready (a Decode batch line)
    ended: bool = False  # the server stopped (fatal, or shut down)
    backends: dict[str, str] = field(default_factory=dict)  # the kernels and backends SGLang chose
    problems_at: dict[int, float] = field(default_factory=dict)  # when each problem's line was written

    @property
    def fatal(self) -> Problem | None:
        """The fatal problem that explains the failure: the first one that is not a wrapper (a SIGQUIT
        notice can be printed before the traceback it reports), else the first wrapper."""
        fatals = [p for p in self.problems if p.severity is Severity.FATAL]
        return next((p for p in fatals if not p.wrapper), fatals[0] if fatals else None)

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.WARNING]

    @property
    def reached_ready(self) -> bool:
        """A line proved the server got to ready: its fired-up line, or a line only serving writes. A
        stage read from traceback frames alone (the request loop runs in warm-up too) does not."""
        return self.stage >= Stage.READY and (self.saw_ready or self.served)

    @property
    def ready(self) -> bool:
        return self.reached_ready and self.fatal is None

    def rank(self, label: str) -> RankState:
        state = self.ranks.get(label)
        if state is None:
            state = self.ranks[label] = RankState(label)
        return state

    def reach(self, stage: Stage, time: float | None) -> None:
        self.stage = max(self.stage, stage)
        self.seen.add(stage)
        if time is not None and stage not in self.started:
            self.started[stage] = time
        if stage >= Stage.LISTENING:
            # uvicorn starts only once every scheduler is ready (FACTS §6): the ranks are all up.
            for state in self.ranks.values():
                state.stage = max(state.stage, stage)

    def durations(self, *, include_current: bool = False) -> dict[str, float]:
        """Seconds spent in each stage that has ended (and in the current one when asked)."""
        return stage_durations(self.started, self.last_time if include_current else None)

    def scheduler_ranks(self) -> dict[str, RankState]:
        return {label: r for label, r in self.ranks.items() if label != MAIN}


def stage_durations(started: dict[Stage, float], now: float | None) -> dict[str, float]:
    ordered = sorted(started.items())
    out: dict[str, float] = {}
    for (stage, begin), (_, end) in itertools.pairwise(ordered):
        out[stage.label] = round(max(0.0, end - begin), 3)
    if now is not None and ordered:
        stage, begin = ordered[-1]
        if stage < Stage.READY:
            out[stage.label] = round(max(0.0, now - begin), 3)
    return out


@dataclass
class _Block:
    """An open multi-line block: a traceback and its continuation lines, owned by the line that opened it."""

    problem: Problem | None


class StageTracker:
    """Reads a log in order and keeps what each startup in it reached."""

    def __init__(self) -> None:
        self.startups: list[Startup] = []
        self.lines = 0
        self.sglang_lines = 0  # lines only SGLang writes: a file without one is not an SGLang log
        self._block: _Block | None = None

    @property
    def current(self) -> Startup | None:
        return self.startups[-1] if self.startups else None

    def feed(self, text: str, line: int | None = None) -> list[Event]:
        """Take one physical line (1-based ``line``; defaults to the next one); return its events."""
        self.lines = line if line is not None else self.lines + 1
        return [
            self.feed_event(events.classify(logline.parse(part), self.lines))
            for part in logline.split_glued(text)
        ]

    def feed_event(self, event: Event) -> Event:
        if _is_sglang(event):
            self.sglang_lines += 1
        kind = event.log.kind
        if self._continues_block(kind):
            self._continue_block(event)
            return event
        self._block = None
        startup = self._startup_for(event)
        if event.time is not None:
            startup.last_time = event.time
        self._apply(startup, event)
        return event

    # -- blocks --------------------------------------------------------------------------------------

    def _continues_block(self, kind: Kind) -> bool:
        if self._block is None or kind in (Kind.FRAMED, Kind.UVICORN, Kind.ACCESS, Kind.TQDM):
            return False
        return kind is not Kind.PY_WARNING

    def _continue_block(self, event: Event) -> None:
        assert self._block is not None
        problem = self._block.problem
        event.stage = None
        if problem is None:
            return
        problem.last_line = event.line
        if problem.severity is Severity.WARNING:
            _explain_import_error(problem, event.log.message)
        elif event.log.kind is Kind.EXCEPTION:
            startup = self.current
            problem.summary = _clip(event.log.message)
            problem.explained = True
            problem.line = event.line
            event.severity = problem.severity
            problem.hint = problem.hint or _hint(problem.summary)
            implied = events.exception_stage(event.log.message)
            if implied is not None and startup is not None:
                self._reach(startup, problem.rank, implied, event.time)
                problem.stage = max(problem.stage, implied)
        elif event.log.message.lstrip().startswith("File "):
            problem.where = event.log.message.strip()
            if problem.process is None and problem.rank is None:
                problem.process = _process_of_frame(problem.where)
            if not problem.explained:
                problem.summary = _clip(f"{problem.head}; {_cut_note(problem.where)}")
            startup = self.current
            stage = events.frame_stage(event.log.message)
            if stage is not None and startup is not None:
                stage = _running_in_context(startup, stage)
                self._reach(startup, problem.rank, stage, event.time)
                problem.stage = max(problem.stage, stage)

    def _open_block(self, startup: Startup, event: Event) -> None:
        severity = event.severity
        if event.kind in ("traceback", "exception"):
            # An uncaught exception printed by Python itself ends the process that printed it.
            severity = Severity.WARNING if event.severity is Severity.WARNING else Severity.FATAL
            event.severity = severity
        problem = self._problem(startup, event, severity)
        self._block = _Block(problem=problem)

    # -- startups and stages -------------------------------------------------------------------------

    def _startup_for(self, event: Event) -> Startup:
        startup = self.current
        if startup is None or self._begins_new_startup(startup, event):
            startup = Startup(index=len(self.startups), first_line=event.line)
            self.startups.append(startup)
        if event.kind == "args":
            startup.saw_args = True
        return startup

    @staticmethod
    def _begins_new_startup(startup: Startup, event: Event) -> bool:
        if event.kind not in _OPENERS or event.log.rank is not None:
            return False
        if event.kind == "args":
            return startup.saw_args or startup.stage > Stage.STARTING or startup.ended
        return startup.stage > Stage.STARTING or startup.ended

    def _label(self, event: Event) -> str:
        if event.log.rank is not None:
            return event.log.rank
        stage = event.stage
        if event.kind == "access":
            return MAIN  # uvicorn's access log is the main process's (FACTS §1.1)
        if event.kind in _SCHEDULER_KINDS:
            return SOLE_RANK
        if stage is not None and stage not in MAIN_STAGES:
            return SOLE_RANK  # an unprefixed scheduler line: tp = 1
        return MAIN

    def _reach(self, startup: Startup, label: str | None, stage: Stage, time: float | None) -> None:
        startup.reach(stage, time)
        if label is not None and label != MAIN and stage not in MAIN_STAGES:
            startup.rank(label).reach(stage, time)

    def _apply(self, startup: Startup, event: Event) -> None:
        if event.kind == "ready" and not startup.saw_ready:
            # Fired up ends the warm-up: batch lines before it (read as serving while nothing told the
            # stage) were the warm-up's.
            startup.saw_ready = True
            startup.stage = min(startup.stage, Stage.READY)
            startup.seen.discard(Stage.SERVING)
            startup.started.pop(Stage.SERVING, None)
            for state in startup.ranks.values():
                state.stage = min(state.stage, Stage.READY)
        elif event.kind == "text" and (framed := events.frame_stage(event.log.message)) is not None:
            # A traceback frame outside a block: an excerpt that begins inside a traceback.
            startup.reach(_running_in_context(startup, framed), event.time)
        elif event.kind == "decode_batch":
            startup.served = True  # warm-up never decodes long enough to log a Decode line
        stage = event.stage = _stage_in_context(startup, event)
        label = self._label(event)
        if stage is not None:
            self._reach(startup, label, stage, event.time)
        elif event.log.rank is not None:
            startup.rank(label)  # a rank prefix makes the rank known, though the line names no stage
        self._record_numbers(startup, label, event)
        if event.log.framed and (choice := events.backend_choice(event.kind, event.log.message)):
            startup.backends.setdefault(*choice)  # the first says it: the others repeat it per rank
        if event.kind == "watchdog" and self._same_hang(startup, event):
            return
        # events.classify opens a block on every traceback and py_warning line; an exception line opens one
        # here (its severity is decided by the block)
        if event.opens_block or event.kind == "exception":
            self._open_block(startup, event)
        elif event.severity >= Severity.WARNING:
            self._problem(startup, event, event.severity)

    @staticmethod
    def _same_hang(startup: Startup, event: Event) -> bool:
        """A watchdog timeout on another rank, at about the same time as one already reported, is the
        same hang: counted on the first. Once every rank the log knows has timed out, no rank is to
        blame: they all waited in one collective."""
        rank = event.log.rank
        first = next((p for p in startup.problems if p.kind == "watchdog"), None)
        if first is None or rank is None or rank in first.ranks:
            return False
        begun = startup.problems_at.get(first.line)
        if begun is not None and event.time is not None and event.time - begun > COLLECTIVE_WINDOW_S:
            return False
        first.ranks.append(rank)
        if set(startup.scheduler_ranks()) <= set(first.ranks):
            first.rank = None
            first.summary = _clip(
                f"{first.head} on all {len(first.ranks)} ranks at once: a collective hang (every rank "
                "waited in the same collective operation), not one rank's fault"
            )
        return True

    def _problem(self, startup: Startup, event: Event, severity: Severity) -> Problem | None:
        if severity < Severity.WARNING:
            return None
        rank = event.log.rank
        state = startup.ranks.get(rank) if rank is not None else None
        # A rank whose own lines named no stage yet is as far as the others (an excerpt, or a rank that
        # printed nothing of its progress).
        state_stage = state.stage if state is not None and state.stage > Stage.STARTING else startup.stage
        stage = max(state_stage, event.stage or Stage.STARTING)
        summary = event.log.message.strip().removesuffix("Traceback (most recent call last):").rstrip(" :")
        if not summary:  # a bare traceback header: the block's frames and exception line say what failed
            summary = "Traceback" + (f" on {rank}" if rank else "")
        problem = Problem(
            line=event.line,
            rank=rank,
            stage=stage,
            severity=severity,
            summary=_clip(summary),
            last_line=event.line,
            wrapper=event.kind in _WRAPPERS,
            kind=event.kind,
            process=_process_of(event),
            ranks=[rank] if rank is not None else [],
            hint=_hint(summary) if severity is Severity.FATAL else None,
            explained=event.kind == "exception",
            head=_clip(summary),
        )
        if event.kind in _IMPORT_KINDS:
            problem.summary = _import_summary(problem)
        startup.problems.append(problem)
        if event.time is not None:
            startup.problems_at[event.line] = event.time
        if severity is Severity.FATAL:
            startup.ended = True
        return problem

    def _record_numbers(self, startup: Startup, label: str, event: Event) -> None:
        numbers = event.numbers
        if not numbers:
            return
        if event.kind == "decode_batch":
            startup.gen_throughput = numbers.get("gen_throughput", startup.gen_throughput)
            if "accept_len" in numbers:
                startup.accept_len = numbers["accept_len"]
                startup.accept_rate = numbers.get("accept_rate")
        elif event.kind == "uvicorn_running":
            startup.port = int(numbers["port"])
        elif event.kind == "uvicorn_started":
            startup.pid = int(numbers["pid"])
        if label == MAIN:
            return
        state = startup.rank(label)
        if event.kind == "load_end" and "weights_gb" in numbers:
            if state.weights_gb is None:
                state.weights_gb = numbers["weights_gb"]
            else:
                state.draft_weights_gb = numbers["weights_gb"]
        if event.kind == "kv_alloc" and "kv_tokens" in numbers and "kv_tokens" in state.numbers:
            numbers = {**numbers, "kv_tokens": state.numbers["kv_tokens"]}  # the draft's pool repeats it
        if event.kind == "graph_end" and "graph_mem_gb" in numbers:
            # Target and draft graphs each report their own memory: together they are what graphs hold.
            total = state.numbers.get("graph_mem_gb", 0.0) + numbers["graph_mem_gb"]
            numbers = {**numbers, "graph_mem_gb": total}
        state.numbers.update(numbers)


def _stage_in_context(startup: Startup, event: Event) -> Stage | None:
    """Batch and access lines mean warm-up before `ready` and serving after it."""
    if event.kind == "decode_batch":
        return Stage.SERVING  # warm-up never decodes long enough to log a Decode line
    if event.kind == "retracted":  # only the request loop retracts: it ran, on that rank
        return _running_in_context(startup, events.RUNNING)
    if event.kind == "deprecated_endpoint":  # the warm-up's GET /get_model_info on older versions
        return Stage.WARMUP if Stage.LISTENING <= startup.stage < Stage.READY else None
    if event.kind == "watchdog" and Stage.STARTING < startup.stage < Stage.LISTENING:
        return None  # a hang while starting: in the stage the other lines name
    if event.kind in ("prefill_batch", "access", "watchdog"):
        if startup.stage >= Stage.READY:
            return Stage.SERVING
        if startup.stage >= Stage.LISTENING:
            return Stage.WARMUP
        # An excerpt that begins mid-stream: a Prefill line proves the server was serving, and so does
        # the watchdog (it watches the scheduler's request loop).
        return None if event.kind == "access" else Stage.SERVING
    return event.stage


def _is_sglang(event: Event) -> bool:
    """A line SGLang writes: a known message, a line in SGLang's frame (FACTS §1.1: its stamp, its rank
    prefix), an access line, a bar of loading or capture, or a traceback frame in SGLang's code (an
    excerpt can be a traceback alone)."""
    if event.kind not in _GENERIC_KINDS:
        return True
    log = event.log
    if log.framed or log.rank is not None:
        return True
    return event.kind == "text" and "/sglang/" in log.message and log.message.lstrip().startswith("File ")


def _running_in_context(startup: Startup, stage: Stage) -> Stage:
    """A frame of the request loop proves only that the scheduler's loop ran: warm-up between
    `listening` and `ready`; after startup lines that got no further than `scheduler_ready`, that stage
    (the loop runs in warm-up too, and nothing said the server listened); serving after `ready`, or in an
    excerpt that begins mid-run (no startup line before it)."""
    if stage is not events.RUNNING or startup.stage >= Stage.READY:
        return stage
    if startup.stage >= Stage.LISTENING:
        return Stage.WARMUP
    if startup.seen or startup.saw_args:
        return Stage.SCHEDULER_READY
    return stage


def _process_of(event: Event) -> str | None:
    """Which process wrote a problem's line: a rank prefix or a scheduler's own words say scheduler."""
    if event.log.rank is not None or event.kind in _SCHEDULER_KINDS:
        return "scheduler"
    if event.kind == "manager_exception":
        name = event.log.message.split(" ", 1)[0]
        return name.removesuffix("Manager").lower() or None  # DetokenizerManager → detokenizer
    return "main" if event.kind in _MAIN_KINDS else None


def _process_of_frame(frame: str) -> str | None:
    """The process a traceback frame belongs to, by the module that runs its loop."""
    for module, process in (
        ("/managers/scheduler.py", "scheduler"),
        ("/managers/tp_worker", "scheduler"),
        ("/model_executor/", "scheduler"),
        ("/managers/detokenizer_manager.py", "detokenizer"),
        ("/managers/tokenizer_manager.py", "main"),
        ("/entrypoints/", "main"),
        ("/server_args.py", "main"),
    ):
        if module in frame:
            return process
    return None


def _cut_note(frame: str) -> str:
    """What a traceback whose exception line is missing still says: where it was."""
    m = re.match(r'\s*File "(?P<path>[^"]*)", line (?P<line>\d+), in (?P<func>\S+)', frame)
    if m is None:
        return "its exception line is not in the log"
    return (
        f"its exception line is not in the log (last frame: {m['func']} in "
        f"{m['path'].rsplit('/', 1)[-1]}:{m['line']})"
    )


def _hint(summary: str) -> str | None:
    lower = summary.lower()
    if "capture cuda graph failed" in lower and "out of memory" in lower:
        return GRAPH_OOM_HINT
    return None


def _explain_import_error(problem: Problem, text: str) -> None:
    """An import warning names its cause lines later (torchcodec: each FFmpeg library it could not
    open): the summary keeps the causes beside its word that SGLang went on."""
    if problem.kind not in _IMPORT_KINDS:
        return
    m = _MISSING_LIB.search(text)
    if m is not None and m["lib"] not in problem.causes:
        problem.causes.append(m["lib"])
        problem.summary = _import_summary(problem)


def _import_summary(problem: Problem) -> str:
    head = problem.head.removesuffix(". Likely causes").removesuffix(" Likely causes")
    cause = f" ({', '.join(problem.causes)}: cannot open shared object file)" if problem.causes else ""
    if problem.kind == "torchcodec_missing":
        note = "not fatal: SGLang starts on without torchcodec (audio decoding is off)"
    else:
        module = head.removeprefix("Ignore import error when loading ").split(":", 1)[0]
        note = (
            f"not fatal unless {module} holds the architecture being served"
            if ".models." in module
            else f"not fatal: SGLang skips {module} and starts on"
        )
    return _clip(f"{head}{cause} — {note}")


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _SUMMARY_MAX else text[: _SUMMARY_MAX - 1] + "…"
