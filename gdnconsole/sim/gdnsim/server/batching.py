"""The scheduler's loop as seen from outside: running requests get their tokens at ``tokens_per_s``
(wall clock, not scaled by speed), TP0 logs one Prefill line per new request and one Decode line per
``--decode-log-interval`` decode iterations. With speculative decoding each iteration is one verify that
yields 1 … steps+1 tokens."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gdnsim.server.generation import accepted_tokens

Token = tuple[str, str]  # (field, text)
Send = Callable[[dict[str, Any]], None]


@dataclass
class Running:
    rid: str
    prompt_tokens: int
    pending: list[Token]
    out: asyncio.Queue[list[Token] | None] = field(default_factory=asyncio.Queue)
    generated: int = 0


class Batcher:
    def __init__(
        self,
        send_tp0: Send,
        set_util: Callable[[int], None],
        tokens_per_s: float,
        decode_log_interval: int,
        spec_steps: int | None,
    ) -> None:
        self.send_tp0 = send_tp0
        self.set_util = set_util
        self.tokens_per_s = max(tokens_per_s, 0.1)
        self.interval = max(1, decode_log_interval)
        self.spec_steps = spec_steps  # None without speculative decoding
        self.running: dict[str, Running] = {}
        self.forward_ct = 0
        self.decode_iters = 0
        self.verify_ct = 0
        self.accepted = 0
        self.last_gen_throughput = 0.0
        self._rng = random.Random(0)
        self._task: asyncio.Task[None] | None = None
        self._window_tokens = 0
        self._window_start = time.monotonic()

    @property
    def avg_accept_length(self) -> float | None:
        return self.accepted / self.verify_ct if self.verify_ct else None

    def used_tokens(self) -> int:
        return sum(r.prompt_tokens + r.generated for r in self.running.values())

    def submit(self, rid: str, prompt_tokens: int, tokens: list[Token]) -> Running:
        """Admit a request: log its prefill and start handing out tokens."""
        request = Running(rid, prompt_tokens, list(tokens))
        running_before = len(self.running)
        self.running[rid] = request
        self.forward_ct += 1
        self.send_tp0(
            {
                "cmd": "prefill",
                "forward_ct": self.forward_ct,
                "new_seq": 1,
                "new_token": prompt_tokens,
                "cached": 0,
                "used_tokens": self.used_tokens(),
                "running": running_before,
                "queued": 0,
                "throughput": prompt_tokens * 40.0,
            }
        )
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._loop())
        return request

    def cancel(self, rid: str) -> None:
        self.running.pop(rid, None)

    async def _loop(self) -> None:
        self.set_util(97)
        self._window_start, self._window_tokens = time.monotonic(), 0
        while self.running:
            step = accepted_tokens(self._rng, self.spec_steps) if self.spec_steps else 1
            await asyncio.sleep(step / self.tokens_per_s)
            self._iterate(step)
        self.set_util(0)

    def _iterate(self, step: int) -> None:
        self.forward_ct += 1
        self.decode_iters += 1
        if self.spec_steps:
            self.verify_ct += 1
            self.accepted += step
        for request in list(self.running.values()):
            piece, request.pending = request.pending[:step], request.pending[step:]
            request.generated += len(piece)
            self._window_tokens += len(piece)
            request.out.put_nowait(piece)
            if not request.pending:
                request.out.put_nowait(None)
                self.running.pop(request.rid, None)
        if self.decode_iters % self.interval == 0:
            self._log_decode(step)

    def _log_decode(self, step: int) -> None:
        elapsed = max(time.monotonic() - self._window_start, 1e-6)
        self.last_gen_throughput = self._window_tokens / elapsed
        self._window_start, self._window_tokens = time.monotonic(), 0
        self.send_tp0(
            {
                "cmd": "decode",
                "forward_ct": self.forward_ct,
                "running": max(1, len(self.running)),
                "used_tokens": self.used_tokens(),
                "accept_len": self.avg_accept_length or float(step),
                "graph": True,
                "throughput": self.last_gen_throughput,
                "queued": 0,
            }
        )
