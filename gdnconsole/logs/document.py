"""A log file as the log view sees it: lines with their stage, severity and rank, folds, filter, search.

This is the small I/O layer under the log widgets (no Textual here): the UI calls it from worker
threads and hands the results to widgets. It joins the line index (where lines are) with the log's
meaning (``logs.meaning``: the stage tracker and what it decided per line).

Two kinds of document share this code. ``LogDocument`` reads a file someone else writes (`log view`):
it indexes the file, runs the fast scan once, and follows it by polling. ``MirrorDocument`` is a file
this process writes itself (a HostSession's copy of a host's log): each append is parsed, then indexed
from the bytes in hand, so readers never see a line before its meaning, and nothing polls the file.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from gdnconsole.logs import scan as logscan
from gdnconsole.logs import textsafe
from gdnconsole.logs.lineindex import Growth, LineIndex
from gdnconsole.logs.meaning import BATCH_KINDS, CLASSIFY_CAP, Fold, LogMeaning, context_stage
from gdnconsole.sglang import events, logline
from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.sglang.tracker import StageTracker

__all__ = ["MAIN", "FilterSpec", "Fold", "LineInfo", "LogDocument", "MirrorDocument", "display_text"]

T = TypeVar("T")

DISPLAY_CAP = 32 << 10  # characters of a line kept for display and copy (the 11 KB server_args fits)
POLL_BYTES = 256 << 20  # bytes a poll indexes at most: it ends soon however fast the file grows
SKIP_BYTES = 256 << 20  # lines not yet read for their meaning beyond this are skipped by a poll ...
SKIP_KEEP = 1 << 20  # ... all but about this much at their end (the latest throughput, the last stage)
MAIN = "main"  # the rank label of lines without a rank prefix


@dataclass(frozen=True, slots=True)
class LineInfo:
    """One line, ready to render: ``body`` is safe to show (no control characters, rank prefix moved
    to ``rank``); ``raw`` is what the file holds (capped), for copying."""

    number: int  # 0-based line number in the file
    raw: str
    body: str
    stage: Stage | None
    severity: Severity
    rank: str | None


@dataclass(frozen=True, slots=True)
class Skipped:
    """Lines a poll did not read for their meaning, to keep up with a log that grows too fast: they are
    in the index (scrolling shows them), but their stages and errors never reached the tracker."""

    first: int  # 0-based line numbers, [first, stop)
    stop: int
    size: int  # bytes

    @property
    def lines(self) -> int:
        return self.stop - self.first

    def news(self) -> str:
        """What to tell the user."""
        return (
            f"skipped {self.size / 2**20:,.1f} MB ({self.lines:,} lines) to keep up with the log: "
            "they are not read for stages or errors (scroll up to see them)"
        )


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """Which lines to show: those matching ``regex`` whose stage, severity and rank are all allowed
    (``None``: no restriction)."""

    regex: str = ""
    stages: frozenset[Stage | None] | None = None
    severities: frozenset[Severity] | None = None
    ranks: frozenset[str] | None = None

    @property
    def active(self) -> bool:
        return bool(self.regex) or any(x is not None for x in (self.stages, self.severities, self.ranks))

    @property
    def needs_info(self) -> bool:
        return any(x is not None for x in (self.stages, self.severities, self.ranks))

    def allows(self, info: LineInfo) -> bool:
        return self.allows_parts(info.stage, info.severity, info.rank)

    def allows_parts(self, stage: Stage | None, severity: Severity, rank: str | None) -> bool:
        if self.stages is not None and stage not in self.stages:
            return False
        if self.severities is not None and severity not in self.severities:
            return False
        return self.ranks is None or (rank or MAIN) in self.ranks


def compile_regex(pattern: str) -> re.Pattern[bytes]:
    """The user's pattern, for searching raw bytes (raises re.error for the UI to show)."""
    return re.compile(pattern.encode("utf-8", "surrogateescape"), re.MULTILINE)


_REGEX_SPECIALS = frozenset(".^$*+?{}[]\\|()")


def matcher(pattern: str) -> Callable[[bytes, int], int]:
    """``find(data, pos)``: where the pattern next matches in ``data`` from ``pos`` (-1: nowhere).

    A pattern without regex syntax is searched with ``bytes.find``, which is many times faster than
    ``re`` on a 1 GB file."""
    if not _REGEX_SPECIALS.intersection(pattern):
        needle = pattern.encode("utf-8", "surrogateescape")
        return lambda data, pos: data.find(needle, pos)
    regex = compile_regex(pattern)

    def find(data: bytes, pos: int) -> int:
        m = regex.search(data, pos)
        return -1 if m is None else m.start()

    return find


# -- what one line looks like ------------------------------------------------------------------------


SGLANG_HEAD = 64 << 10  # bytes at a log's start that must hold a line SGLang writes, for it to be one


def written_by_sglang(path: Path, size: int = SGLANG_HEAD) -> bool:
    """Whether a line of the first ``size`` bytes of ``path`` is one SGLang writes (the test `log summarize`
    makes of a whole file, on the head that a view reads at once). An empty file may still become one."""
    head = logscan.text_head(path, size)
    if not head:
        return True
    lines = head.split(b"\n")
    if len(head) == size and len(lines) > 1:
        lines.pop()  # cut mid-line
    tracker = StageTracker()
    for number, raw in enumerate(lines, start=1):
        tracker.feed(raw[:CLASSIFY_CAP].decode("utf-8", "replace"), number)
    return tracker.sglang_lines > 0


def display_text(raw: str) -> str:
    """What the view shows of a raw line: its last tqdm state, control characters made visible."""
    shown = textsafe.last_carriage_state(raw[:DISPLAY_CAP])
    return textsafe.visible(textsafe.without_secrets(shown)).expandtabs(4)


def _without_rank(text: str, rank: str | None) -> str:
    """The frame ``[ts TP0] msg`` without its rank, which the view shows as a tag."""
    if rank is None or not text.startswith("["):
        return text
    at = text.find(f" {rank}]", 0, 64)
    return text if at < 0 else text[:at] + text[at + len(rank) + 1 :]


# -- the document ------------------------------------------------------------------------------------

RESTART_NEWS = {
    "truncated": "the log was truncated (copytruncate, or rewritten in place): reading it from its new start",
    "replaced": "the log was rotated or replaced: the old file was read to its end, now the new one",
    "missing": "the log file is gone: waiting for it to come back",
}


def restart_news(reason: str | None) -> str | None:
    """What to tell the user about a restart of the log (None: nothing, as when a log first appears)."""
    return RESTART_NEWS.get(reason or "replaced")


class LogDocument:
    """One log file: its index and its meaning (per-line stage, folds, the tracker). Methods are called
    from worker threads."""

    def __init__(self, path: Path, meaning: LogMeaning | None = None) -> None:
        self.path = path
        self.index = LineIndex(path)
        self.meaning = meaning if meaning is not None else LogMeaning()
        self.generation = 1  # counts restarts of the file: a scan or read of an older file is thrown away
        self.own_restarts: set[int] = set()  # generations this console started itself (its launch's rotation)
        self.restart_reasons: dict[int, str] = {}  # generation -> how the file restarted ("truncated", ...)
        self.scanned = False
        self.skipped: list[Skipped] = []  # what polls skipped, not yet told (``take_skipped``)

    @property
    def tracker(self) -> StageTracker:
        return self.meaning.tracker

    @property
    def fed(self) -> int:
        return self.meaning.fed

    @property
    def ranks(self) -> set[str]:
        return self.meaning.ranks

    # -- opening ---------------------------------------------------------------------------------------

    def head(self, count: int) -> list[LineInfo]:
        """The first lines, read before the index exists (line numbers are known from the start)."""
        raw = _read_head(self.path, count)
        return [self.info(n, r) for n, r in enumerate(raw)]

    def tail(self, count: int) -> list[LineInfo]:
        """The last lines, read before the index exists; numbered from 0 (they are a preview)."""
        return [self.info(n, r) for n, r in enumerate(self.index.tail(count))]

    def build_index(
        self, progress: Callable[[int, int], None] | None = None, cancelled: Callable[[], bool] | None = None
    ) -> Growth:
        return self.index.update(progress, cancelled)

    def scan(self, cancelled: Callable[[], bool] | None = None) -> bool:
        """Feed the tracker every line that matters (the fast scan); False if the file restarted meanwhile,
        or ``cancelled()`` stopped the scan."""
        generation = self.generation
        try:
            result = logscan.scan(self.path, parallel=False, cancelled=cancelled)
        except logscan.ScanCancelled:
            return False
        except logscan.LogReadError:  # unreadable since it was opened: its lines are fed as polls read them
            with self.meaning.lock:
                self.scanned = True
            return False
        with self.meaning.lock:
            if generation != self.generation or self.meaning.fed:
                return False
            self.meaning.feed_records(result.records, result.lines)
            self.scanned = True
        return True

    # -- following -----------------------------------------------------------------------------------

    def poll(self, cancelled: Callable[[], bool] | None = None) -> Growth:
        """Index appended lines (``POLL_BYTES`` at most) and feed them to the tracker; restart everything
        on truncation. A backlog too large to read for its meaning is skipped (``take_skipped``); a
        cancelled poll stops between reads, what it read kept."""
        with self.meaning.lock:
            growth = self.index.update(cancelled=cancelled, limit=POLL_BYTES)
            if growth.reset:
                self.meaning.reset()
                self.generation += 1
                self.restart_reasons[self.generation] = growth.reason or "replaced"
                self.scanned = True  # a relaunch's new log is read from its start
            if self.scanned:
                self._skip_backlog()
                self._feed_through(self.index.complete, cancelled)
            return growth

    def take_skipped(self) -> list[Skipped]:
        """What polls skipped since the last call."""
        with self.meaning.lock:
            taken, self.skipped = self.skipped, []
            return taken

    def _skip_backlog(self) -> None:
        """Lines not fed yet past ``SKIP_BYTES``: all but the last ``SKIP_KEEP`` bytes of them are marked
        fed without the tracker seeing them (lock held)."""
        meaning, index = self.meaning, self.index
        _, fed_at = index.checkpoint(meaning.fed)
        if index.end - fed_at <= SKIP_BYTES:
            return
        line, offset = index.checkpoint_at(index.end - SKIP_KEEP)
        if line <= meaning.fed:
            return
        self.skipped.append(Skipped(meaning.fed, line, offset - fed_at))
        meaning.fed_through(line)

    def _feed_through(self, stop: int, cancelled: Callable[[], bool] | None = None) -> None:
        """Give the tracker the lines from the last one fed up to ``stop`` through the fast scan (the
        lines that matter, as the first scan did; thousands of batch lines a second arrive here)."""
        meaning = self.meaning
        for first, data in self.index.chunks(meaning.fed, stop):
            if cancelled is not None and cancelled():
                return
            if first + data.count(b"\n") <= meaning.fed:
                continue
            start = _after_lines(data, meaning.fed - first)
            meaning.feed_chunk(data[start:])
        meaning.fed_through(stop)

    # -- reading ---------------------------------------------------------------------------------------

    def read(self, numbers: Iterable[int]) -> list[LineInfo]:
        raw = self.index.read_many(list(numbers))
        return [self.info(n, r) for n, r in sorted(raw.items())]

    def info(self, number: int, raw_bytes: bytes) -> LineInfo:
        """A line's meaning: the tracker's when it saw the line, else classified here in context."""
        raw = raw_bytes[: DISPLAY_CAP * 4].decode("utf-8", "replace")[:DISPLAY_CAP]
        log = logline.parse(textsafe.last_carriage_state(raw[:CLASSIFY_CAP]))
        seen = self.meaning.seen_at_or_before(number)
        if seen is not None and seen[0] == number:
            stage, severity = seen[1], seen[2]
        else:
            event = events.classify(log, number + 1)
            context = seen[1] if seen is not None else None
            severity = event.severity
            if event.kind in BATCH_KINDS:
                stage = context_stage(event.kind, context)
            else:
                stage = event.stage if event.stage is not None else context
        body = _without_rank(display_text(raw), log.rank)
        return LineInfo(number, raw, body, stage, severity, log.rank)

    # -- what the tracker knows ------------------------------------------------------------------------

    def folds(self) -> list[Fold]:
        return self.meaning.folds()

    def with_tracker(self, read: Callable[[StageTracker], T]) -> T:
        """``read(tracker)`` while no other thread feeds it (the tracker's objects change as it reads)."""
        return self.meaning.with_tracker(read)

    def first_error(self) -> int | None:
        """The line of the first error or fatal problem in the file (0-based)."""
        return self.meaning.first_error()

    # -- filter and search -----------------------------------------------------------------------------

    def filter(
        self,
        spec: FilterSpec,
        start: int = 0,
        stop: int | None = None,
        progress: Callable[[float], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> array[int] | None:
        """Line numbers in ``[start, stop)`` that ``spec`` shows; None when cancelled."""
        stop = self.index.complete if stop is None else stop
        find = matcher(spec.regex) if spec.regex else None
        if self.scanned and spec.severities is not None and Severity.INFO not in spec.severities:
            return self._filter_seen(spec, start, stop, find)
        allows = self._allows(spec)
        out = array("I")
        span = max(1, stop - start)
        for first, data in self.index.chunks(start, stop):
            if cancelled is not None and cancelled():
                return None
            for number, raw in _candidates(first, data, find):
                if start <= number < stop and allows(number, raw):
                    out.append(number)
            if progress is not None:
                progress(min(1.0, (first - start) / span))
        if stop > self.index.complete and self.index.line_count > self.index.complete:
            number = self.index.complete  # the last line, not yet ended by a newline
            for raw in self.index.read(number, number + 1):
                if (find is None or find(raw, 0) >= 0) and allows(number, raw):
                    out.append(number)
        return out

    def _filter_seen(
        self, spec: FilterSpec, start: int, stop: int, find: Callable[[bytes, int], int] | None
    ) -> array[int]:
        """Warnings and errors only: every such line is one the tracker saw, so read just those."""
        seen = self.meaning.seen_with(start, stop, spec.severities or frozenset())
        out = array("I")
        for number, raw in sorted(self.index.read_many(seen).items()):
            if (find is None or find(raw, 0) >= 0) and spec.allows(self.info(number, raw)):
                out.append(number)
        return out

    def _allows(self, spec: FilterSpec) -> Callable[[int, bytes], bool]:
        """The stage / severity / rank test of a filter, for ascending line numbers.

        Lines the tracker saw are classified in full (they are few). The others are the batch and
        access lines the scan skipped: info-level, their stage is their context's, their rank is in
        their frame, so millions of them are checked without the parser."""
        if not spec.needs_info:
            return lambda number, raw: True
        walker = self.meaning.walker()
        plain_ok = spec.severities is None or Severity.INFO in spec.severities

        def allows(number: int, raw: bytes) -> bool:
            seen, context = walker.at(number)
            if seen or not self.scanned:
                return spec.allows(self.info(number, raw))
            if not plain_ok:
                return False
            head = raw[:CLASSIFY_CAP]
            kind = (
                "decode_batch"
                if b"Decode batch" in head
                else "access"
                if b"HTTP/" in head
                else "prefill_batch"
            )
            return spec.allows_parts(context_stage(kind, context), Severity.INFO, _frame_rank(head))

        return allows

    def search(
        self, pattern: str, line: int, *, backward: bool = False, cancelled: Callable[[], bool] | None = None
    ) -> int | None:
        """The next line after ``line`` (or before it) that matches ``pattern``."""
        regex = matcher(pattern)
        if backward:
            for first, data in self.index.chunks_backward(line):
                if cancelled is not None and cancelled():
                    return None
                hits = [n for n, _ in _candidates(first, data, regex) if n < line]
                if hits:
                    return hits[-1]
            return None
        for first, data in self.index.chunks(line + 1, self.index.line_count):
            if cancelled is not None and cancelled():
                return None
            for n, _ in _candidates(first, data, regex):
                if n > line:
                    return n
        return None


class MirrorDocument(LogDocument):
    """A file this process writes (a HostSession's copy of a host's log), parsed and indexed as it is
    written: nothing reads the file to find its lines or scans it for their meaning."""

    def __init__(self, path: Path, meaning: LogMeaning | None = None) -> None:
        super().__init__(path, meaning)
        self.scanned = True  # every line is parsed as it is appended
        self.clear()

    def clear(self, *, own: bool = False, reason: str = "replaced") -> None:
        """Empty the file and forget its lines (the log it copies restarted). ``own``: the restart is this
        console's doing (a launch rotates the log), which is no news to tell the user about. ``reason``:
        how the log restarted, as the agent said ("truncated", "replaced", "missing", "appeared")."""
        with self.meaning.lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(b"")
            self.meaning.reset()
            self.index.reset()
            self.generation += 1
            self.restart_reasons[self.generation] = reason
            if own:
                self.own_restarts.add(self.generation)

    def append(self, data: bytes) -> int:
        """Write ``data`` (whole lines) at the end of the file, parse it, then index it: a reader that finds
        a line in the index finds its meaning too. Returns the count of lines."""
        with self.path.open("ab") as fh:
            fh.write(data)
        count = self.meaning.feed_chunk(data)
        self.index.extend(data)
        return count


def _candidates(
    first: int, data: bytes, find: Callable[[bytes, int], int] | None
) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of the lines of a chunk where ``find`` matches (every line without one)."""
    if find is None:
        yield from enumerate(data.split(b"\n")[:-1], start=first)
        return
    number, at = first, 0  # the line that starts at byte `at`
    pos = 0
    while (hit := find(data, pos)) >= 0:
        start = data.rfind(b"\n", 0, hit) + 1
        number += data.count(b"\n", at, start)
        at = start
        end = data.find(b"\n", max(hit, start))
        end = len(data) if end < 0 else end
        yield number, data[start:end]
        pos = end + 1
        if pos >= len(data):
            return


def _after_lines(data: bytes, count: int) -> int:
    """Where the line after the first ``count`` lines of ``data`` starts."""
    at = 0
    for _ in range(max(0, count)):
        at = data.index(b"\n", at) + 1
    return at


def _frame_rank(head: bytes) -> str | None:
    """The rank in a ``[date time RANK]`` frame, without the parser (for batch lines)."""
    if not head.startswith(b"["):
        return None
    close = head.find(b"]", 0, 80)
    parts = head[1:close].split() if close > 0 else []
    if len(parts) <= 2:
        return None  # only the date and time: the main process
    return b" ".join(parts[2:]).decode("ascii", "replace")


def _read_head(path: Path, count: int, max_bytes: int = 1 << 20) -> list[bytes]:
    with path.open("rb") as fh:
        data = fh.read(max_bytes)
    if data.startswith(b"\0"):  # a copytruncate's NUL hole: the index reads past it, this preview cannot
        return []
    lines = data.split(b"\n")
    if len(data) == max_bytes and len(lines) > 1:
        lines.pop()  # cut mid-line
    elif lines and lines[-1] == b"":
        lines.pop()
    return lines[:count]
