"""A log file as the log view sees it: lines with their stage, severity and rank, folds, filter, search.

This is the small I/O layer under the log widgets (no Textual here): the UI calls it from worker
threads and hands the results to widgets. It joins the line index (where lines are) with the stage
tracker (what they mean). The tracker sees every line that is not a batch or access line (the fast scan
of ``logs.scan``, then each line appended while following); what it decided is kept in two compact
arrays. Batch and access lines it skipped are classified when read, in the context of the nearest
line it saw before them.
"""

from __future__ import annotations

import re
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from gdnconsole.logs import scan as logscan
from gdnconsole.logs import textsafe
from gdnconsole.logs.lineindex import Growth, LineIndex
from gdnconsole.sglang import events, logline
from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.sglang.tracker import Problem, StageTracker

T = TypeVar("T")

DISPLAY_CAP = 32 << 10  # characters of a line kept for display and copy (the 11 KB server_args fits)
CLASSIFY_CAP = 4096  # characters the classifier looks at: its patterns are anchored near the start
MAIN = "main"  # the rank label of lines without a rank prefix
_BATCH_KINDS = frozenset({"decode_batch", "prefill_batch", "access"})
_NO_STAGE = 15  # the stage nibble of a line without a stage


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
class Fold:
    """A multi-line block (a traceback) that can be shown as the one line that names the error."""

    first: int  # 0-based line numbers, inclusive
    last: int
    summary: int
    severity: Severity

    @property
    def size(self) -> int:
        return self.last - self.first + 1


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


@dataclass
class _Meta:
    """What the tracker decided for the lines it saw: parallel arrays, ascending line numbers."""

    lines: array[int] = field(default_factory=lambda: array("I"))
    codes: array[int] = field(default_factory=lambda: array("B"))  # stage nibble | severity << 4

    def add(self, line: int, stage: Stage | None, severity: Severity) -> None:
        if self.lines and self.lines[-1] == line:
            return  # a tqdm line with a glued log line: keep the first part's meaning
        self.lines.append(line)
        self.codes.append((_NO_STAGE if stage is None else int(stage)) | int(severity) << 4)

    def at_or_before(self, line: int) -> tuple[int, Stage | None, Severity] | None:
        i = bisect_right(self.lines, line) - 1
        if i < 0:
            return None
        code = self.codes[i]
        nibble = code & 15
        return self.lines[i], None if nibble == _NO_STAGE else Stage(nibble), Severity(code >> 4)


# -- the document ------------------------------------------------------------------------------------


class LogDocument:
    """One log file: index, tracker, per-line meaning, folds. Methods are called from worker threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.index = LineIndex(path)
        self._lock = threading.RLock()  # the tracker and meta are fed from the scan and from polls
        self.generation = 0  # counts restarts of the file: a scan of an older file is thrown away
        self._reset_meaning()

    def _reset_meaning(self) -> None:
        self.tracker = StageTracker()
        self._meta = _Meta()
        self._blocks: dict[int, Problem] = {}  # each problem by the line that opened it
        self._latest: tuple[int, Problem] | None = None  # the last problem opened, and its first line
        self.fed = 0  # lines the tracker has seen (every line before this one, or skipped by the scan)
        self.scanned = False
        self.generation += 1
        self.ranks: set[str] = set()

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

    def scan(self) -> bool:
        """Feed the tracker every line that matters (the fast scan); False if the file restarted meanwhile."""
        generation = self.generation
        result = logscan.scan(self.path, parallel=False)
        with self._lock:
            if generation != self.generation or self.fed:
                return False
            for number, text in logscan.decoded(result.records):
                self._feed(number - 1, text)
            self.fed = result.lines
            self.scanned = True
        return True

    # -- following -----------------------------------------------------------------------------------

    def poll(self) -> Growth:
        """Index appended lines and feed them to the tracker; restart everything on truncation."""
        with self._lock:
            growth = self.index.update()
            if growth.reset:
                self._reset_meaning()
                self.scanned = True  # a relaunch's new log is read line by line from its start
            if self.scanned:
                self._feed_through(self.index.complete)
            return growth

    def _feed_through(self, stop: int) -> None:
        for first, data in self.index.chunks(self.fed, stop):
            for n, raw in enumerate(data.split(b"\n")[:-1], start=first):
                if self.fed <= n < stop:
                    self._feed(n, raw.decode("utf-8", "replace"))
            if first >= stop:
                break
        self.fed = max(self.fed, stop)

    def _feed(self, number: int, text: str) -> None:
        """Give one line to the tracker (0-based ``number``) and keep what it decided."""
        tracker = self.tracker
        before = tracker.current
        count = len(before.problems) if before else 0
        evs = tracker.feed(text[:CLASSIFY_CAP], number + 1)
        startup = tracker.current
        assert startup is not None
        new = startup.problems if startup is not before else startup.problems[count:]
        for problem in new:
            self._blocks[number] = problem
            self._latest = (number, problem)
        event = evs[0]
        if event.log.rank:
            self.ranks.add(event.log.rank)
        latest = self._latest
        if latest is not None and latest[1].last_line - 1 == number and number > latest[0]:
            block = latest[1]
            self._meta.add(number, block.stage, block.severity)  # a traceback's continuation
        elif event.kind not in _BATCH_KINDS or event.severity > Severity.INFO:
            self._meta.add(number, event.stage if event.stage is not None else startup.stage, event.severity)
        else:
            self._meta.add(number, _context_stage(event.kind, startup.stage), event.severity)

    # -- reading ---------------------------------------------------------------------------------------

    def read(self, numbers: Iterable[int]) -> list[LineInfo]:
        raw = self.index.read_many(list(numbers))
        return [self.info(n, r) for n, r in sorted(raw.items())]

    def info(self, number: int, raw_bytes: bytes) -> LineInfo:
        """A line's meaning: the tracker's when it saw the line, else classified here in context."""
        raw = raw_bytes[: DISPLAY_CAP * 4].decode("utf-8", "replace")[:DISPLAY_CAP]
        log = logline.parse(textsafe.last_carriage_state(raw[:CLASSIFY_CAP]))
        with self._lock:
            seen = self._meta.at_or_before(number)
        if seen is not None and seen[0] == number:
            stage, severity = seen[1], seen[2]
        else:
            event = events.classify(log, number + 1)
            context = seen[1] if seen is not None else None
            severity = event.severity
            if event.kind in _BATCH_KINDS:
                stage = _context_stage(event.kind, context)
            else:
                stage = event.stage if event.stage is not None else context
        body = _without_rank(display_text(raw), log.rank)
        return LineInfo(number, raw, body, stage, severity, log.rank)

    # -- what the tracker knows ------------------------------------------------------------------------

    def folds(self) -> list[Fold]:
        with self._lock:
            out = [
                Fold(first, p.last_line - 1, p.line - 1, p.severity)
                for first, p in sorted(self._blocks.items())
                if p.last_line - 1 > first
            ]
        return out

    def with_tracker(self, read: Callable[[StageTracker], T]) -> T:
        """``read(tracker)`` while no other thread feeds it (the tracker's objects change as it reads)."""
        with self._lock:
            return read(self.tracker)

    def first_error(self) -> int | None:
        """The line of the first error or fatal problem in the file (0-based)."""
        with self._lock:
            lines = [
                p.line - 1 for s in self.tracker.startups for p in s.problems if p.severity >= Severity.ERROR
            ]
        return min(lines) if lines else None

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
        with self._lock:
            lo = bisect_right(self._meta.lines, start - 1)
            hi = bisect_right(self._meta.lines, stop - 1)
            seen = [
                n
                for n, code in zip(self._meta.lines[lo:hi], self._meta.codes[lo:hi], strict=True)
                if Severity(code >> 4) in (spec.severities or ())
            ]
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
        walker = _MetaWalker(self._meta)
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
            return spec.allows_parts(_context_stage(kind, context), Severity.INFO, _frame_rank(head))

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


class _MetaWalker:
    """Looks up ascending line numbers in the tracker's arrays by walking them, not bisecting."""

    def __init__(self, meta: _Meta) -> None:
        self.meta = meta
        self.i = 0

    def at(self, line: int) -> tuple[bool, Stage | None]:
        """Whether the tracker saw ``line``, and the stage of the last line it saw up to it."""
        lines = self.meta.lines
        if self.i and self.i <= len(lines) and lines[self.i - 1] > line:
            self.i = bisect_right(lines, line)  # went backwards: start over
        while self.i < len(lines) and lines[self.i] <= line:
            self.i += 1
        if self.i == 0:
            return False, None
        nibble = self.meta.codes[self.i - 1] & 15
        return lines[self.i - 1] == line, None if nibble == _NO_STAGE else Stage(nibble)


def _frame_rank(head: bytes) -> str | None:
    """The rank in a ``[date time RANK]`` frame, without the parser (for batch lines)."""
    if not head.startswith(b"["):
        return None
    close = head.find(b"]", 0, 80)
    parts = head[1:close].split() if close > 0 else []
    if len(parts) <= 2:
        return None  # only the date and time: the main process
    return b" ".join(parts[2:]).decode("ascii", "replace")


def _context_stage(kind: str, context: Stage | None) -> Stage | None:
    """Batch and access lines mean warm-up before ``ready`` and serving after it."""
    if kind == "decode_batch":
        return Stage.SERVING
    if context is None:
        return Stage.SERVING if kind == "prefill_batch" else None
    if context >= Stage.READY:
        return Stage.SERVING
    if context >= Stage.LISTENING:
        return Stage.WARMUP
    return context


def _read_head(path: Path, count: int, max_bytes: int = 1 << 20) -> list[bytes]:
    with path.open("rb") as fh:
        data = fh.read(max_bytes)
    lines = data.split(b"\n")
    if len(data) == max_bytes and len(lines) > 1:
        lines.pop()  # cut mid-line
    elif lines and lines[-1] == b"":
        lines.pop()
    return lines[:count]
