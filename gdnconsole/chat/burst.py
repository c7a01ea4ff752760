"""Burst mode: N copies of one prompt sent at once, and the table that answers "how fast is this
configuration": TTFT and per-request tokens/s percentiles, total tokens/s over the burst's wall time,
and the errors (each distinct message once, with its count)."""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gdnconsole.chat.model import ChatError, ChatRequest, ChatResult, rounded

if TYPE_CHECKING:
    from gdnconsole.chat.client import ChatClient

PERCENTILES = (50, 90, 99)


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile (the value a reader can find in the list); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


@dataclass
class BurstResult:
    requests: int
    wall_ms: float
    results: list[ChatResult] = field(default_factory=list)

    @property
    def ok(self) -> list[ChatResult]:
        return [r for r in self.results if r.ok]

    @property
    def errors(self) -> Counter[str]:
        return Counter(r.error or "failed" for r in self.results if not r.ok)

    def ttft(self, pct: float) -> float | None:
        return percentile([r.ttft_ms for r in self.ok if r.ttft_ms is not None], pct)

    def rate(self, pct: float) -> float | None:
        return percentile([r.tokens_per_s for r in self.ok if r.tokens_per_s is not None], pct)

    def total(self, pct: float) -> float | None:
        return percentile([r.total_ms for r in self.ok], pct)

    @property
    def completion_tokens(self) -> int:
        return sum(r.completion_tokens or 0 for r in self.ok)

    @property
    def total_tokens_per_s(self) -> float | None:
        """Every answer's tokens over the burst's wall time: the server's throughput at this load."""
        return self.completion_tokens / (self.wall_ms / 1000.0) if self.wall_ms > 0 and self.ok else None

    def to_json(self) -> dict[str, Any]:
        def table(get: Callable[[float], float | None]) -> dict[str, float | None]:
            return {f"p{p}": rounded(get(p)) for p in PERCENTILES}

        return {
            "requests": self.requests,
            "ok": len(self.ok),
            "failed": self.requests - len(self.ok),
            "wall_ms": round(self.wall_ms, 1),
            "ttft_ms": table(self.ttft),
            "tokens_per_s": table(self.rate),
            "total_ms": table(self.total),
            "completion_tokens": self.completion_tokens,
            "total_tokens_per_s": rounded(self.total_tokens_per_s),
            "errors": [{"error": message, "count": count} for message, count in self.errors.most_common()],
        }


async def burst(
    client: ChatClient,
    request: ChatRequest,
    count: int,
    on_result: Callable[[ChatResult], None] | None = None,
) -> BurstResult:
    """Send ``count`` copies of ``request`` at once; ``on_result`` hears each answer as it completes."""
    if count < 1:
        raise ValueError("a burst needs at least one request")
    if request.model is None:
        # One model lookup for the burst, so that all copies start together.
        try:
            request = replace(request, model=await client.model_id())
        except ChatError as exc:
            failed = [ChatResult(status=exc.status, error=str(exc)) for _ in range(count)]
            return BurstResult(count, 0.0, failed)

    async def one() -> ChatResult:
        result = await client.chat(request)
        if on_result is not None:
            on_result(result)
        return result

    started = time.monotonic()
    results = await asyncio.gather(*(one() for _ in range(count)))
    return BurstResult(count, (time.monotonic() - started) * 1000.0, list(results))
