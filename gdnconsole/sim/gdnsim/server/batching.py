"""The scheduler's loop as seen from outside: running requests get their tokens at the rate the performance
model (``specperf``) gives for the speculative settings and the batch size (wall clock, not scaled by
speed); TP0 logs one Prefill line per new request and one Decode line per ``--decode-log-interval``
decode iterations. With speculative decoding each iteration is one verify that yields each request
1 … depth+1 tokens, drawn per request.

Iterations keep to absolute deadlines (each one ends its drawn duration after the previous one's
deadline, not after it woke up), so Python's own overhead does not slow the rate a client measures. A
request's first token comes alone (the one its prefill samples, as in SGLang); without speculation and
alone, ``(completion_tokens - 1) / (t_last - t_first)`` measures ``tokens_per_s`` (within the model's
jitter)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from gdnsim.server.specperf import Spec, SpecPerf

Token = tuple[str, str]  # (field, text)
Send = Callable[[dict[str, Any]], None]
MAX_LAG_S = 0.5  # a loop this far behind its schedule (the process was stopped) starts a new one


@dataclass
class Running:
    rid: str
    prompt_tokens: int
    pending: list[Token]
    out: asyncio.Queue[list[Token] | None] = field(default_factory=asyncio.Queue)
    generated: int = 0
    verify_ct: int = 0  # verify steps that gave this request tokens (speculative decoding only)
    spec_accepted: int = 0  # tokens those verify steps gave it
    submitted: float = field(default_factory=time.monotonic)
    first_at: float | None = None  # when its first token came
    last_at: float | None = None
    gaps: list[float] = field(default_factory=list)  # inter-token gaps, one per later output piece
    stream: bool = False
    aborted: bool = False  # the client left before the end
    admitted: float | None = None  # when it left the waiting queue


class Observer(Protocol):
    """What the metrics see of the scheduler: each logged batch, each finished request."""

    def on_log(self, batcher: Batcher) -> None: ...

    def on_admit(self, request: Running) -> None: ...

    def on_finish(self, request: Running) -> None: ...


class Batcher:
    def __init__(
        self,
        send_tp0: Send,
        set_util: Callable[[int], None],
        tokens_per_s: float,
        decode_log_interval: int,
        spec_steps: int | None,
        perf: SpecPerf | None = None,
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
        self.perf = perf  # None: built from spec_steps and tokens_per_s when the loop starts
        self._task: asyncio.Task[None] | None = None
        self._window_tokens = 0
        self._window_start = time.monotonic()
        self.observer: Observer | None = None  # the metrics
        self.max_running: int | None = None  # more requests than this wait (--max-running-requests)
        self.waiting: list[Running] = []
        self.aborted = 0

    @property
    def avg_accept_length(self) -> float | None:
        return self.accepted / self.verify_ct if self.verify_ct else None

    def used_tokens(self) -> int:
        return sum(r.prompt_tokens + r.generated for r in self.running.values())

    def submit(self, rid: str, prompt_tokens: int, tokens: list[Token], stream: bool = False) -> Running:
        """Take a request: it runs at once, or waits while the running batch is full."""
        request = Running(rid, prompt_tokens, list(tokens), stream=stream)
        if self.max_running is not None and len(self.running) >= self.max_running:
            self.waiting.append(request)
        else:
            self._admit(request)
        if self.observer is not None:
            self.observer.on_log(self)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._loop())
        return request

    def _admit(self, request: Running) -> None:
        """Log its prefill and start handing out tokens."""
        request.admitted = time.monotonic()
        if self.observer is not None:
            self.observer.on_admit(request)
        running_before = len(self.running)
        self.running[request.rid] = request
        self.forward_ct += 1
        self.send_tp0(
            {
                "cmd": "prefill",
                "forward_ct": self.forward_ct,
                "new_seq": 1,
                "new_token": request.prompt_tokens,
                "cached": 0,
                "used_tokens": self.used_tokens(),
                "running": running_before,
                "queued": len(self.waiting),
                "throughput": request.prompt_tokens * 40.0,
            }
        )

    def cancel(self, rid: str) -> None:
        self.running.pop(rid, None)
        self.waiting = [r for r in self.waiting if r.rid != rid]

    async def _loop(self) -> None:
        self.set_util(97)
        self._window_start, self._window_tokens = time.monotonic(), 0
        loop = asyncio.get_running_loop()
        deadline = loop.time()  # a fresh schedule each time the loop starts after being idle
        perf = self._perf()
        while self.running:
            now = loop.time()
            if now - deadline > MAX_LAG_S:
                deadline = now  # no burst of catch-up iterations after a stall
            deadline += perf.draw_iteration_s(len(self.running))
            await asyncio.sleep(max(0.0, deadline - now))
            self._iterate(perf)
        if self.observer is not None:
            self.observer.on_log(self)  # the idle scheduler's gauges drop to zero
        self.set_util(0)

    def _perf(self) -> SpecPerf:
        if self.perf is None:
            spec = Spec(self.spec_steps, 1, self.spec_steps + 1) if self.spec_steps else None
            self.perf = SpecPerf(spec, self.tokens_per_s)
        return self.perf

    def _iterate(self, perf: SpecPerf) -> None:
        self.forward_ct += 1
        self.decode_iters += 1
        step = 1
        for request in list(self.running.values()):
            first = request.generated == 0  # the prefill's token: one, whatever this verify yields
            step = 1 if first or not self.spec_steps else perf.draw_accepted()
            piece, request.pending = request.pending[:step], request.pending[step:]
            request.generated += len(piece)
            if self.spec_steps and not first and piece:
                request.verify_ct += 1
                request.spec_accepted += len(piece)  # a verify at EOS yields only what is left
                self.verify_ct += 1
                self.accepted += len(piece)
            self._window_tokens += len(piece)
            self._stamp(request, bool(piece))
            request.out.put_nowait(piece)
            if not request.pending:
                request.out.put_nowait(None)
                self.running.pop(request.rid, None)
                if self.observer is not None:
                    self.observer.on_finish(request)
        while self.waiting and (self.max_running is None or len(self.running) < self.max_running):
            self._admit(self.waiting.pop(0))
        if self.decode_iters % self.interval == 0:
            self._log_decode(step)

    @staticmethod
    def _stamp(request: Running, gave: bool) -> None:
        if not gave:
            return
        now = time.monotonic()
        if request.first_at is None:
            request.first_at = now
        elif request.last_at is not None:
            request.gaps.append(now - request.last_at)
        request.last_at = now

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
                "queued": len(self.waiting),
            }
        )
        if self.observer is not None:
            self.observer.on_log(self)
