"""Read a whole SGLang log fast: find the few lines that matter among millions of batch lines.

A long serving run is almost all ``Decode batch`` / ``Prefill batch`` lines and uvicorn access lines;
everything the summary needs (startups, stages, warnings, the fatal error) sits in the rare other lines.
So each block of the file is first checked with C-speed counts: when its number of lines equals its
number of batch and access lines, the block holds nothing else and only its first and last lines are
kept (the last one carries the latest throughput). A block that does hold other lines is halved until
the pieces are small, and only those pieces are split into lines in Python. With DP or PP every rank
logs its own batch lines: the first batch line of each rank prefix is kept too, so that no rank hides
inside a run (a block with a rank not seen yet is split). On a multi-core machine the two halves of a
large file are scanned by two processes.
"""

from __future__ import annotations

import mmap
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from gdnconsole.errors import ConsoleError
from gdnconsole.logs.lineindex import LINE_CAP, LONG_HEAD, LONG_TAIL, READ, capped

FastScan = Callable[[bytes, int, int], tuple[int, list[tuple[int, int, int]]]]
try:  # built from _linescan.c when a compiler was there at install time (pyproject: optional)
    from gdnconsole.logs import _linescan

    FAST_SCAN: FastScan | None = _linescan.scan
except ImportError:
    FAST_SCAN = None

CHUNK = 8 << 20  # bytes read at a time
WINDOW = 64 << 20  # bytes of the file mapped at a time by the C scan
LEAF = 16 << 10  # ranges this small are split into lines directly
PARALLEL_MIN = 256 << 20  # files this large are scanned by two processes

DECODE = b"] Decode batch"  # the batch line that carries throughput and accept length
PREFILL = b"] Prefill batch"
ACCESS = b'HTTP/1.1"'  # ends in a rarely repeated byte: the count skips faster than with the space
# The batch-line needle differs by version dialect (FACTS §2.3): comma ≥0.5.5, "[N]," 0.5.4, period ≤0.5.3.
BATCH_FORMS = (b"batch, #", b"batch [", b"batch. #")
# The rank prefix of a frame ("DP1 TP1"; empty on the main process and at tp = 1, FACTS §1.2). With DP or
# PP each rank logs its own batch lines: the first batch line of each rank is kept, so no rank is hidden.
_RANK_KEY = re.compile(rb"\[[^\]A-Z\n]{0,40}([A-Z][^\]\n]{0,80})?\] ")
_BATCH_KEYS = re.compile(rb"^\[[^\]A-Z\n]{0,40}([A-Z][^\]\n]{0,80})?\] (?:Decode|Prefill) batch", re.M)


class LogReadError(ConsoleError):
    """The file cannot be read as a log (missing, a directory, binary)."""


@dataclass
class ScanResult:
    lines: int  # physical lines in the file (a last line without a newline counts)
    records: list[tuple[int, bytes]]  # (1-based line number, line without newline), in file order


def _batch_needle(data: bytes) -> bytes | None:
    """The batch-line form this log uses (for the pure-Python walker; the C pass needs none)."""
    for marker in (b"Decode batch", b"Prefill batch"):
        at = data.find(marker)
        if at >= 0:
            tail = data[at + len(marker) - 5 : at + len(marker) + 3]
            for form in BATCH_FORMS:
                if tail.startswith(form):
                    return form
    return None


class _Walker:
    """Collects the lines of one buffer that are not batch or access lines."""

    def __init__(self, buf: bytes, first_line: int, needle: bytes | None) -> None:
        self.buf = buf
        self.line = first_line  # number of the line that starts at the next unread range
        self.needle = needle
        self.records: list[tuple[int, bytes]] = []
        self.ranks: set[bytes] = set()  # the rank prefixes of the batch lines kept so far

    def _new_rank(self, raw: bytes) -> bool:
        """Whether batch line ``raw`` is the first of its rank (and remember its rank)."""
        m = _RANK_KEY.match(raw)
        key = (m[1] or b"") if m else b""
        if key in self.ranks:
            return False
        self.ranks.add(key)
        return True

    def boring_count(self, lo: int, hi: int) -> int:
        n = self.buf.count(ACCESS, lo, hi)
        if self.needle is not None:
            n += self.buf.count(self.needle, lo, hi)
        return n

    def walk(self, lo: int, hi: int, lines: int, boring: int) -> None:
        """``[lo, hi)`` holds whole lines: ``lines`` newlines, ``boring`` of them batch/access lines."""
        if lines == 0:
            return
        if boring == lines and self._known_ranks(lo, hi):
            self._keep_ends(lo, hi, lines)
        elif boring == 0 or hi - lo <= LEAF:
            self._split(lo, hi)
        else:
            mid = self.buf.find(b"\n", (lo + hi) // 2, hi) + 1
            if mid <= lo or mid >= hi:
                self._split(lo, hi)
                return
            left_lines = self.buf.count(b"\n", lo, mid)
            left_boring = self.boring_count(lo, mid)
            self.walk(lo, mid, left_lines, left_boring)
            self.walk(mid, hi, lines - left_lines, boring - left_boring)

    def _known_ranks(self, lo: int, hi: int) -> bool:
        """Whether every batch line of ``[lo, hi)`` is of a rank seen already (else it is split)."""
        keys = {m[1] or b"" for m in _BATCH_KEYS.finditer(self.buf, lo, hi)}
        return keys <= self.ranks

    def _keep_ends(self, lo: int, hi: int, lines: int) -> None:
        """A range of batch/access lines only: keep the lines that tell its story (see ``_end_run``)."""
        buf = self.buf
        first_end = buf.find(b"\n", lo, hi)
        self.records.append((self.line, buf[lo:first_end]))
        if lines > 1:
            last_start = buf.rfind(b"\n", lo, hi - 1) + 1
            found = {
                self._line_at(lo, hi, at)
                for at in (
                    buf.find(PREFILL, first_end, last_start),
                    buf.find(DECODE, first_end, last_start),
                    buf.rfind(DECODE, first_end, last_start),
                )
                if at >= 0
            }
            self.records.extend(sorted(found))
            self.records.append((self.line + lines - 1, buf[last_start : hi - 1]))
        self.line += lines

    def _line_at(self, lo: int, hi: int, at: int) -> tuple[int, bytes]:
        """The numbered line of the range ``[lo, hi)`` that holds byte ``at``."""
        start = self.buf.rfind(b"\n", lo, at) + 1
        return self.line + self.buf.count(b"\n", lo, start), self.buf[start : self.buf.find(b"\n", at, hi)]

    def _split(self, lo: int, hi: int) -> None:
        """Keep every other line, and of each run of batch/access lines the ones ``_end_run`` names."""
        needle = self.needle
        records = self.records
        run: list[tuple[int, bytes]] = []  # the run's lines after its first: only a few are kept
        in_run = False
        for raw in self.buf[lo : hi - 1].split(b"\n"):
            access = ACCESS in raw
            if access or (needle is not None and needle in raw):
                new_rank = not access and self._new_rank(raw)
                if in_run and new_rank:  # a rank's first batch line starts a run of its own
                    _end_run(records, run)
                    run = []
                    records.append((self.line, raw))
                elif in_run:
                    run.append((self.line, raw))
                else:
                    records.append((self.line, raw))
                    in_run = True
            else:
                _end_run(records, run)
                run = []
                in_run = False
                records.append((self.line, raw))
            self.line += 1
        _end_run(records, run)


def _end_run(records: list[tuple[int, bytes]], run: list[tuple[int, bytes]]) -> None:
    """Of a run of batch/access lines (after its first line, kept already) keep: the first Prefill and
    first Decode line (in an excerpt that begins mid-stream they prove the server was serving), the last
    Decode line (the latest throughput and accept length) and the last line."""
    if not run:
        return
    prefills = [line for line in run if PREFILL in line[1]]
    decodes = [line for line in run if DECODE in line[1]]
    keep = {run[-1], *prefills[:1], *decodes[:1], *decodes[-1:]}
    records.extend(sorted(keep))


def scan_buffer(
    buf: bytes, first_line: int, needle: bytes | None = None
) -> tuple[int, list[tuple[int, bytes]], bytes | None]:
    """The lines of ``buf`` (whole lines, ending with a newline) that matter, numbered from
    ``first_line``; returns (lines in buf, records, the batch needle to pass to the next call)."""
    if needle is None and FAST_SCAN is None:  # only the pure-Python walker needs it
        needle = _batch_needle(buf)
    lines, records = _lines_that_matter(buf, len(buf), first_line, needle)
    return lines, records, needle


def _lines_that_matter(
    buf: bytes, cut: int, first_line: int, needle: bytes | None
) -> tuple[int, list[tuple[int, bytes]]]:
    """(lines in ``buf[:cut]``, records): one C pass when the extension is built, else the walker."""
    if FAST_SCAN is not None:
        count, spans = FAST_SCAN(buf, 0, cut)
        return count, [(first_line + index, _bounded(buf, start, stop)) for index, start, stop in spans]
    walker = _Walker(buf, first_line, needle)
    count = buf.count(b"\n", 0, cut)
    walker.walk(0, cut, count, walker.boring_count(0, cut))
    return count, walker.records


def _scan_span(
    path: str, start: int, end: int, cancelled: Callable[[], bool] | None = None
) -> tuple[int, list[tuple[int, bytes]]]:
    """Scan bytes ``[start, end)`` (whole lines); line numbers relative to the span (1-based). Raises
    ScanCancelled between two reads once ``cancelled()``."""
    if FAST_SCAN is not None and end > start:
        try:
            return _scan_span_mapped(FAST_SCAN, path, start, end, cancelled)
        except _Unmappable:
            pass  # procfs, sysfs, some FUSE file systems cannot map a file: it is read instead
    records: list[tuple[int, bytes]] = []
    line = 1
    needle: bytes | None = None
    carry = b""
    with open(path, "rb") as fh:
        pos = start  # where the next block is read
        while pos < end:
            _check(cancelled)
            block = os.pread(fh.fileno(), min(CHUNK, end - pos), pos)
            if not block:  # shorter than its size said (a sysfs file): its last line is ended here
                end = pos
                if carry:
                    count, found = _lines_that_matter(carry + b"\n", len(carry) + 1, line, needle)
                    records.extend((n, _bounded(raw, 0, len(raw))) for n, raw in found)
                    line += count
                break
            pos += len(block)
            buf = carry + block
            cut = buf.rfind(b"\n") + 1
            if cut == 0 and len(buf) > LINE_CAP:  # a giant line: its ends only, not its whole
                pos = _giant_line(fh, pos - len(buf), end, line, records)
                line, carry = line + 1, b""
                continue
            if pos >= end and cut < len(buf):
                buf += b"\n"  # the file's last line has no newline
                cut = len(buf)
            carry = buf[cut:]
            if needle is None:
                needle = _batch_needle(buf)
            count, found = _lines_that_matter(buf, cut, line, needle)
            records.extend((n, _bounded(raw, 0, len(raw))) for n, raw in found)
            line += count
    return line - 1, records


def _scan_span_mapped(
    scan_fn: FastScan, path: str, start: int, end: int, cancelled: Callable[[], bool] | None = None
) -> tuple[int, list[tuple[int, bytes]]]:
    """The C scan straight over the mapped file, window by window: no read and no copy, and no more of the
    file mapped (so counted in our memory) at once than one window. A last line needs no newline."""
    records: list[tuple[int, bytes]] = []
    line = 1
    pos = start
    with open(path, "rb") as fh:
        end = min(end, os.fstat(fh.fileno()).st_size)
        while pos < end:
            _check(cancelled)
            base = pos - pos % mmap.ALLOCATIONGRANULARITY
            length = min(end, pos + WINDOW) - base
            try:
                mm = mmap.mmap(fh.fileno(), length, access=mmap.ACCESS_READ, offset=base)
            except OSError as exc:
                raise _Unmappable(exc) from exc
            with mm:
                stop = length
                if base + length < end:  # not the last window: end it after its last whole line
                    stop = mm.rfind(b"\n", pos - base, length) + 1
                    if stop == 0:  # one line longer than the window: read its ends, map none of it
                        pos = _giant_line(fh, pos, end, line, records)
                        line += 1
                        continue
                count, spans = scan_fn(mm, pos - base, stop)  # type: ignore[arg-type]  # a bytes-like buffer
                records.extend((line + index, _bounded(mm, s, e)) for index, s, e in spans)
            line += count
            pos = base + stop
    return line - 1, records


class ScanCancelled(Exception):
    """The scan was told to stop (the view that asked for it quit)."""


def _check(cancelled: Callable[[], bool] | None) -> None:
    if cancelled is not None and cancelled():
        raise ScanCancelled


class _Unmappable(Exception):
    """The file system cannot map this file (procfs, sysfs, some FUSE): it is read instead."""


_NOT_NUL = re.compile(rb"[^\x00]")


def _giant_line(fh: BinaryIO, pos: int, end: int, line: int, records: list[tuple[int, bytes]]) -> int:
    """Record the line at ``pos`` that no window holds whole (as its head and tail); return where the
    next line starts."""
    at, text = pos, -1  # where the newline is, and where the text starts (after a NUL hole)
    while at < end:
        block = os.pread(fh.fileno(), min(READ, end - at), at)
        if text < 0 and (first := _NOT_NUL.search(block)) is not None:
            text = at + first.start()
        found = block.find(b"\n")
        if found >= 0:
            at += found
            break
        at += READ
    at = min(at, end)
    pos = max(pos, text) if text >= 0 else at
    if at - pos <= LINE_CAP:
        records.append((line, os.pread(fh.fileno(), at - pos, pos)))
    else:
        head, tail = os.pread(fh.fileno(), LONG_HEAD, pos), os.pread(fh.fileno(), LONG_TAIL, at - LONG_TAIL)
        records.append((line, capped(head, at - pos, tail)))
    return at + 1


def _bounded(buf: mmap.mmap | bytes, start: int, stop: int) -> bytes:
    """The line ``buf[start:stop]``; a giant one as its head and tail (memory per line stays bounded)."""
    text = _NOT_NUL.search(buf, start, stop)  # a copytruncate's NUL hole before the line is not text
    start = text.start() if text is not None else stop
    if stop - start <= LINE_CAP:
        return buf[start:stop]
    return capped(buf[start : start + LONG_HEAD], stop - start, buf[stop - LONG_TAIL : stop])


def _split_point(path: Path, size: int) -> int:
    """A line boundary near the middle of the file."""
    with path.open("rb") as fh:
        fh.seek(size // 2)
        rest = fh.read(1 << 20)
    at = rest.find(b"\n")
    return size if at < 0 else size // 2 + at + 1


def check_readable(path: Path) -> int:
    """The file's size, or a LogReadError saying why it cannot be read as a log."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise LogReadError(f"{path}: no such file") from None
    except OSError as exc:
        raise LogReadError(f"{path}: {exc.strerror}") from None
    if path.is_dir():
        raise LogReadError(f"{path}: is a directory, not a log file")
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read, a device would never end
        raise LogReadError(f"{path}: is not a regular file (a FIFO, device or socket), not a log file")
    try:
        with path.open("rb") as fh:
            head = _text_head(fh)
    except OSError as exc:
        raise LogReadError(f"{path}: cannot read: {exc.strerror}") from None
    if _looks_binary(head):
        raise LogReadError(f"{path}: looks like a binary file, not a text log")
    return st.st_size


def text_head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of text of ``path``, after a copytruncate's NUL hole (raises OSError)."""
    with path.open("rb") as fh:
        return _text_head(fh, size)


def _text_head(fh: BinaryIO, keep: int = 8192) -> bytes:
    """The first ``keep`` bytes of text, after the NUL hole that a copytruncate leaves when the writer
    lacks O_APPEND (a sparse hole is skipped without reading it)."""
    fd = fh.fileno()
    try:
        pos = os.lseek(fd, 0, os.SEEK_DATA)
    except OSError:  # no data at all, or a file system that cannot say
        pos = 0
    while True:
        block = os.pread(fd, READ, pos)
        text = block.lstrip(b"\0")
        if text or not block:
            return text[:keep]
        pos += len(block)


def _looks_binary(head: bytes) -> bool:
    """NUL bytes or mostly non-text bytes at the start: not a log (invalid UTF-8 alone is fine)."""
    if b"\x00" in head:
        return True
    if not head:
        return False
    controls = sum(1 for b in head if b < 9 or 13 < b < 32)
    return controls > len(head) // 10


def scan(
    path: Path, *, parallel: bool | None = None, cancelled: Callable[[], bool] | None = None
) -> ScanResult:
    """All lines of ``path`` that are not batch or access lines, plus the ends of each run of those.
    ``cancelled`` (a scan in this process only): checked between reads, ScanCancelled once it is true."""
    size = check_readable(path)
    try:
        return _scan(path, size, parallel, cancelled)
    except OSError as exc:  # gone, or failing, after the check (EIO on a bad disk): one line, no traceback
        raise LogReadError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _scan(path: Path, size: int, parallel: bool | None, cancelled: Callable[[], bool] | None) -> ScanResult:
    if parallel is None:
        parallel = size >= PARALLEL_MIN and (os.cpu_count() or 1) > 1 and cancelled is None
    if not parallel:
        lines, records = _scan_span(str(path), 0, size, cancelled)
        return ScanResult(lines, records)
    mid = _split_point(path, size)
    import multiprocessing  # here: every session imports this module, few files are this big
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        first = pool.submit(_scan_span, str(path), 0, mid)
        second = pool.submit(_scan_span, str(path), mid, size)
        lines1, records1 = first.result()
        lines2, records2 = second.result()
    records = records1 + [(n + lines1, raw) for n, raw in records2]
    return ScanResult(lines1 + lines2, records)


def decoded(records: list[tuple[int, bytes]]) -> Iterator[tuple[int, str]]:
    for number, raw in records:
        yield number, raw.decode("utf-8", errors="replace")
