"""Measuring one running server: for each batch size, the prompt set sent in waves of that many requests
at once (streamed, temperature 0, fixed order), and the figures of the answers."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gdnconsole.chat.burst import percentile
from gdnconsole.chat.model import ChatRequest, ChatResult, Timeouts
from gdnconsole.host.session import HostSession
from gdnconsole.tune.prompts import PromptSet
from gdnconsole.tune.results import BatchFigures

Say = Callable[[str], None]


@dataclass(frozen=True)
class FixedLength(ChatRequest):
    """A request whose answer is exactly ``max_tokens`` long (SGLang's ``ignore_eos``, as its
    bench_serving sends): every combination decodes the same number of tokens per prompt."""

    def body(self, model: str) -> dict[str, Any]:
        return {**super().body(model), "ignore_eos": True}


@dataclass(frozen=True)
class Load:
    prompts: PromptSet
    batches: tuple[int, ...]
    requests: int  # per batch size (rounded up to whole waves)
    max_tokens: int
    answer_timeout: float = 120.0


def waves(load: Load, batch: int) -> list[list[str]]:
    """The prompts of each wave: the set in order, cycled, ``batch`` at a time; two waves at least, so
    that every batch size has a spread over repeats."""
    total = max(load.requests, 2 * batch)
    total += -total % batch
    prompts = [load.prompts.prompts[i % len(load.prompts.prompts)] for i in range(total)]
    return [prompts[i : i + batch] for i in range(0, total, batch)]


@dataclass
class Measured:
    figures: dict[int, BatchFigures]
    busy_s: float  # wall time spent with requests in flight (the bench takes it out of the overhead)


async def measure(session: HostSession, load: Load, say: Say) -> Measured:
    client = await session.endpoint.chat_client(Timeouts(answer=load.answer_timeout))
    figures: dict[int, BatchFigures] = {}
    busy = 0.0
    async with client:
        model = await client.model_id()
        for batch in load.batches:
            say(f"batch {batch}: {load.requests} requests, {batch} at a time")
            results: list[ChatResult] = []
            rates: list[float] = []
            wall = 0.0
            for wave in waves(load, batch):
                requests = [
                    FixedLength(p, max_tokens=load.max_tokens, temperature=0.0, model=model) for p in wave
                ]
                started = time.monotonic()
                answers = await asyncio.gather(*(client.chat(r) for r in requests))
                elapsed = time.monotonic() - started
                wall += elapsed
                results += answers
                tokens = sum(a.completion_tokens or 0 for a in answers if a.ok)
                if elapsed > 0 and tokens:
                    rates.append(tokens / elapsed)
            busy += wall
            server_accept = await client.accept_length()
            figures[batch] = summarize(batch, results, wall, rates, server_accept)
    return Measured(figures, busy)


def summarize(
    batch: int,
    results: Sequence[ChatResult],
    wall: float,
    rates: Sequence[float],
    server_accept: float | None,
) -> BatchFigures:
    ok = [r for r in results if r.ok]
    ttfts = [r.ttft_ms for r in ok if r.ttft_ms is not None]
    own = [r.tokens_per_s for r in ok if r.tokens_per_s is not None]
    tokens = sum(r.completion_tokens or 0 for r in ok)
    per_request = [
        r.accept_length for r in ok if r.accept_source == "request" and r.accept_length is not None
    ]
    accept, source = (statistics.fmean(per_request), "request") if per_request else (server_accept, "server")
    spread = statistics.pstdev(rates) / statistics.fmean(rates) if len(rates) > 1 else None
    return BatchFigures(
        batch=batch,
        n=len(ok),
        tokens_per_s=tokens / wall if wall > 0 and ok else None,
        request_tokens_per_s=statistics.median(own) if own else None,
        ttft_p50_ms=percentile(ttfts, 50),
        ttft_p90_ms=percentile(ttfts, 90),
        ttft_max_ms=max(ttfts) if ttfts else None,
        accept_length=accept,
        accept_source=source if accept is not None else None,
        spread=spread,
        failed=len(results) - len(ok),
    )
