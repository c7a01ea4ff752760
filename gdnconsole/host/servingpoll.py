"""The agent's ``serving`` frames, parsed once at the edge (as host/state.py does for the others).

One frame is one round of the agent's poll of the server's own endpoints (``/metrics``, ``/v1/loads``,
``/server_info``): per path its HTTP status, or the error that stopped it, and the body as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

METRICS, LOADS, SERVER_INFO = "/metrics", "/v1/loads", "/server_info"
PATHS = (METRICS, LOADS, SERVER_INFO)


@dataclass(frozen=True)
class EndpointReply:
    """One GET of a round. ``status`` None: no HTTP answer came, and ``error`` says why."""

    path: str
    status: int | None
    error: str | None
    ms: float | None
    body: str | None
    truncated: bool

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.body is not None and not self.truncated

    @classmethod
    def parse(cls, raw: Any) -> EndpointReply | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
            return None
        status, ms = raw.get("status"), raw.get("ms")
        error, body = raw.get("error"), raw.get("body")
        return cls(
            path=raw["path"],
            status=status if isinstance(status, int) and not isinstance(status, bool) else None,
            error=error if isinstance(error, str) else None,
            ms=float(ms) if isinstance(ms, int | float) and not isinstance(ms, bool) else None,
            body=body if isinstance(body, str) else None,
            truncated=raw.get("truncated") is True,
        )


@dataclass(frozen=True)
class ServingRound:
    """A ``serving`` frame: the replies of one round, taken at ``t`` (the host's epoch seconds)."""

    t: float
    host: str
    port: int
    replies: tuple[EndpointReply, ...]

    def reply(self, path: str) -> EndpointReply | None:
        return next((r for r in self.replies if r.path == path), None)

    @property
    def reached(self) -> bool:
        """The server answered at least one request over HTTP (whatever the status)."""
        return any(r.status is not None for r in self.replies)

    @classmethod
    def parse(cls, raw: Any) -> ServingRound | None:
        if not isinstance(raw, dict):
            return None
        t, host, port, replies = raw.get("t"), raw.get("host"), raw.get("port"), raw.get("replies")
        if not isinstance(t, int | float) or isinstance(t, bool) or not isinstance(host, str):
            return None
        if not isinstance(port, int) or isinstance(port, bool) or not isinstance(replies, list):
            return None
        parsed = tuple(r for r in map(EndpointReply.parse, replies) if r is not None)
        return cls(float(t), host, port, parsed)
