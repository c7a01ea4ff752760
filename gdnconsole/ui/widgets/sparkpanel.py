"""Decode throughput and speculative accept length over time, from the log's ``Decode batch`` lines (the
session's ``decode_points``): a sparkline each, with the latest value and the min / max as figures beside
it, so that the effect of a flag change on speculation shows at a glance."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, Sparkline, Static

from gdnconsole.sglang.decodepoints import DecodePoint
from gdnconsole.timefmt import duration
from gdnconsole.ui.tones import Tones, styled

FIGURES_WIDTH = 36


def figures(values: Sequence[float], unit: str, digits: int, tones: Tones) -> Text:
    """``  41.2 tok/s   min 12.0  max 44.9``: the latest value, then the range, in fixed columns."""
    last, low, high = values[-1], min(values), max(values)
    out = styled(f"{last:>6.{digits}f}", tones.value)
    out.append(f" {unit:<6}", tones.muted)
    out.append("min ", tones.label)
    out.append(f"{low:>6.{digits}f}", tones.value)
    out.append("  max ", tones.label)
    out.append(f"{high:>6.{digits}f}", tones.value)
    return out


def span_text(points: Sequence[DecodePoint]) -> str:
    times = [p.time for p in points if p.time is not None]
    over = f" over {duration(times[-1] - times[0])}" if len(times) > 1 else ""
    return f"decode · last {len(points)} log points{over}"


class SparkRow(Horizontal):
    DEFAULT_CSS = f"""
    SparkRow {{ height: 1; }}
    SparkRow .spark-label {{ width: 12; color: $text-muted; }}
    SparkRow Sparkline {{ width: 1fr; margin-right: 1; }}
    SparkRow .spark-figures {{ width: {FIGURES_WIDTH}; }}
    """

    def __init__(self, label: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label

    def compose(self) -> ComposeResult:
        yield Label(self.label, classes="spark-label")
        yield Sparkline([], summary_function=fmean)
        yield Static(classes="spark-figures")

    def show(self, values: Sequence[float], numbers: Text) -> None:
        # One point has no trend, and Textual draws it as a full bar: the figures say it alone.
        self.query_one(Sparkline).data = list(values) if len(values) > 1 else []
        self.query_one(".spark-figures", Static).update(numbers)


class SparkPanel(Vertical):
    DEFAULT_CSS = """
    SparkPanel { height: auto; border-top: solid $panel; border-title-color: $text-muted; padding: 0 1; }
    SparkPanel #spark-rate Sparkline > .sparkline--max-color { color: $success; }
    SparkPanel #spark-rate Sparkline > .sparkline--min-color { color: $success 30%; }
    SparkPanel #spark-accept Sparkline > .sparkline--max-color { color: $accent; }
    SparkPanel #spark-accept Sparkline > .sparkline--min-color { color: $accent 30%; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.points: list[DecodePoint] = []

    def compose(self) -> ComposeResult:
        yield SparkRow("throughput", id="spark-rate")
        yield SparkRow("accept len", id="spark-accept")

    def show(self, points: Sequence[DecodePoint]) -> None:
        tones = Tones.of(self.app)
        self.points = list(points)
        self.border_title = span_text(points) if points else "decode"
        rates = [p.gen_throughput for p in points]
        accepts = [p.accept_len for p in points if p.accept_len is not None]
        rate_row = self.query_one("#spark-rate", SparkRow)
        accept_row = self.query_one("#spark-accept", SparkRow)
        if rates:
            rate_row.show(rates, figures(rates, "tok/s", 1, tones))
        else:
            rate_row.show([], Text("no Decode batch lines in the log yet", tones.muted))
        if accepts:
            accept_row.show(accepts, figures(accepts, "", 2, tones))
        else:
            words = "no speculative decoding in the log" if rates else "—"
            accept_row.show([], Text(words, tones.muted))
