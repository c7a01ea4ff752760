"""Requests to the agent that expect an answer: each carries an id, and the agent echoes it.

Most agent messages are unsolicited (samples, log data). Launch, stop, adopt and the pid-file read are
questions: the caller awaits the final answer (or the agent's ``error`` for that id), and may hear the
progress messages in between (``stopping``).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gdnconsole.errors import ConsoleError

Message = dict[str, Any]
Progress = Callable[[Message], None]


class AgentRefused(ConsoleError):
    """The agent answered a request with an error; ``reply`` holds all it said (e.g. who holds the lock)."""

    def __init__(self, reply: Message) -> None:
        super().__init__(str(reply.get("message", "the agent refused")))
        self.reply = reply


class LinkLost(ConsoleError):
    """The link went down before the answer came: whether the request took effect is unknown."""


@dataclass
class _Waiter:
    final: frozenset[str]
    future: asyncio.Future[Message]
    progress: Progress | None = None


@dataclass
class Pending:
    """Open requests by id."""

    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _waiting: dict[int, _Waiter] = field(default_factory=dict)

    def open(
        self, final: frozenset[str], progress: Progress | None = None
    ) -> tuple[int, asyncio.Future[Message]]:
        request_id = next(self._ids)
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = _Waiter(final, future, progress)
        return request_id, future

    def close(self, request_id: int) -> None:
        self._waiting.pop(request_id, None)

    def deliver(self, message: Message) -> None:
        """Route an answer to its waiter (messages without a known id are not answers)."""
        request_id = message.get("id")
        waiter = self._waiting.get(request_id) if isinstance(request_id, int) else None
        if waiter is None or waiter.future.done():
            return
        kind = message.get("type")
        if kind == "error":
            waiter.future.set_exception(AgentRefused(message))
        elif kind in waiter.final:
            waiter.future.set_result(message)
        elif waiter.progress is not None:
            waiter.progress(message)

    def fail_all(self, reason: str) -> None:
        """The link is gone: nobody will answer these any more."""
        for waiter in self._waiting.values():
            if not waiter.future.done():
                waiter.future.set_exception(LinkLost(reason))
        self._waiting.clear()
