"""Where each line of a large, growing log file starts, without holding the file in memory.

The index keeps one checkpoint (line number, byte offset) per 64 KiB block: about 16 000 pairs for a
1 GB file. Reading line N seeks to the checkpoint at or before it and reads forward at most a block
plus the lines asked for. The file may grow (new lines are indexed on the next ``update``), and may be
truncated or replaced by a relaunch (a new inode, or a size smaller than what was indexed): the index
then restarts from the new file's first byte.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

BLOCK = 64 << 10  # one checkpoint per block
READ = 1 << 20  # bytes read at a time while indexing
CHUNK_BLOCKS = 128  # blocks per chunk when walking the file (8 MiB)


@dataclass(frozen=True, slots=True)
class Growth:
    """What ``update`` found: lines before and after, and whether the file restarted."""

    reset: bool
    before: int  # complete lines before the update (0 after a reset)
    after: int  # complete lines now

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
        self.identity: tuple[int, int] | None = None
        self._last_block = 0  # the block of the last checkpoint

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
        self.identity = None
        self._last_block = 0

    def update(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Growth:
        """Index what was appended since the last call; restart when the file was truncated or replaced."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            # Between a relaunch's unlink and its create: nothing to read yet, the next poll finds it.
            return Growth(False, self.complete, self.complete)
        before = self.complete
        reset = self.identity is not None and (_identity(st) != self.identity or st.st_size < self.size)
        if reset:
            self.reset()
            before = 0
        self.identity = _identity(st)
        self._index(st.st_size, progress, cancelled)
        return Growth(reset, before, self.complete)

    def extend(self, data: bytes) -> None:
        """Index ``data``: whole lines that were just appended to the file at ``end`` (by the caller, who
        has them in hand: no stat, no read)."""
        base = self.end
        self._index_buffer(data, base)
        self.size = max(self.size, base + len(data))

    def _index(
        self,
        size: int,
        progress: Callable[[int, int], None] | None,
        cancelled: Callable[[], bool] | None,
    ) -> None:
        with self.path.open("rb") as fh:
            fh.seek(self.end)
            pos = self.end
            while pos < size:
                if cancelled is not None and cancelled():
                    return
                buf = fh.read(min(READ, size - pos))
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

    def read(self, start: int, stop: int) -> list[bytes]:
        """Lines ``[start, stop)`` as bytes without their newline (fewer at the end of the file)."""
        stop = min(stop, self.line_count)
        if start >= stop:
            return []
        line, offset = self.checkpoint(start)
        out: list[bytes] = []
        with self.path.open("rb") as fh:
            fh.seek(offset)
            rest = b""
            while line < stop:
                buf = fh.read(READ // 4)
                if not buf:
                    if rest and line >= start:
                        out.append(rest)  # the last line, not yet ended by a newline
                    break
                parts = (rest + buf).split(b"\n")
                rest = parts.pop()
                for part in parts:
                    if line >= start:
                        out.append(part)
                    line += 1
                    if line >= stop:
                        break
        return out[: stop - start]

    def read_many(self, lines: list[int]) -> dict[int, bytes]:
        """Arbitrary lines (a filtered screen), read in runs of consecutive numbers."""
        out: dict[int, bytes] = {}
        for first, last in _runs(sorted(set(lines))):
            for n, raw in enumerate(self.read(first, last + 1), start=first):
                out[n] = raw
        return out

    def tail(self, count: int, *, max_bytes: int = 1 << 20) -> list[bytes]:
        """The last ``count`` lines, read from the end of the file (no index needed)."""
        with self.path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            start = max(0, size - max_bytes)
            fh.seek(start)
            data = fh.read(size - start)
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
        with self.path.open("rb") as fh:
            while i < len(self._lines) and self._lines[i] < stop:
                j = i + CHUNK_BLOCKS
                hi = self._offsets[j] if j < len(self._offsets) else self.end
                lo = self._offsets[i]
                fh.seek(lo)
                yield self._lines[i], fh.read(hi - lo)
                i = j

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
