"""A burst's results: progress while it runs (k of N done), then a table of TTFT, per-request decode rate
and total time at p50 / p90 / p99 where the sample supports them and at the slowest answer, the burst's
throughput and sample size, and each distinct error with its count."""

from __future__ import annotations

import math
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from gdnconsole.chat.burst import PERCENTILES, BurstResult
from gdnconsole.chat.model import ChatResult
from gdnconsole.logs.textsafe import visible
from gdnconsole.ui.tones import Repaints, Tones, ms, rate, seconds, styled
from gdnconsole.ui.widgets.answerview import Cells, Figures, accept_text

COLUMNS = ("", "TTFT", "tok/s per request", "total time")


def supported(pct: int, n: int) -> bool:
    """Whether ``n`` answers can tell the ``pct``th percentile from their maximum (nearest rank): p99
    of 8 requests is the slowest of them, and calling it p99 claims a tail the sample does not have."""
    return math.ceil(pct / 100.0 * n) < n


def percentile_rows(burst: BurstResult, tones: Tones) -> list[tuple[Text, ...]]:
    """A row per percentile the sample supports, then the maximum (the slowest answer)."""

    def cell(value: float | None, show: Callable[[float | None], str]) -> Text:
        return Text(show(value), tones.value if value is not None else tones.muted, justify="right")

    n = len(burst.ok)
    shown = [(f"p{p}", p) for p in PERCENTILES if supported(p, n)]
    return [
        (
            Text(label, tones.label),
            cell(burst.ttft(p), ms),
            cell(burst.rate(p), rate),
            cell(burst.total(p), seconds),
        )
        for label, p in [*shown, ("max", 100)]
    ]


def sample_text(burst: BurstResult) -> str:
    """How many answers the figures come from, and the percentiles they are too few for."""
    n = len(burst.ok)
    missing = [f"p{p} needs {math.ceil(100 / (100 - p))}" for p in PERCENTILES if not supported(p, n)]
    return f"n = {n}" + (f" ({', '.join(missing)})" if missing else "")


def outcome_text(burst: BurstResult, tones: Tones) -> Text:
    failed = burst.requests - len(burst.ok)
    if not failed:
        return Text.assemble(("✔ ", tones.good), (f"{burst.requests} requests, all answered", tones.value))
    out = styled("⚠ " if burst.ok else "✖ ", tones.bad)
    out.append(f"{burst.requests} requests: {len(burst.ok)} answered, ", tones.value)
    out.append(f"{failed} failed", tones.bad)
    return out


def summary_figures(burst: BurstResult, server_accept: float | None, tones: Tones) -> Cells:
    """The burst as a whole: its throughput over the wall time, and the server's accept length after it."""
    accept = ChatResult(accept_length=server_accept, accept_source="server")
    return [
        ("throughput", Text(rate(burst.total_tokens_per_s), tones.value)),
        ("wall", Text(seconds(burst.wall_ms), tones.value)),
        ("accept", accept_text(accept, tones)),
        ("tokens", Text(f"{burst.completion_tokens:,} out", tones.value)),
        ("answers", Text(sample_text(burst), tones.value)),
    ]


def errors_text(burst: BurstResult, tones: Tones) -> Text:
    errors = burst.errors.most_common()
    if not errors:
        return Text("")
    out = styled("errors", tones.bad)
    width = max(len(str(count)) for _message, count in errors)
    for message, count in errors:
        out.append(f"\n{count:>{width}} × ", tones.value)
        out.append(visible(message), tones.bad)  # the server's or the link's words
    return out


class BurstView(Repaints, VerticalScroll):
    DEFAULT_CSS = """
    BurstView { height: 1fr; display: none; }
    BurstView #burst-status { height: auto; }
    BurstView #burst-summary { height: auto; margin-bottom: 1; }
    BurstView DataTable { height: auto; max-height: 6; width: auto; background: $surface; }
    BurstView #burst-errors { height: auto; margin-top: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.burst: BurstResult | None = None
        self.count = 0
        self.done = 0
        self.failed = 0
        self.started = 0.0

    def compose(self) -> ComposeResult:
        yield Static(id="burst-status")
        yield Figures(id="burst-summary")
        yield DataTable(cursor_type="none", zebra_stripes=True, show_cursor=False, id="burst-table")
        yield Static(id="burst-errors")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for label in COLUMNS:
            table.add_column(Text(label, justify="right") if label else Text(""), key=label or "pct")

    def _status(self, text: Text) -> None:
        self.query_one("#burst-status", Static).update(text)

    def begin(self, count: int, now: float) -> None:
        self.burst, self.count, self.done, self.failed, self.started = None, count, 0, 0, now
        self.query_one(DataTable).clear()
        self.query_one(Figures).show([], self.tones)
        self.query_one("#burst-errors", Static).update("")
        self.paint(now)

    def one_done(self, ok: bool) -> None:
        self.done += 1
        self.failed += 0 if ok else 1

    def paint(self, now: float) -> None:
        """The progress line while the burst runs."""
        if self.burst is not None or not self.count:
            return
        self._again = lambda: self.paint(now)
        tones = self.tones
        out = styled(f"◐ {self.done} of {self.count} done", tones.primary)
        if self.failed:
            out.append(f" · {self.failed} failed", tones.bad)
        out.append(f" · {seconds((now - self.started) * 1000.0)}", tones.muted)
        self._status(out)

    def show(self, burst: BurstResult, server_accept: float | None = None) -> None:
        self._again = lambda: self.show(burst, server_accept)
        tones = self.tones
        self.burst = burst
        self._status(outcome_text(burst, tones))
        self.query_one(Figures).show(summary_figures(burst, server_accept, tones), tones)
        table = self.query_one(DataTable)
        table.clear()
        for row in percentile_rows(burst, tones):
            table.add_row(*row)
        self.query_one("#burst-errors", Static).update(errors_text(burst, tones))

    def fail(self, message: str) -> None:
        self.count = 0
        self._again = lambda: self.fail(message)
        self._status(Text(f"✖ {visible(message)}", self.tones.bad))

    def cancel(self, now: float) -> None:
        done, count = self.done, self.count
        self._again = lambda: self._show_cancelled(now, done, count)
        self._show_cancelled(now, done, count)
        self.count = 0

    def _show_cancelled(self, now: float, done: int, count: int) -> None:
        tones = self.tones
        out = styled("■ burst cancelled", tones.warn)
        out.append(f" after {seconds((now - self.started) * 1000.0)} · {done} of {count} done", tones.muted)
        self._status(out)
