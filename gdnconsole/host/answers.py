"""The agent's answers to the launcher's requests, as typed values: parsed once, at the edge.

``host/replies.py`` routes an answer to the request that awaits it; this module reads what the answer
says (the agent's module docstring is the protocol), as ``host/state.py`` does for the unsolicited
messages. Nothing here raises: a field that is missing or of the wrong type is None, and an answer that
lacks what the launcher needs parses to None, for the launcher to say so in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gdnconsole.host.state import ServerRecord


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class Launched:
    """``launched``: the agent started the server (its pid-file record)."""

    server: ServerRecord

    @classmethod
    def parse(cls, raw: Any) -> Launched | None:
        """None when the answer names no server pid."""
        record = ServerRecord.parse(_dict(raw).get("server"))
        return None if record is None else cls(record)


@dataclass(frozen=True)
class Stopping:
    """``stopping``: progress while a server drains. ``signal``: the one just sent, if any."""

    signal: str | None = None
    alive: int | None = None  # processes of its group still there
    elapsed: float | None = None

    @classmethod
    def parse(cls, raw: Any) -> Stopping:
        data = _dict(raw)
        signal = data.get("signal")
        return cls(str(signal) if signal else None, _int(data.get("alive")), _float(data.get("elapsed")))


@dataclass(frozen=True)
class Stopped:
    """``stopped``: the server is gone; ``how``: "sigterm", "sigkill" or "gone" (it had ended)."""

    how: str
    elapsed: float
    pgid: int | None = None
    strays: int = 0  # group members still there after the main process exited (killed at once)

    @classmethod
    def parse(cls, raw: Any) -> Stopped | None:
        """None when the answer lacks how it ended or how long it took."""
        data = _dict(raw)
        how, elapsed = data.get("how"), _float(data.get("elapsed"))
        if not isinstance(how, str) or elapsed is None:
            return None
        return cls(how, elapsed, _int(data.get("pgid")), _int(data.get("strays")) or 0)
