"""tqdm progress bars as they land in a redirected log: ``\\r``-separated redraws on stderr, no newline
until the bar closes. Two shapes SGLang uses: the checkpoint loader's custom ``bar_format`` and tqdm's
default (10-cell bar when the output is not a terminal)."""

from __future__ import annotations

import time

from gdnsim.server.logwriter import write_raw

BLOCKS = " ▏▎▍▌▋▊▉█"
LOADER_DESC = "Loading safetensors checkpoint shards"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes:02d}:{secs:02d}"


def _timing(n: int, total: int, elapsed: float) -> str:
    if n == 0 or elapsed <= 0:
        return f"[{_clock(elapsed)}<?, ?it/s]"
    rate = n / elapsed
    return f"[{_clock(elapsed)}<{_clock((total - n) / rate)}, {rate:5.2f}it/s]"


def loader_text(n: int, total: int, elapsed: float) -> str:
    """``Loading safetensors checkpoint shards:  45% Completed | 5/11 [00:03<00:04,  1.52it/s]``."""
    pct = 100 * n // total if total else 100
    return f"{LOADER_DESC}: {pct:3d}% Completed | {n}/{total} {_timing(n, total, elapsed)}"


def _cells(fraction: float, width: int = 10) -> str:
    eighths = int(fraction * width * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (BLOCKS[part] if full < width else "")
    return bar.ljust(width)


def default_text(desc: str, n: int, total: int, elapsed: float) -> str:
    """``Capturing batches (bs=4 avail_mem=16.20 GB):  40%|████      | 4/10 [00:01<00:01,  3.50it/s]``."""
    fraction = n / total if total else 1.0
    return f"{desc}: {int(fraction * 100):3d}%|{_cells(fraction)}| {n}/{total} {_timing(n, total, elapsed)}"


class Bar:
    """A bar redrawn with ``\\r`` on stderr; ``close()`` ends its line."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.start = time.monotonic()

    def draw(self, text: str) -> None:
        write_raw("\r" + text)

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def close(self) -> None:
        write_raw("\n")
