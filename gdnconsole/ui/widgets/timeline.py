"""The stage timeline: where the last startup in a log got to, how long each stage took, what failed.

``timeline_data`` takes a snapshot of the tracker's startups (in the worker that fed it); the widget
only renders snapshots it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from gdnconsole.logs.textsafe import visible
from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.sglang.summary import kernels
from gdnconsole.sglang.tracker import Problem, Startup
from gdnconsole.timefmt import span
from gdnconsole.ui.theme import LogPalette


@dataclass(frozen=True, slots=True)
class Fatal:
    line: int  # 0-based
    rank: str | None
    stage: Stage
    summary: str
    process: str | None = None  # who reported it without a rank: "scheduler", "detokenizer", "main"
    ranks: int = 0  # ranks that all reported it at once (a collective hang), else 0
    hint: str | None = None  # the known fix (a CUDA-graph OOM's)


@dataclass(frozen=True, slots=True)
class TimelineData:
    index: int  # 0-based startup number
    count: int
    stage: Stage
    durations: dict[str, float]
    ranks: tuple[tuple[str, Stage], ...]
    fatal: Fatal | None
    warnings: int
    weights_gb: float | None
    kv_tokens: float | None
    avail_gb: float | None
    gen_throughput: float | None
    accept_len: float | None
    seen: frozenset[Stage] = frozenset(Stage)  # stages a line proved; the others were passed unseen
    pid: int | None = None  # the server process that wrote the startup (its uvicorn line names it)
    later: str | None = None  # what another writer's later startup in the same log did (not this one)
    kernels: tuple[tuple[str, str], ...] = ()  # the kernels and backends SGLang chose, in its order


@dataclass(frozen=True, slots=True)
class Ending:
    """What the host knows and the log cannot say: the startup's server ended ("ended"), or another
    process than the console's server wrote it ("foreign")."""

    kind: str  # "ended" | "foreign"
    text: str


def timeline_data(startups: list[Startup], own: int | None = None) -> TimelineData | None:
    """A snapshot of the startup of the server ``own`` (the one whose uvicorn line names that pid), else
    of the last (call with the tracker's lock held): another process writing into the same log must not
    take the timeline over with its startup and figures; ``later`` says what it did."""
    if not startups:
        return None
    s = next((x for x in reversed(startups) if own is not None and x.pid == own), startups[-1])
    ranks = s.scheduler_ranks()
    first = ranks[sorted(ranks)[0]] if ranks else None
    fatal = s.fatal
    return TimelineData(
        index=s.index,
        count=len(startups),
        stage=s.stage,
        durations=s.durations(include_current=True),
        ranks=tuple((label, r.stage) for label, r in sorted(ranks.items())),
        fatal=_fatal_of(fatal) if fatal else None,
        warnings=len(s.warnings),
        weights_gb=first.weights_gb if first else None,
        kv_tokens=first.numbers.get("kv_tokens") if first else None,
        avail_gb=first.numbers.get("avail_gb") if first else None,
        gen_throughput=s.gen_throughput,
        accept_len=s.accept_len,
        seen=frozenset(s.seen),
        pid=s.pid,
        later=_later(startups[-1]) if s is not startups[-1] else None,
        kernels=tuple(kernels(s).items()),
    )


def _fatal_of(p: Problem) -> Fatal:
    ranks = len(p.ranks) if p.collective else 0
    return Fatal(p.line - 1, p.rank, p.stage, p.summary, process=p.process, ranks=ranks, hint=p.hint)


# The timeline's short names for the kernel choices (summary.BACKEND_NAMES says them in full).
KERNEL_LABELS = {
    "attention": "attention",
    "multimodal_attention": "mm attention",
    "linear_attention": "linear attn",
    "hybrid_linear_attention": "GDN backend",
    "gdn_kernels": "GDN kernels",
    "cute_dsl_gdn_decode": "CuTe GDN",
}


def _later(last: Startup) -> str:
    """The log's last startup, when another process wrote it after the one shown."""
    who = f"pid {last.pid}" if last.pid is not None else "another process"
    did = f"failed in {last.fatal.stage.label}" if last.fatal else f"reached {last.stage.label}"
    return f"startup {last.index + 1}, by {who}, {did}: another writer to this log, not this server"


Verdict = tuple[bool | None, str]  # VERIFIED (True), failed or lost (False), pending (None); the detail


def render_timeline(
    data: TimelineData | None,
    palette: LogPalette,
    *,
    status: str = "",
    verdict: Verdict | None = None,
    read: bool = True,
    ending: Ending | None = None,
) -> Text:
    """The timeline as text (built from strings, never markup: summaries come from the log).

    ``verdict``: what the live server's answers proved, shown as the stage after ready (a log alone
    cannot say it, so the log view of a file never shows it); ``read``: the log has been read (no data
    then means no startup in it, not one still to find); ``ending``: what the host says of the startup's
    server (it ended, or it is not the console's), which outranks what the log last said."""
    out = Text(no_wrap=False, overflow="fold")
    if data is None:
        out.append(status or ("no startup in this log yet" if read else "reading the log…"), palette.dim)
        return out
    out.append(f"startup {data.index + 1}/{data.count}", Style(bold=True))
    if status:
        out.append(f"  {status}", palette.dim)
    out.append("\n")
    if data.later is not None:  # whole, wrapped: the reason the figures below are not the log's last
        out.append(f"{data.later}\n", palette.severities[Severity.WARNING])
    if ending is not None and ending.kind == "foreign":
        out.append(f"{visible(ending.text)}\n", palette.severities[Severity.WARNING])
    ended = ending is not None and ending.kind == "ended"
    if ended and data.fatal is None:
        assert ending is not None
        out.append(f"■ {visible(ending.text)}\n", palette.dim + Style(bold=True))
    else:
        _state_line(out, data, palette)
    out.append("\n")
    for stage in Stage:
        _stage_line(out, data, stage, palette, live=not ended)
    if verdict is not None and not ended:
        _verdict_line(out, verdict, palette)
    if len(data.ranks) > 1:
        out.append("\nranks\n", Style(bold=True))
        for label, stage in data.ranks:
            out.append(f" {label}", palette.rank_style(label))
            if ended:
                out.append(f" ended in {stage.label}\n", palette.dim)
            else:
                out.append(f" {stage.label}\n", palette.stages[stage])
    _numbers(out, data)
    _kernels(out, data)
    if data.fatal is not None:
        _fatal(out, data.fatal, palette)
    return out


def _state_line(out: Text, data: TimelineData, palette: LogPalette) -> None:
    if data.fatal is not None:
        out.append(f"✖ failed in {data.fatal.stage.label}\n", palette.severities[Severity.FATAL])
    elif data.stage >= Stage.READY:
        out.append(f"● {data.stage.label}\n", palette.stages[Stage.READY] + Style(bold=True))
    else:
        out.append(f"◐ {data.stage.label}…\n", palette.stages[data.stage])
    if data.warnings:
        out.append(
            f"{data.warnings} warning{'s' if data.warnings != 1 else ''}\n",
            palette.severities[Severity.WARNING],
        )


def _stage_line(
    out: Text, data: TimelineData, stage: Stage, palette: LogPalette, *, live: bool = True
) -> None:
    """``live``: the server still runs (its current stage is marked as the one it is in)."""
    seconds = data.durations.get(stage.label)
    current = stage == data.stage and live
    reached = stage <= data.stage
    failed = data.fatal is not None and stage == data.fatal.stage
    # An excerpt that begins mid-run proves only some stages: those before it were passed, unseen.
    unseen = reached and not current and not failed and stage not in data.seen
    if failed:
        mark = "✖"
    elif current:
        mark = "▶"
    else:
        mark = "·" if unseen else ("✓" if reached else " ")
    style = palette.stages[stage] if reached and not unseen else palette.dim
    if current:
        style = style + Style(bold=True, reverse=True)
    elif data.fatal is not None and stage == data.fatal.stage:
        style = palette.severities[Severity.FATAL]
    time = "" if seconds is None else span(seconds)
    out.append(f"{mark} {stage.label:<16}{time:>7}", style)
    out.append("\n")


def _verdict_line(out: Text, verdict: Verdict, palette: LogPalette) -> None:
    ok, detail = verdict
    if ok is True:
        out.append(f"✓ {'verified':<16}", palette.stages[Stage.READY] + Style(bold=True))
        out.append(f"{visible(detail.removeprefix('answered in '))}\n", palette.dim)
    elif ok is False:
        out.append(f"✖ {'verify failed':<16}\n", palette.severities[Severity.FATAL])
        out.append(f"  {visible(detail[:120])}\n", palette.severities[Severity.ERROR])  # the server's
    else:
        out.append(f"  {'verified':<16}", palette.dim)
        out.append(f"\n  {visible(detail)}\n", palette.dim)


def _numbers(out: Text, data: TimelineData) -> None:
    rows: list[tuple[str, str]] = []
    if data.weights_gb is not None:
        rows.append(("weights", f"{data.weights_gb:.2f} GB"))
    if data.kv_tokens is not None:
        rows.append(("KV", f"{int(data.kv_tokens):,} tok"))
    if data.avail_gb is not None:
        rows.append(("avail", f"{data.avail_gb:.2f} GB"))
    if data.gen_throughput is not None:
        rows.append(("gen", f"{data.gen_throughput:.1f} tok/s"))
    if data.accept_len is not None:
        rows.append(("accept len", f"{data.accept_len:.2f}"))
    if not rows:
        return
    out.append("\nper rank\n" if data.ranks else "\n", Style(bold=True))
    for name, value in rows:
        out.append(f" {name:<11}{value}\n")


def _kernels(out: Text, data: TimelineData) -> None:
    if not data.kernels:
        return
    out.append("\nkernels\n", Style(bold=True))
    for name, choice in data.kernels:
        out.append(f" {KERNEL_LABELS.get(name, name):<12}")
        out.append(f"{visible(choice)}\n")  # the log's words


def _fatal(out: Text, fatal: Fatal, palette: LogPalette) -> None:
    style = palette.severities[Severity.FATAL]
    out.append(f"\nfatal, line {fatal.line + 1:,}", style)
    out.append("  (x: go)\n", palette.dim)
    if fatal.rank:
        out.append(f"{fatal.rank} ", palette.rank_style(fatal.rank))
    elif fatal.ranks:
        out.append(f"all {fatal.ranks} ranks ", palette.severities[Severity.ERROR])
    elif fatal.process:
        out.append(f"{fatal.process} ", palette.dim)
    out.append(f"in {fatal.stage.label}\n", palette.severities[Severity.ERROR])
    out.append(visible(fatal.summary[:300]), palette.severities[Severity.ERROR])  # the log's words
    if fatal.hint:
        out.append(f"\n{fatal.hint}", palette.severities[Severity.WARNING])


class Timeline(Static):
    """Renders the last snapshot it was given."""

    DEFAULT_CSS = """
    Timeline {
        width: 28%;
        min-width: 34;
        max-width: 64;
        height: 1fr;
        padding: 0 1;
        background: $surface;
        border-left: vkey $panel;
        overflow-y: auto;
    }
    """

    def __init__(self, palette: LogPalette, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.palette = palette
        self.data: TimelineData | None = None
        self.status = ""
        self.verdict: Verdict | None = None
        self.ending: Ending | None = None
        self.judge: Callable[[TimelineData], Ending | None] | None = None
        self.read = False  # given data at least once: the log has been read

    def on_mount(self) -> None:
        self._paint()

    def show(self, data: TimelineData | None) -> None:
        self.data = data
        self.read = True
        if self.judge is not None and data is not None:
            self.ending = self.judge(data)
        self._paint()

    def set_status(self, status: str) -> None:
        if status != self.status:
            self.status = status
            self._paint()

    def set_verdict(self, verdict: Verdict | None) -> None:
        if verdict != self.verdict:
            self.verdict = verdict
            self._paint()

    def judge_by(self, judge: Callable[[TimelineData], Ending | None]) -> None:
        """What the host says of a startup's server (the dashboard's session): asked at each snapshot
        and at each ``rejudge``, so that a startup and what is said of it always agree."""
        self.judge = judge
        self.rejudge()

    def rejudge(self) -> None:
        """The host's state changed: ask again."""
        ending = self.judge(self.data) if self.judge is not None and self.data is not None else None
        if ending != self.ending:
            self.ending = ending
            self._paint()

    def _paint(self) -> None:
        self.update(
            render_timeline(
                self.data,
                self.palette,
                status=self.status,
                verdict=self.verdict,
                read=self.read,
                ending=self.ending,
            )
        )
