"""What a log's lines mean: the one parse of a log, kept beside its line index and shared by all who show it.

The stage tracker sees every line that is not a batch or access line (the fast scan of ``logs.scan``), and
what it decided for each line it saw is kept in two compact arrays; batch and access lines it skipped are
classified when read, in the context of the nearest line it saw before them (``logs.document``). Problem
blocks (tracebacks) are kept by their first line, for folding.

One thread feeds it (a HostSession on the event loop, or the log view's worker), others read it (the
workers that read lines, filter, search): every access holds the lock. ``version`` counts the changes, so
that a reader knows when the timeline and folds it drew are out of date.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from gdnconsole.logs import scan as logscan
from gdnconsole.sglang.events import Event
from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.sglang.tracker import Problem, StageTracker

T = TypeVar("T")

CLASSIFY_CAP = 4096  # characters the classifier looks at: its patterns are anchored near the start
BATCH_KINDS = frozenset({"decode_batch", "prefill_batch", "access"})
_NO_STAGE = 15  # the stage nibble of a line without a stage


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


class MetaWalker:
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


def context_stage(kind: str, context: Stage | None) -> Stage | None:
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


def classified_text(raw: bytes) -> str:
    """The part of a raw line the classifier reads (a 1 MB line is not decoded whole)."""
    return raw[: CLASSIFY_CAP * 4].decode("utf-8", "replace")[:CLASSIFY_CAP]


class LogMeaning:
    """The tracker and what it decided per line; fed in line order, from line 0."""

    def __init__(self, *, per_line: bool = True) -> None:
        """``per_line``: keep what each line means, for a view that reads lines (not for `status`, which
        reads the tracker only: five bytes a line it saw add up over a long log)."""
        self.lock = threading.RLock()
        self.version = 0
        self.per_line = per_line
        self._reset()

    def _reset(self) -> None:
        self.tracker = StageTracker()
        self._meta = _Meta()
        self._blocks: dict[int, Problem] = {}  # each problem by the line that opened it
        self._latest: tuple[int, Problem] | None = None  # the last problem opened, and its first line
        self.fed = 0  # lines the tracker has seen (every line before this one, or skipped by the scan)
        self.ranks: set[str] = set()
        self.needle: bytes | None = None  # the log's batch-line form, once seen (for the pure-Python scan)
        self._firsts: tuple[int, int | None] = (-1, None)  # (version, first error) last computed
        self.version += 1

    def reset(self) -> None:
        """The log restarted (truncated, replaced): forget everything."""
        with self.lock:
            self._reset()

    # -- feeding -------------------------------------------------------------------------------------

    def feed_chunk(self, data: bytes) -> int:
        """Whole lines that follow the ones fed so far: the tracker sees those the fast scan keeps (every
        line but batch and access lines, and the ends of each run of those). Returns the count of lines."""
        count, records, self.needle = logscan.scan_buffer(data, self.fed + 1, self.needle)
        self.feed_records(records, self.fed + count)
        return count

    def feed_records(self, records: Iterable[tuple[int, bytes]], through: int) -> None:
        """(1-based number, raw line) pairs the scan kept, in order; ``through``: lines the scan covered."""
        with self.lock:
            for number, raw in records:
                self.feed(number - 1, classified_text(raw))
            self.fed = max(self.fed, through)
            self.version += 1

    def feed(self, number: int, text: str) -> None:
        """Give one line to the tracker (0-based ``number``) and keep what it decided (lock held)."""
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
        if self.per_line:
            self._keep(number, event, startup.stage)

    def _keep(self, number: int, event: Event, stage: Stage) -> None:
        """What line ``number`` means: its problem block's, its own, or its context's (lock held)."""
        latest = self._latest
        if latest is not None and latest[1].last_line - 1 == number and number > latest[0]:
            block = latest[1]
            self._meta.add(number, block.stage, block.severity)  # a traceback's continuation
        elif event.kind not in BATCH_KINDS or event.severity > Severity.INFO:
            self._meta.add(number, event.stage if event.stage is not None else stage, event.severity)
        else:
            self._meta.add(number, context_stage(event.kind, stage), event.severity)

    def fed_through(self, stop: int) -> None:
        """Lines before ``stop`` have all been given to ``feed`` (lock held)."""
        self.fed = max(self.fed, stop)
        self.version += 1

    # -- reading -------------------------------------------------------------------------------------

    def seen_at_or_before(self, line: int) -> tuple[int, Stage | None, Severity] | None:
        """The last line the tracker saw up to ``line``: its number, stage and severity."""
        with self.lock:
            return self._meta.at_or_before(line)

    def seen_with(self, start: int, stop: int, severities: frozenset[Severity]) -> list[int]:
        """Lines in ``[start, stop)`` the tracker saw with one of these severities."""
        with self.lock:
            lo = bisect_right(self._meta.lines, start - 1)
            hi = bisect_right(self._meta.lines, stop - 1)
            return [
                n
                for n, code in zip(self._meta.lines[lo:hi], self._meta.codes[lo:hi], strict=True)
                if Severity(code >> 4) in severities
            ]

    def walker(self) -> MetaWalker:
        return MetaWalker(self._meta)

    def folds(self) -> list[Fold]:
        with self.lock:
            return [
                Fold(first, p.last_line - 1, p.line - 1, p.severity)
                for first, p in sorted(self._blocks.items())
                if p.last_line - 1 > first
            ]

    def with_tracker(self, read: Callable[[StageTracker], T]) -> T:
        """``read(tracker)`` while no other thread feeds it (the tracker's objects change as it reads)."""
        with self.lock:
            return read(self.tracker)

    def first_error(self) -> int | None:
        """The line of the first error or fatal problem in the log (0-based); kept until the next change."""
        with self.lock:
            version, line = self._firsts
            if version != self.version:
                lines = [
                    p.line - 1
                    for s in self.tracker.startups
                    for p in s.problems
                    if p.severity >= Severity.ERROR
                ]
                line = min(lines) if lines else None
                self._firsts = (self.version, line)
            return line
