"""The log pane: a log beside its stage timeline, with a status line; reused by the log view screen and by
each host tab of the dashboard.

It shows a document (``logs/document.py``) from one of two sources. Given a file (`log view`), the pane
owns the document and runs its work in thread workers: opening (first screenful, then the index, then
the tracker's scan) and, while following, a poll of the file. Given a document that someone else keeps
up to date (a HostSession's mirror, parsed and indexed as the session reads the host's log), the pane
polls nothing: its owner calls ``catch_up`` when the log grew or restarted. Either way the lines the
view asks for, filters and searches are read in workers, which hand results back with
``call_from_thread``; the widgets only render what they are given.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import ClassVar, NamedTuple

from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import Worker, get_current_worker

from gdnconsole.logs.document import FilterSpec, Fold, LineInfo, LogDocument, Skipped, restart_news
from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.ui import screenlist
from gdnconsole.ui.theme import LogPalette
from gdnconsole.ui.widgets.logview import LogView
from gdnconsole.ui.widgets.timeline import Timeline, TimelineData, timeline_data

POLL_S = 0.25  # how often `log view --follow` looks at its file
PROGRESS_STEP = 64 << 20  # report indexing progress every this many bytes


class Meaning(NamedTuple):
    """What the tracker knows, for the widgets: folds and the timeline, as of ``version``."""

    folds: list[Fold]
    timeline: TimelineData | None
    version: int


class Update(NamedTuple):
    """The document as a worker found it: its generation, lines, the filter's new matches (through line
    ``upto``) and meaning; ``forget``: lines shown before may have been read before their meaning;
    ``lines``: the new lines at the tail, read ahead so that they show in the same frame."""

    generation: int
    total: int
    matches: array[int] | None
    upto: int
    meaning: Meaning
    forget: bool
    lines: list[LineInfo]


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """


class LogPane(Vertical):
    """One log file: the log view, the stage timeline and a status line. The keys that act on the log
    live here, so they work wherever the pane is focused; help and quit belong to the screen around it."""

    DEFAULT_CSS = """
    LogPane { height: 1fr; }
    LogPane #body { height: 1fr; }
    LogPane LogView { width: 1fr; height: 1fr; }
    LogPane.-no-timeline Timeline { display: none; }
    """

    BINDINGS: ClassVar[list[BindingType]] = list(screenlist.LOG_PANE_KEYS)

    def __init__(
        self,
        source: Path | LogDocument,
        palette: LogPalette,
        *,
        follow: bool = False,
        poll_interval: float | None = POLL_S,
        id: str | None = None,
    ) -> None:
        """``source``: a file to open (polled every ``poll_interval`` while following; None: only when
        ``poll`` is called), or a document kept up to date by its owner, who calls ``catch_up``."""
        super().__init__(id=id)
        self.pushed = isinstance(source, LogDocument)
        self.doc = source if isinstance(source, LogDocument) else LogDocument(source)
        self.path = self.doc.path
        self.palette = palette
        self.follow = follow
        self.poll_interval = None if self.pushed else poll_interval
        self.filter_spec = FilterSpec()
        self.filtered_upto = 0  # lines the current filter's matches cover
        self.search_pattern = ""
        self.timeline_data: TimelineData | None = None
        # The pid of the server whose startup the timeline shows (the dashboard's host's), else the last.
        self.own_pid: Callable[[], int | None] = lambda: None
        self.tracked = False  # the tracker's view of the log has been shown once
        self.indexed = False
        self.busy = ""  # what a long worker is doing, for the status line
        self._timer: Timer | None = None
        self._polling: Worker[None] | None = None  # the poll running, if one is
        self.skips: list[Skipped] = []  # backlogs that polls skipped, as told
        self._generation = self.doc.generation  # of the lines the view shows
        self._version = -1  # of the meaning shown
        self._status_text: Text | None = None  # what the status line shows
        self._catching_up = False  # a pushed document's growth is being read
        self._grew_again = False  # ... and it grew again meanwhile

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield self.view
            yield self.timeline
        yield self.status_bar

    @cached_property
    def view(self) -> LogView:
        # Held, not queried: workers read it from their threads, and a read that ends while the app
        # closes must not find the pane's children gone.
        return LogView(self.palette, id="log")

    @cached_property
    def timeline(self) -> Timeline:
        return Timeline(self.palette, id="timeline")

    @cached_property
    def status_bar(self) -> StatusBar:
        return StatusBar(id="status")

    def on_mount(self) -> None:
        self.view.tail = self.follow
        if self.pushed:
            self._open_pushed()
        else:
            self._open(max(40, self.app.size.height * 2))
        self._status()
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        self.call_after_refresh(self._status)  # the status line's text, in the palette's new colours

    @property
    def first_error(self) -> int | None:
        """The line of the log's first error once the log has been read. From the document, so that it
        is current in a hidden tab too (which does no other work until shown)."""
        return self.doc.first_error() if self.tracked else None

    # -- opening -----------------------------------------------------------------------------------------

    @work(thread=True, group="open", exclusive=True)
    def _open(self, rows: int) -> None:
        worker = get_current_worker()
        doc = self.doc
        first = doc.tail(rows) if self.follow else doc.head(rows)
        self.app.call_from_thread(self._first_lines, first)
        mark = [0]

        def progress(pos: int, size: int) -> None:
            if pos - mark[0] >= PROGRESS_STEP:
                mark[0] = pos
                self.app.call_from_thread(self._set_busy, f"indexing {100 * pos // max(1, size)}%")

        doc.build_index(progress, lambda: worker.is_cancelled)
        if worker.is_cancelled:
            return
        self.app.call_from_thread(self._indexed, doc.index.line_count)
        if doc.scan(lambda: worker.is_cancelled) and not worker.is_cancelled:  # quitting stops the scan
            self.app.call_from_thread(self._scanned, self._meaning())

    def _first_lines(self, infos: list[LineInfo]) -> None:
        if self.follow:
            self.view.show_preview(infos)
        else:
            self.view.add_lines(infos)
            self.view.grow(len(infos))
        self._set_busy("indexing")

    def _scanned(self, meaning: Meaning) -> None:
        self._tracked(meaning, forget=True)  # lines shown before the scan were read without their context

    def _indexed(self, total: int) -> None:
        self.indexed = True
        view = self.view
        if view.preview:
            view.reset(total)
        else:
            view.grow(total)
        self._set_busy("scanning")
        if self.follow:
            self._start_polling()

    def _open_pushed(self) -> None:
        """A document kept up to date by its owner: it is indexed and parsed already."""
        self.indexed = True
        self._generation = self.doc.generation
        self.view.reset(self.doc.index.line_count)
        self._tracked(self._meaning(), forget=False)

    def _meaning(self) -> Meaning:
        """The folds and the timeline (in a worker thread, or for a pushed document on the app's)."""
        meaning = self.doc.meaning
        with meaning.lock:  # the version with what it counts
            own = self.own_pid()
            data = meaning.with_tracker(lambda tracker: timeline_data(tracker.startups, own))
            return Meaning(meaning.folds(), data, meaning.version)

    def retrack(self) -> None:
        """The server whose startup to show changed: take the timeline's snapshot again."""
        if self.pushed and self.tracked:
            self._tracked(self._meaning(), forget=False)

    def _tracked(self, meaning: Meaning, *, forget: bool) -> None:
        folds, data, version = meaning
        if forget:
            self.view.forget_meanings()
        self.view.set_folds(folds)
        if data != self.timeline_data or not self.tracked:  # a repaint lays the pane out again
            self.timeline.show(data)
        self.timeline_data = data
        self._version = version
        self.tracked = True
        self._set_busy("")

    # -- lines the view asks for -------------------------------------------------------------------------

    def on_log_view_lines_wanted(self, message: LogView.LinesWanted) -> None:
        self._read(message.lines, self._generation)

    @work(thread=True, group="read")
    def _read(self, lines: tuple[int, ...], generation: int) -> None:
        infos = self.doc.read(lines)
        # Lines of a file that restarted meanwhile would show under the old numbers: dropped (the view
        # forgets what it asked for when it restarts).
        if not get_current_worker().is_cancelled and self.doc.generation == generation:
            self.app.call_from_thread(self._lines_read, infos, generation)

    def _lines_read(self, infos: list[LineInfo], generation: int) -> None:
        if generation == self._generation:
            self.view.add_lines(infos)

    def on_log_view_state_changed(self, message: LogView.StateChanged) -> None:
        self._status()

    # -- following -----------------------------------------------------------------------------------

    def _start_polling(self) -> None:
        if self._timer is None and self.poll_interval:
            self._timer = self.set_interval(self.poll_interval, self.poll)

    def _stop_polling(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def poll(self) -> Worker[None] | None:
        """Look at the file once (the timer calls this; tests call it and wait for the worker). A pushed
        document is shown as it is now."""
        if not self.indexed:
            return None
        if self.pushed:
            self.catch_up()
            return None
        if self._polling is not None and not self._polling.is_finished:
            return self._polling  # one at a time: a slow poll goes on, none piles up behind it
        polling: Worker[None] = self._poll()
        self._polling = polling
        return polling

    @work(thread=True, group="poll")
    def _poll(self) -> None:
        worker = get_current_worker()
        growth = self.doc.poll(lambda: worker.is_cancelled)  # quitting stops it between two reads
        if worker.is_cancelled:
            return
        for skipped in self.doc.take_skipped():
            self.app.call_from_thread(self._skipped, skipped)
        unchanged = self.doc.generation == self._generation and self.doc.index.line_count == self.view.total
        if not growth.reset and not growth.added and unchanged:
            return  # (a restart that a cancelled poll found is still news)
        self._update(forget=True)  # the poll indexed lines before feeding them: a read may have come between

    def _skipped(self, skipped: Skipped) -> None:
        self.skips.append(skipped)
        self.notify(skipped.news(), severity="warning", timeout=8)

    def catch_up(self) -> None:
        """Show what a pushed document holds now: its owner says when it grew or restarted. One read at a
        time (growth meanwhile is read next); while not following, the pane stays as it is (as a file's
        poll stops)."""
        doc = self.doc
        if not self.indexed or not self.follow:
            return
        if self._catching_up:
            self._grew_again = True
            return
        shown = (self._generation, self.view.total, self._version)
        if (doc.generation, doc.index.line_count, doc.meaning.version) != shown:
            self._catching_up = True
            self._read_growth(self.view.total, max(1, self.view.size.height))

    @work(thread=True, group="growth")
    def _read_growth(self, shown: int, rows: int) -> None:
        update = self._now(forget=False, ahead=(shown, rows))
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._grew, update)

    def _update(self, *, forget: bool) -> None:
        """In a worker: what the document holds now, and the filter's matches among its new lines."""
        update = self._now(forget=forget)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._grew, update)

    def _now(self, *, forget: bool, ahead: tuple[int, int] | None = None) -> Update:
        """``ahead``: (lines shown, rows on screen): read the new lines at the tail, when following it."""
        doc = self.doc
        generation = doc.generation
        total, upto = doc.index.line_count, doc.index.complete
        restarted = generation != self._generation
        spec = self.filter_spec
        matches = doc.filter(spec, 0 if restarted else self.filtered_upto, upto) if spec.active else None
        lines: list[LineInfo] = []
        if ahead is not None and self.view.tail and not spec.active:
            shown, rows = ahead
            lines = doc.read(range(max(0 if restarted else shown, total - rows), total))
        return Update(generation, total, matches, upto, self._meaning(), forget, lines)

    def _grew(self, update: Update) -> None:
        view = self.view
        if update.generation != self._generation:
            self._generation = update.generation
            # A log that showed nothing was not replaced (it appeared); our own launch's rotation is no news.
            news = restart_news(self.doc.restart_reasons.get(update.generation))
            if news and view.total and update.generation not in self.doc.own_restarts:
                self.notify(news, timeout=6)
            if self.follow:  # a place in the old file means nothing in the new one: follow the new startup
                view.tail = True
            view.reset(update.total)
            if update.matches is not None:
                view.set_matches(update.matches)
        else:
            view.grow(update.total, update.matches or (), whole=self.pushed)
        if update.lines:
            view.add_lines(update.lines)  # in the same frame as the rows they fill
        if update.matches is not None:
            self.filtered_upto = update.upto
        if update.meaning.version != self._version or update.forget:
            self._tracked(update.meaning, forget=update.forget)
        self._status()
        if self._catching_up:
            self._catching_up = False
            if self._grew_again:
                self._grew_again = False
                self.catch_up()

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow
        if self.follow:
            self._start_polling()
            self.view.go_last()
            self.poll()  # what came while paused
        else:
            self._stop_polling()
            self.view.tail = False
        self._status()

    # -- filter ----------------------------------------------------------------------------------------

    def action_filter(self) -> None:
        from gdnconsole.ui.dialogs.filtersearch import (
            FilterScreen,  # loads with the first filter, not the first frame
        )

        self.app.push_screen(FilterScreen(self.filter_spec, sorted(self.doc.ranks)), self.apply_filter)

    def apply_filter(self, spec: FilterSpec | None) -> None:
        if spec is None:
            return
        self.filter_spec = spec
        self.workers.cancel_group(self, "filter")
        if not spec.active:
            self.view.set_matches(None)
            self._set_busy("")
            return
        self._set_busy("filtering 0%")
        self._filter(spec)

    @work(thread=True, group="filter", exclusive=True)
    def _filter(self, spec: FilterSpec) -> None:
        worker = get_current_worker()
        last = [-1]

        def progress(fraction: float) -> None:
            percent = int(fraction * 100)
            if percent != last[0]:
                last[0] = percent
                self.app.call_from_thread(self._set_busy, f"filtering {percent}%  (esc stops)")

        upto = self.doc.index.complete
        matches = self.doc.filter(spec, progress=progress, cancelled=lambda: worker.is_cancelled)
        if matches is not None and not worker.is_cancelled:
            self.app.call_from_thread(self._filtered, spec, matches, upto)

    def _filtered(self, spec: FilterSpec, matches: array[int], upto: int) -> None:
        if spec != self.filter_spec:
            return
        self.filtered_upto = upto
        self.view.set_matches(matches)
        self._set_busy("")

    def action_cancel(self) -> None:
        mine = (w for w in self.workers if w.node is self)  # the app's manager holds every pane's workers
        running = [w for w in mine if w.group in ("filter", "search") and w.is_running]
        if running:
            for worker in running:
                worker.cancel()
            self._set_busy("stopped")
        elif self.filter_spec.active:
            self.apply_filter(FilterSpec())

    # -- search ----------------------------------------------------------------------------------------

    def action_search(self) -> None:
        from gdnconsole.ui.dialogs.filtersearch import SearchScreen

        self.app.push_screen(SearchScreen(self.search_pattern), self._search_entered)

    def _search_entered(self, pattern: str | None) -> None:
        if pattern:
            self.search_pattern = pattern
            self._search_from_top()

    def _search_from_top(self) -> None:
        """A new search starts at the top of the screen, as less's and k9s's do: while following, the
        cursor sits on the last line, and a search from there would find nothing before wrapping."""
        shown = self.view.visible_lines()
        if not shown:
            self.action_search_next()
            return
        self._set_busy(f"searching /{self.search_pattern}/")
        self._search(self.search_pattern, shown[0] - 1, False)

    def action_search_next(self) -> None:
        self._search_from_cursor(backward=False)

    def action_search_prev(self) -> None:
        self._search_from_cursor(backward=True)

    def _search_from_cursor(self, *, backward: bool) -> None:
        line = self.view.cursor_line
        if not self.search_pattern or line is None:
            return
        self._set_busy(f"searching /{self.search_pattern}/")
        self._search(self.search_pattern, line, backward)

    @work(thread=True, group="search", exclusive=True)
    def _search(self, pattern: str, line: int, backward: bool) -> None:
        """From ``line`` to the end (the start, ``backward``), then wrapped around from the other end:
        nothing found past ``line`` means any match is at or before it."""
        worker = get_current_worker()
        hit = self._next_shown(pattern, line, backward, worker)
        wrapped = ""  # to which end, when it did
        if hit is None and not worker.is_cancelled:
            edge = self.doc.index.line_count if backward else -1
            hit = self._next_shown(pattern, edge, backward, worker)
            wrapped = ("bottom" if backward else "top") if hit is not None else ""
        if not worker.is_cancelled:
            self.app.call_from_thread(self._found, pattern, hit, wrapped)

    def _next_shown(self, pattern: str, line: int, backward: bool, worker: Worker[None]) -> int | None:
        """The next match after ``line`` that the filter shows (in the search's worker)."""
        found = line
        while True:
            hit = self.doc.search(pattern, found, backward=backward, cancelled=lambda: worker.is_cancelled)
            if hit is None or worker.is_cancelled or self._shown(hit):
                return hit
            found = hit  # hidden by the filter: look further

    def _shown(self, line: int) -> bool:
        matches = self.view.matches
        if matches is None:
            return True
        i = bisect_left(matches, line)
        return i < len(matches) and matches[i] == line

    def _found(self, pattern: str, line: int | None, wrapped: str) -> None:
        self._set_busy("")
        if line is None:
            self.notify(f"/{pattern}/ not found", severity="warning", timeout=3)
            return
        if wrapped:
            self.notify(f"/{pattern}/ wrapped to the {wrapped}", timeout=2)
        self.view.go_to_line(line)

    # -- jumps -------------------------------------------------------------------------------------------

    def action_first_error(self) -> None:
        if self.first_error is None:
            self.notify("no error in this log" if self.indexed else "still reading the log", timeout=3)
            return
        self.view.go_to_line(self.first_error)

    def action_fatal(self) -> None:
        data = self.timeline_data
        if data is None or data.fatal is None:
            self.notify("the last startup has no fatal error", timeout=3)
            return
        self.view.go_to_line(data.fatal.line)

    def action_toggle_timeline(self) -> None:
        self.toggle_class("-no-timeline")

    # -- status ----------------------------------------------------------------------------------------

    def _set_busy(self, busy: str) -> None:
        self.busy = busy
        self.timeline.set_status(busy)
        self._status()

    def _status(self) -> None:
        view = self.view
        text = Text()
        line = view.cursor_line
        count = view.total
        if view.preview:
            text.append(f"last {count} lines (counting lines…)")
        else:
            text.append(f"line {'-' if line is None else f'{line + 1:,}'}/{count:,}")
        if self.follow:
            bold = Style(bold=True)  # in the theme's colours, as the status bar's verdicts
            if view.tail:
                text.append("  following", self.palette.stages[Stage.READY] + bold)
            else:
                paused = self.palette.severities[Severity.WARNING] + bold
                text.append("  paused", paused)
                if view.new_lines:
                    text.append(f"  +{view.new_lines:,} new lines (end: resume)", paused)
        for on, mode in ((view.wrap, "wrap"), (view.short_time, "HH:MM:SS")):
            if on:
                text.append(f"  {mode}")
        if self.filter_spec.active and view.matches is not None:
            text.append(f"  filter: {len(view.matches):,} lines")
            if self.filter_spec.regex:
                text.append(f" /{self.filter_spec.regex}/")  # a Text: the regex is not markup
        if self.busy:
            text.append(f"  {self.busy}", "dim")
        if text != self._status_text:  # the same line is not laid out and painted again
            self._status_text = text
            self.status_bar.update(text)
