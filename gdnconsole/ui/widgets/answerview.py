"""One prompt's answer as it streams in: a status line, the reasoning in its own dim area above the answer,
the answer, and the figures (TTFT, decode rate, total time, tokens, speculative accept length).

The view is driven from outside: ``begin``, ``delta`` (cheap: it only collects), ``paint`` (on the
screen's timer while streaming), then ``finish``, ``fail`` or ``cancel``. Times come from the caller's
clock, so a hand-driven view (snapshots) shows fixed figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.measure import Measurement
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from gdnconsole.chat.model import ChatRequest, ChatResult
from gdnconsole.logs.textsafe import visible
from gdnconsole.ui.tones import Repaints, Tones, model_text, ms, rate, seconds, styled

ACCEPT_SOURCES = {"request": "this request", "server": "server avg"}


@dataclass
class Live:
    """What has arrived so far of the answer being streamed."""

    request: ChatRequest
    started: float  # the caller's clock, seconds
    first: float | None = None  # when the first content or reasoning text came
    chunks: int = 0
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)

    def partial(self, now: float, error: str) -> ChatResult:
        """What a cancelled request got, as a result (for the history file)."""
        return ChatResult(
            ok=False,
            ttft_ms=None if self.first is None else (self.first - self.started) * 1000.0,
            total_ms=(now - self.started) * 1000.0,
            text="".join(self.text),
            reasoning="".join(self.reasoning),
            error=error,
            chunks=self.chunks,
        )


def accept_text(result: ChatResult, tones: Tones) -> Text:
    if result.accept_length is None:
        return Text("—", tones.muted)
    out = styled(f"{result.accept_length:.2f}", tones.value)
    source = ACCEPT_SOURCES.get(result.accept_source or "", result.accept_source or "")
    if source:
        out.append(f" {source}", tones.muted)
    return out


def tokens_text(prompt: int | None, completion: int | None, tones: Tones) -> Text:
    out = Text()
    out.append("—" if prompt is None else f"{prompt:,}", tones.value)
    out.append(" in · ", tones.muted)
    out.append("—" if completion is None else f"{completion:,}", tones.value)
    out.append(" out", tones.muted)
    return out


def figures_grid(cells: list[tuple[str, Text]], tones: Tones, columns: int = 3) -> Table:
    """Label / value pairs in aligned columns, ``columns`` pairs a row."""
    grid = Table.grid(padding=(0, 1))
    for _ in range(columns):
        grid.add_column(style=tones.label, no_wrap=True)
        grid.add_column(justify="right", no_wrap=True)
        grid.add_column(width=1)
    for start in range(0, len(cells), columns):
        row: list[Text] = []
        for label, value in cells[start : start + columns]:
            row += [Text(label), value, Text("")]
        grid.add_row(*row)
    return grid


Cells = list[tuple[str, Text]]


class Figures(Static):
    """Label / value pairs in aligned columns: three pairs a row, fewer where the width asks for it."""

    DEFAULT_CSS = "Figures { height: auto; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cells: Cells = []
        self.tones: Tones | None = None

    def show(self, cells: Cells, tones: Tones) -> None:
        self.cells, self.tones = cells, tones
        self._fit()

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        if self.tones is None:
            return
        console, width = self.app.console, self.content_region.width
        for columns in (3, 2, 1):
            grid = figures_grid(self.cells, self.tones, columns)
            if width <= 0 or Measurement.get(console, console.options, grid).maximum <= width:
                break
        self.update(grid)


def result_figures(result: ChatResult, tones: Tones) -> Cells:
    def value(text: str) -> Text:
        return Text(text, tones.value if text != "—" else tones.muted)

    return [
        ("TTFT", value(ms(result.ttft_ms))),
        ("decode", value(rate(result.tokens_per_s))),
        ("accept", accept_text(result, tones)),
        ("total", value(seconds(result.total_ms))),
        ("tokens", tokens_text(result.prompt_tokens, result.completion_tokens, tones)),
        ("finish", value(result.finish_reason or "—")),
    ]


def live_figures(live: Live, now: float, tones: Tones) -> Cells:
    ttft = None if live.first is None else (live.first - live.started) * 1000.0
    decode = None
    if live.first is not None and live.chunks >= 2 and now > live.first:
        decode = (live.chunks - 1) / (now - live.first)  # chunks: one token each without speculation
    pending = Text("…", tones.muted)
    return [
        ("TTFT", Text(ms(ttft), tones.value) if ttft is not None else pending),
        ("decode", Text(f"≈{rate(decode)}", tones.value) if decode is not None else pending),
        ("accept", pending),
        ("elapsed", Text(seconds((now - live.started) * 1000.0), tones.value)),
        ("chunks", Text(f"{live.chunks:,}", tones.value)),
        ("finish", pending),
    ]


class AnswerView(Repaints, Vertical):
    DEFAULT_CSS = """
    AnswerView { height: 1fr; }
    AnswerView #answer-status { height: auto; max-height: 4; }
    AnswerView #answer-reasoning-box {
        height: auto; max-height: 40%; display: none;
        border-left: outer $secondary; padding: 0 0 0 1; margin-top: 1;
    }
    AnswerView.-reasoning #answer-reasoning-box { display: block; }
    AnswerView #answer-reasoning { color: $text-muted; text-style: italic; }
    AnswerView #answer-text-box { height: 1fr; margin-top: 1; }
    AnswerView #answer-figures { height: auto; border-top: solid $panel; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.live: Live | None = None
        self.result: ChatResult | None = None
        self._dirty = False

    def compose(self) -> ComposeResult:
        yield Static(id="answer-status")
        with VerticalScroll(id="answer-reasoning-box"):
            yield Static(id="answer-reasoning")
        with VerticalScroll(id="answer-text-box"):
            yield Static(id="answer-text")
        yield Figures(id="answer-figures")

    def idle(self, hint: str) -> None:
        self._again = lambda: self.idle(hint)
        self.query_one("#answer-status", Static).update(Text(hint, self.tones.muted))

    # -- streaming -------------------------------------------------------------------------------------

    def begin(self, request: ChatRequest, now: float) -> None:
        self.live, self.result, self._dirty = Live(request, now), None, True
        self._texts("", "")
        self.paint(now)

    def delta(self, name: str, text: str, now: float) -> None:
        live = self.live
        if live is None:
            return
        if live.first is None:
            live.first = now
        live.chunks += 1
        (live.reasoning if name == "reasoning_content" else live.text).append(text)
        self._dirty = True

    def paint(self, now: float) -> None:
        """Show what has arrived (the texts only when something new came)."""
        live = self.live
        if live is None or self.result is not None:
            return
        self._again = lambda: self.paint(now)
        tones = self.tones
        if live.first is None:
            words = "waiting for the first token" if live.request.stream else "waiting for the whole answer"
            status = Text(f"◐ {words} · {seconds((now - live.started) * 1000.0)}", tones.warn)
        else:
            status = styled("◐ streaming", tones.primary + Style(bold=True))
            status.append(
                f" · {live.chunks:,} chunks · {seconds((now - live.started) * 1000.0)}", tones.muted
            )
        self.query_one("#answer-status", Static).update(status)
        if self._dirty:
            self._dirty = False
            self._texts("".join(live.reasoning), "".join(live.text))
        self.query_one(Figures).show(live_figures(live, now, tones), tones)

    def _texts(self, reasoning: str, answer: str) -> None:
        box = self.query_one("#answer-text-box", VerticalScroll)
        follow = box.is_vertical_scroll_end or box.max_scroll_y == 0
        self.set_class(bool(reasoning), "-reasoning")
        self.query_one("#answer-reasoning", Static).update(Text(model_text(reasoning)))
        self.query_one("#answer-text", Static).update(Text(model_text(answer)))
        reasoning_box = self.query_one("#answer-reasoning-box", VerticalScroll)
        if reasoning and not answer:
            reasoning_box.scroll_end(animate=False, immediate=False)
        if follow:
            box.scroll_end(animate=False, immediate=False)

    # -- outcomes --------------------------------------------------------------------------------------

    def finish(self, result: ChatResult) -> None:
        self.result = result
        self._texts(result.reasoning, result.text)
        self._show_result(result)

    def _show_result(self, result: ChatResult) -> None:
        self._again = lambda: self._show_result(result)
        tones = self.tones
        if result.ok:
            status = styled("✔ answered", tones.good)
            how = "streamed" if self.live is None or self.live.request.stream else "not streamed"
            status.append(f" in {seconds(result.total_ms)} · HTTP {result.status} · {how}", tones.muted)
        else:
            status = styled("✖ ", tones.bad)
            status.append(visible(result.error or "the request failed"), tones.bad)  # the server's words
        self.query_one("#answer-status", Static).update(status)
        self.query_one(Figures).show(result_figures(result, tones), tones)

    def fail(self, message: str) -> None:
        """The request could not be sent at all (no endpoint, no link), or the form is wrong."""
        self.live, self.result = None, None
        self._again = lambda: self.fail(message)
        self.query_one("#answer-status", Static).update(Text(f"✖ {visible(message)}", self.tones.bad))

    def cancel(self, now: float) -> ChatResult | None:
        """The user stopped the request: keep what came, say so; the partial result for the history."""
        live = self.live
        if live is None or self.result is not None:
            return None
        partial = live.partial(now, "cancelled by the user")
        self.result = partial
        self._texts(partial.reasoning, partial.text)
        self._show_cancelled(live, partial, now)
        return partial

    def _show_cancelled(self, live: Live, partial: ChatResult, now: float) -> None:
        self._again = lambda: self._show_cancelled(live, partial, now)
        tones = self.tones
        status = styled("■ cancelled", tones.warn)
        status.append(f" after {seconds(partial.total_ms)} · {live.chunks:,} chunks received", tones.muted)
        self.query_one("#answer-status", Static).update(status)
        self.query_one(Figures).show(live_figures(live, now, tones), tones)
