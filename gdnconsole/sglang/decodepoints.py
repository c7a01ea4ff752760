"""Throughput and speculative accept length over time, from a log's ``Decode batch`` lines (FACTS §2.4).

Only the newest points matter for a live sparkline, and a catch-up read can bring a gigabyte of serving
log at once: the lines are found from the end of each chunk backwards, and at most ``limit`` are parsed.
"""

from __future__ import annotations

from dataclasses import dataclass

from gdnconsole.sglang import events, logline

NEEDLE = b"Decode batch"


@dataclass(frozen=True, slots=True)
class DecodePoint:
    time: float | None  # the line's timestamp (seconds; only differences matter)
    gen_throughput: float  # tokens/s over the last decode-log interval
    accept_len: float | None  # speculative accept length (None without speculation)
    running: int | None  # running requests
    queued: int | None = None  # requests waiting
    token_usage: float | None = None  # the KV pool's (0.5.23 says "full token usage" on hybrid models)
    mamba_usage: float | None = None  # the mamba state pool's (hybrid models)
    swa_usage: float | None = None  # the sliding-window pool's (hybrid SWA models)


def last_points(data: bytes, limit: int) -> list[DecodePoint]:
    """The last ``limit`` decode points in ``data`` (whole lines), oldest first; TP0's lines only where
    several ranks log (each rank logs the same batch)."""
    found: list[DecodePoint] = []
    end = len(data)
    while len(found) < limit:
        hit = data.rfind(NEEDLE, 0, end)
        if hit < 0:
            break
        start = data.rfind(b"\n", 0, hit) + 1
        stop = data.find(b"\n", hit)
        end = start
        point = parse(data[start : stop if stop >= 0 else len(data)].decode("utf-8", errors="replace"))
        if point is not None:
            found.append(point)
    found.reverse()
    return found


def parse(text: str) -> DecodePoint | None:
    line = logline.parse(text)
    rank = line.rank or "TP0"  # no prefix: the only rank
    if not line.message.startswith(NEEDLE.decode()) or logline.tp_index(rank) != 0:  # "TP0 EP0", "DP1 TP0"…
        return None
    numbers = events.numbers_of("decode_batch", line.message)
    rate = numbers.get("gen_throughput")
    if rate is None:
        return None
    running, queued = numbers.get("running_req"), numbers.get("queue_req")
    return DecodePoint(
        time=line.time,
        gen_throughput=rate,
        accept_len=numbers.get("accept_len"),
        running=int(running) if running is not None else None,
        queued=int(queued) if queued is not None else None,
        token_usage=numbers.get("token_usage"),
        mamba_usage=numbers.get("mamba_usage"),
        swa_usage=numbers.get("swa_usage"),
    )
