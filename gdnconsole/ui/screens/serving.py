"""The serving screen of one host (`v`): what the server's own endpoints say of its life since it became
ready. Per DP rank: running against SGLang's cap, queue, each pool's usage and the one that binds, decode
tokens/s, prefix-cache hits, accept length, aborted and retracted requests; TTFT, inter-token, end-to-end
and queue time as p50/p90/p99 over the last 1 and 5 minutes side by side; sparklines of running, queue and
tokens/s; the source read, and how old the figures are (stale, and why, when the last poll brought none).
The accept length sits beside the one `tune` measured for the profile, read from the tune store in a
thread. The dashboard keeps wanting the host's figures while this screen is over it; each poll repaints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich import box
from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from gdnconsole.config.hosts import Profile
from gdnconsole.host.journal import Journal
from gdnconsole.host.servingfeed import ServingFeed
from gdnconsole.host.servingwords import RANK_HEADERS
from gdnconsole.host.session import HostSession
from gdnconsole.host.topics import Topic
from gdnconsole.logs.textsafe import visible
from gdnconsole.tune.store import TuneStore
from gdnconsole.ui import screenlist
from gdnconsole.ui.keybar import KeyBar
from gdnconsole.ui.models import servingview as view
from gdnconsole.ui.tones import Tones
from gdnconsole.ui.widgets.sparkpanel import SparkRow, figures

QUANTILE_HEADERS = ("p50", "p90", "p99", "count")
NOT_COLLECTED = frozenset({"—"})
NO_REQUEST = frozenset({"—", "0"})  # a window's cells dim: no request in it
GAPS = (2, 1, 0)  # spaces after each column (beside the box's one between columns), roomiest that fits


def table_of(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    tones: Tones,
    width: int,
    *,
    left: frozenset[int] = frozenset(),
    names: bool = False,
    dim: frozenset[str] = NOT_COLLECTED,
) -> Table:
    """A table whose columns are never narrower than their header and cells (a figure is never cut),
    closer together when ``width`` columns are not enough for roomy ones. ``names``: the first column
    names the rows; ``dim``: the cells that say nothing was collected."""
    widths = [
        max([*(len(line) for line in header.split("\n")), *(len(row[i]) for row in rows)])
        for i, header in enumerate(headers)
    ]
    gap = next((g for g in GAPS if sum(widths) + (g + 1) * len(widths) - 1 <= width), GAPS[-1])
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, gap, 0, 0),
                  header_style=tones.label)  # fmt: skip
    for i, header in enumerate(headers):
        justify: JustifyMethod = "left" if i in left else "right"
        table.add_column(header, justify=justify, min_width=widths[i], no_wrap=True)
    for row in rows:
        styled = [Text(c, tones.muted if c in dim else tones.value) for c in row]
        if names:
            styled[0] = Text(row[0], tones.label)
        table.add_row(*styled)
    return table


class FiguresPolled(Message):
    """The session's figures were polled again; a newer one replaces a queued one."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FiguresPolled)


class ServingScreen(Screen[None]):
    DEFAULT_CSS = """
    ServingScreen { layout: vertical; }
    ServingScreen #serving-head { height: 1; background: $panel; padding: 0 1; }
    ServingScreen #serving-body { height: 1fr; padding: 0 1; }
    ServingScreen .serving-title { color: $text-muted; margin-top: 1; }
    ServingScreen #serving-status { height: auto; }
    ServingScreen #serving-sparks { height: auto; }
    ServingScreen #spark-running Sparkline > .sparkline--max-color { color: $primary; }
    ServingScreen #spark-running Sparkline > .sparkline--min-color { color: $primary 30%; }
    ServingScreen #spark-queue Sparkline > .sparkline--max-color { color: $warning; }
    ServingScreen #spark-queue Sparkline > .sparkline--min-color { color: $warning 30%; }
    ServingScreen #spark-tokens Sparkline > .sparkline--max-color { color: $success; }
    ServingScreen #spark-tokens Sparkline > .sparkline--min-color { color: $success 30%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("serving").own

    def __init__(self, session: HostSession, profile: Profile, journal: Journal) -> None:
        """``profile``: the one the dashboard launches on this host (tune's figures are looked up for
        it); ``journal``: the tune store lies beside it."""
        super().__init__()
        self.session = session
        self.profile = profile
        self.journal = journal
        self.tuned: view.Tuned | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="serving-head")
        with VerticalScroll(id="serving-body"):
            yield Static(id="serving-status")
            yield Static("per DP rank", classes="serving-title")
            yield Static(id="serving-ranks")
            yield Static("latency over the last 1 and 5 minutes", classes="serving-title")
            yield Static(id="serving-latency")
            yield Static("last points", classes="serving-title")
            with Vertical(id="serving-sparks"):
                yield SparkRow("running", id="spark-running")
                yield SparkRow("queue", id="spark-queue")
                yield SparkRow("tokens/s", id="spark-tokens")
            yield Static("speculative accept length", classes="serving-title")
            yield Static(id="serving-accept")
        yield KeyBar()

    def on_mount(self) -> None:
        self.session.subscribe(self._heard)
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.paint())
        self.paint()
        self.read_tune()

    def on_resize(self) -> None:
        self.paint()  # the tables' columns closer together, or apart again

    def on_unmount(self) -> None:
        self.session.unsubscribe(self._heard)

    def _heard(self, topic: Topic) -> None:
        """Called by the session on the loop's thread: post, never block."""
        if topic in ("figures", "processes"):
            self.post_message(FiguresPolled())

    def on_figures_polled(self, _message: FiguresPolled) -> None:
        self.paint()

    @work(thread=True, exclusive=True, group="serving-tune")
    def read_tune(self) -> None:
        store = TuneStore(self.session.host.name, self.journal.path.parent, warn=self.journal.warn)
        tuned = view.tuned_accept(store.sweeps(), self.profile, self.session.host.python)
        self.app.call_from_thread(self._tune_read, tuned)

    def _tune_read(self, tuned: view.Tuned | None) -> None:
        self.tuned = tuned
        self.paint()

    def action_close(self) -> None:
        self.dismiss()

    # -- painting --------------------------------------------------------------------------------------

    def paint(self) -> None:
        tones = Tones.of(self.app)
        feed = self.session.figures.feed
        head = Text.assemble(("serving", tones.value), (f" · {visible(self.session.host.name)}", tones.label))
        if self.session.server is None:
            head.append(" · no server running", tones.muted)
        self.query_one("#serving-head", Static).update(head)
        self.query_one("#serving-status", Static).update(self._status(feed, tones))
        self.query_one("#serving-ranks", Static).update(self._ranks(feed, tones))
        self.query_one("#serving-latency", Static).update(self._latency(feed, tones))
        self._sparks(feed, tones)
        self.query_one("#serving-accept", Static).update(self._accept(feed, tones))

    def _status(self, feed: ServingFeed | None, tones: Tones) -> Text:
        if feed is None:
            return Text("no figures yet: the console asks the server's /metrics, /v1/loads and "
                        "/server_info once it runs", tones.muted)  # fmt: skip
        out = Text(view.status_line(feed), tones.value if feed.figures is not None else tones.muted)
        stale = view.stale_text(feed)
        if stale is not None and feed.figures is not None:
            out.append("\n")
            out.append(stale, tones.warn)
        slow = self.session.figures.slow_words()
        if slow is not None:
            out.append("\n")
            out.append(slow, tones.muted)
        return out

    def _width(self) -> int:
        """The columns the tables have (the screen's, before its first layout)."""
        body = self.query_one("#serving-body", VerticalScroll)
        return body.scrollable_content_region.width or self.app.size.width - 4

    def _ranks(self, feed: ServingFeed | None, tones: Tones) -> Table | Text:
        if feed is None or feed.figures is None:
            return Text("—", tones.muted)
        rows = view.rank_rows(feed.figures)
        return table_of(RANK_HEADERS, rows, tones, self._width(), left=frozenset({0, 5}))

    def _latency(self, feed: ServingFeed | None, tones: Tones) -> Table | Text:
        rows = view.latency_rows(feed) if feed is not None else None
        if feed is None or feed.figures is None:
            return Text("—", tones.muted)
        if rows is None:
            return Text(view.no_latency_words(feed), tones.muted)
        headers = [""]
        for _seconds, words in view.WINDOWS:
            headers += [
                f"{words}\n{name}" if i == 0 else f"\n{name}" for i, name in enumerate(QUANTILE_HEADERS)
            ]
        cells = tuple((row.name, *row.cells) for row in rows)
        return table_of(headers, cells, tones, self._width(), left=frozenset({0}), names=True, dim=NO_REQUEST)

    def _sparks(self, feed: ServingFeed | None, tones: Tones) -> None:
        series = (
            ("#spark-running", feed.running if feed else (), "req", 0),
            ("#spark-queue", feed.queued if feed else (), "req", 0),
            ("#spark-tokens", feed.tokens_s if feed else (), "tok/s", 0),
        )
        for widget_id, history, unit, digits in series:
            values = view.known(history)
            numbers = figures(values, unit, digits, tones) if values else Text("— not collected", tones.muted)
            self.query_one(widget_id, SparkRow).show(values, numbers)

    def _accept(self, feed: ServingFeed | None, tones: Tones) -> Text:
        live, tuned = view.accept_words(feed.figures if feed is not None else None, self.tuned)
        return Text.assemble((live, tones.value), ("   ·   ", tones.muted), (tuned, tones.label))
