"""Where each line of a large, growing log file starts, without holding the file in memory.

The index keeps one checkpoint (line number, byte offset) per 64 KiB block: about 16 000 pairs for a
1 GB file. Reading line N seeks to the checkpoint at or before it and reads forward at most a block
plus the lines asked for. The file may grow (new lines are indexed on the next ``update``), and may be
rotated as ``tail -F`` knows it:

- truncated (a relaunch's ``>``, logrotate's copytruncate): the file shrank, or the last bytes indexed
  are no longer there (more was written after the truncation than the file held): restart at byte 0;
- renamed away or deleted: the index keeps the file open and reads it to its end; once a file with
  bytes in it is at the path, the index restarts on that one.

A line longer than ``LINE_CAP`` is read as its head and its tail around a note of its size: memory per
line is bounded however long a line the file holds.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import BinaryIO

BLOCK = 64 << 10  # one checkpoint per block
READ = 1 << 20  # bytes read at a time while indexing
CHUNK_BLOCKS = 128  # blocks per chunk when walking the file (8 MiB)
LINE_CAP = 1 << 20  # a line longer than this is read as its head and tail (bounded memory per line)
LONG_HEAD = 24 << 10  # bytes of such a line kept from its start: what the view shows of it ...
LONG_TAIL = 4 << 10  # ... and from its end
SEEN = 64  # bytes before the indexed end compared at each update, to tell a copytruncate


@dataclass(frozen=True, slots=True)
class Growth:
    """What ``update`` found: lines before and after, and whether the file restarted."""

    reset: bool
    before: int  # complete lines before the update (0 after a reset)
    after: int  # complete lines now
    reason: str | None = None  # of a reset: "truncated" or "replaced" (renamed away or deleted, then new)
    behind: int = field(default=0, compare=False)  # bytes not read yet (past a ``limit``, a cancel)

    @property
    def added(self) -> int:
        return self.after - self.before


def _identity(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


class LineIndex:
    """Line offsets of one file, built incrementally; safe to read while another thread extends it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lines = array("Q", [0])  # checkpoint line numbers (0-based), ascending
        self._offsets = array("Q", [0])  # byte offset where that line starts
        self.complete = 0  # lines that end with a newline
        self.end = 0  # offset just after the last newline indexed
        self.size = 0  # file size when last looked at
        self._last_block = 0  # the block of the last checkpoint
        # The file indexed, held open: a log renamed away or deleted is still read to its end. Readers take
        # a reference before they read, so a switch to another file never closes one under them.
        self._fh: BinaryIO | None = None
        self._seen = b""  # the last bytes before `end`, as indexed

    # -- building ------------------------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        """Lines in the file, counting a last line that has no newline yet."""
        return self.complete + (1 if self.size > self.end else 0)

    def reset(self) -> None:
        self._lines = array("Q", [0])
        self._offsets = array("Q", [0])
        self.complete = 0
        self.end = 0
        self.size = 0
        self._last_block = 0
        self._fh = None
        self._seen = b""

    def _file(self) -> BinaryIO | None:
        """The file indexed (opened at the path when none is held yet), None when there is none."""
        fh = self._fh
        if fh is None:
            try:
                fh = open(self.path, "rb", buffering=0)  # noqa: SIM115  (held across calls)
            except OSError:
                return None
            self._fh = fh
        return fh

    def update(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        *,
        limit: int | None = None,
    ) -> Growth:
        """Index what was appended since the last call (at most about ``limit`` bytes of it: a file that
        grows faster than it is read costs a bounded time per call); restart when the file was truncated
        or replaced."""
        before = self.complete
        reason = self._rotation()
        if reason is not None:
            self.reset()
            before = 0
        fh = self._file()
        if fh is None:
            # Missing (between a relaunch's rename and its create): nothing to read, the next poll looks; a
            # restart found on the way is still news (the lines counted before are gone).
            return Growth(reason is not None, before, before, reason)
        size = os.fstat(fh.fileno()).st_size
        stop = size if limit is None else min(size, self.end + limit)
        self._index(fh, stop, progress, cancelled)
        self._seen = os.pread(fh.fileno(), min(SEEN, self.end), self.end - min(SEEN, self.end))
        return Growth(reason is not None, before, self.complete, reason, max(0, size - self.size))

    def _rotation(self) -> str | None:
        """How the file held was rotated since the last update, if it was and it is time to move on."""
        fh = self._fh
        if fh is None:
            return None
        held = os.fstat(fh.fileno())
        if held.st_size < self.size or not self._same_seen(fh, held.st_size):
            return "truncated"
        try:
            there = os.stat(self.path)
        except OSError:
            return None  # deleted: the held file is read on, what its writer adds included
        if _identity(there) == _identity(held):
            return None
        indexed = self.complete
        # The old file to its end, before the new one (its size now: its writer may write on to it).
        self._index(fh, os.fstat(fh.fileno()).st_size, None, None)
        if self.complete > indexed:
            return None  # its last lines are shown first: the next update moves on
        if there.st_size > 0 or not S_ISREG(there.st_mode):
            return "replaced"
        return None  # the new file is empty: the writer may still write to the old one

    def _same_seen(self, fh: BinaryIO, size: int) -> bool:
        seen = self._seen
        if not seen or size < self.end:
            return True
        return os.pread(fh.fileno(), len(seen), self.end - len(seen)) == seen

    def extend(self, data: bytes) -> None:
        """Index ``data``: whole lines that were just appended to the file at ``end`` (by the caller, who
        has them in hand: no stat, no read)."""
        base = self.end
        self._index_buffer(data, base)
        self.size = max(self.size, base + len(data))

    def _index(
        self,
        fh: BinaryIO,
        size: int,
        progress: Callable[[int, int], None] | None,
        cancelled: Callable[[], bool] | None,
    ) -> None:
        pos = self.end
        while pos < size:
            if cancelled is not None and cancelled():
                return
            buf = os.pread(fh.fileno(), min(READ, size - pos), pos)
            if not buf:
                break
            self._index_buffer(buf, pos)
            pos += len(buf)
            self.size = max(self.size, pos)
            if progress is not None:
                progress(pos, size)
        self.size = max(self.size, size)

    def _index_buffer(self, buf: bytes, base: int) -> None:
        """Count the newlines of ``buf`` (read at offset ``base``), adding a checkpoint per block."""
        lo = 0
        while lo < len(buf):
            hi = min(len(buf), ((base + lo) // BLOCK + 1) * BLOCK - base)  # up to the next block boundary
            first = buf.find(b"\n", lo, hi)
            if first >= 0:
                count = buf.count(b"\n", first, hi)
                block = (base + first) // BLOCK
                if block > self._last_block:
                    self._add_checkpoint(self.complete + 1, base + first + 1)
                    self._last_block = block
                self.complete += count
                self.end = base + buf.rfind(b"\n", first, hi) + 1
            lo = hi

    def _add_checkpoint(self, line: int, offset: int) -> None:
        # Append the offset first: a reader bisects `_lines` and then indexes `_offsets`.
        self._offsets.append(offset)
        self._lines.append(line)

    # -- reading -------------------------------------------------------------------------------------

    def checkpoint(self, line: int) -> tuple[int, int]:
        """The last checkpoint at or before ``line``: (its line number, its offset)."""
        i = bisect_right(self._lines, line) - 1
        return self._lines[i], self._offsets[i]

    def checkpoint_at(self, offset: int) -> tuple[int, int]:
        """The last checkpoint at or before byte ``offset``: (its line number, its offset)."""
        i = min(bisect_right(self._offsets, offset), len(self._lines)) - 1  # offsets are appended first
        return self._lines[i], self._offsets[i]

    def read(self, start: int, stop: int) -> list[bytes]:
        """Lines ``[start, stop)`` as bytes without their newline (fewer at the end of the file); a line
        longer than ``LINE_CAP`` as its head and tail (``capped``)."""
        stop = min(stop, self.line_count)
        if start >= stop:
            return []
        line, offset = self.checkpoint(start)
        fh = self._file()
        if fh is None:
            return []
        out: list[bytes] = []
        for number, raw in _lines_from(fh, offset, line, stop):
            if number >= start:
                out.append(raw)
        return out

    def read_many(self, lines: list[int]) -> dict[int, bytes]:
        """Arbitrary lines (a filtered screen), read in runs of consecutive numbers."""
        out: dict[int, bytes] = {}
        for first, last in _runs(sorted(set(lines))):
            for n, raw in enumerate(self.read(first, last + 1), start=first):
                out[n] = raw
        return out

    def tail(self, count: int, *, max_bytes: int = 1 << 20) -> list[bytes]:
        """The last ``count`` lines, read from the end of the file (no index needed)."""
        try:
            with self.path.open("rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                start = max(0, size - max_bytes)
                fh.seek(start)
                data = fh.read(size - start)
        except OSError:
            return []  # gone between the stat and the open: nothing to preview
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if start > 0 and lines:
            lines.pop(0)  # begins mid-line
        return lines[-count:]

    def chunks(self, start: int, stop: int) -> Iterator[tuple[int, bytes]]:
        """Whole-line chunks of about 8 MiB from the checkpoint at or before ``start`` up to ``stop``.

        Chunks run from checkpoint to checkpoint, so each one's first line number is known without
        counting newlines; the last one ends after the last newline indexed."""
        stop = min(stop, self.complete)
        i = bisect_right(self._lines, start) - 1
        fh = self._file()
        if fh is None:
            return
        while i < len(self._lines) and self._lines[i] < stop:
            j = i + CHUNK_BLOCKS
            hi = self._offsets[j] if j < len(self._offsets) else self.end
            lo = self._offsets[i]
            if hi - lo > 2 * CHUNK_BLOCKS * BLOCK:  # a giant line inside: read it capped, not whole
                yield from _capped_chunks(fh, lo, self._lines[i], min(stop, self._line_at_or_after(j)))
            else:
                yield self._lines[i], os.pread(fh.fileno(), hi - lo, lo)
            i = j

    def _line_at_or_after(self, checkpoint: int) -> int:
        return self._lines[checkpoint] if checkpoint < len(self._lines) else self.complete

    def chunks_backward(self, stop: int) -> Iterator[tuple[int, bytes]]:
        """Whole-line chunks covering lines ``[0, stop)``, last chunk first."""
        stop = min(stop, self.complete)
        marks = [self._lines[i] for i in range(0, bisect_right(self._lines, stop), CHUNK_BLOCKS)]
        hi = stop
        for lo in reversed(marks):
            if lo >= hi:
                continue
            yield lo, b"".join(raw + b"\n" for raw in self.read(lo, hi))
            hi = lo


def _runs(numbers: list[int]) -> Iterator[tuple[int, int]]:
    if not numbers:
        return
    first = last = numbers[0]
    for n in numbers[1:]:
        if n == last + 1 and n - first < 4096:
            last = n
            continue
        yield first, last
        first = last = n
    yield first, last


def capped(head: bytes, size: int, tail: bytes) -> bytes:
    """A line of ``size`` bytes too long to hold, as its head and tail around a note of its size."""
    note = f" … [line of {size:,} bytes: {size - len(head) - len(tail):,} not shown] … ".encode()
    return head + note + tail


class _LongLine:
    """The bytes of one line as they are read, keeping no more than its head and its tail."""

    def __init__(self) -> None:
        self.head = b""
        self.tail = b""
        self.size = 0
        self.long = False  # over the cap: only the ends are kept

    def add(self, data: bytes) -> None:
        if not self.size:
            data = data.lstrip(b"\0")  # a copytruncate's NUL hole before the line is not text
        self.size += len(data)
        if not self.long:
            self.head += data
            if len(self.head) <= LINE_CAP:
                return
            self.long = True
            data, self.head = self.head[LONG_HEAD:], self.head[:LONG_HEAD]
        self.tail = (self.tail + data[-LONG_TAIL:])[-LONG_TAIL:]

    def take(self) -> bytes:
        line = capped(self.head, self.size, self.tail) if self.long else self.head
        self.head, self.tail, self.size, self.long = b"", b"", 0, False
        return line


def _lines_from(fh: BinaryIO, offset: int, line: int, stop: int) -> Iterator[tuple[int, bytes]]:
    """(number, line) from line ``line`` at byte ``offset`` up to line ``stop``, each one bounded; the
    file's last line is given even without its newline."""
    rest = _LongLine()
    while line < stop:
        buf = os.pread(fh.fileno(), READ // 4, offset)
        if not buf:
            if rest.size:
                yield line, rest.take()
            return
        offset += len(buf)
        parts = buf.split(b"\n")
        if len(parts) == 1:
            rest.add(buf)
            continue
        rest.add(parts[0])
        yield line, rest.take()
        line += 1
        for part in parts[1:-1]:
            if line >= stop:
                return
            yield line, part.lstrip(b"\0")  # shorter than one read: never over the cap
            line += 1
        rest.add(parts[-1])


def _capped_chunks(fh: BinaryIO, offset: int, line: int, stop: int) -> Iterator[tuple[int, bytes]]:
    """Whole-line chunks of lines ``[line, stop)`` from ``offset``, giant lines capped."""
    first, out, size = line, [], 0
    for number, raw in _lines_from(fh, offset, line, stop):
        out.append(raw + b"\n")
        size += len(raw) + 1
        if size >= CHUNK_BLOCKS * BLOCK:
            yield first, b"".join(out)
            first, out, size = number + 1, [], 0
    if out:
        yield first, b"".join(out)
