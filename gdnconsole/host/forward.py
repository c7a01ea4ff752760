"""SSH local port forwards to a host's server port, kept across reconnects.

SGLang usually binds 127.0.0.1 on the GPU host, so the console reaches it through a forward on the link
it already has. A forward listens on this machine's loopback only (never on another interface: anyone on
the network could use the server through it otherwise). When the link drops, the forward dies with it;
the next connection opens it again, on the same local port when that port is still free, so a URL the
user copied keeps working.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gdnconsole.errors import ConsoleError

if TYPE_CHECKING:  # asyncssh loads with the SSH link, not before (link.py)
    import asyncssh

LISTEN_HOST = "127.0.0.1"

Destination = tuple[str, int]  # (host as the GPU host sees it, port)


class ForwardError(ConsoleError):
    """The forward could not be opened (no link, or the local port could not be bound)."""


@dataclass
class Forwards:
    """The forwards of one host's link; ``attach`` gives it each new connection."""

    conn: asyncssh.SSHClientConnection | None = None
    listeners: dict[Destination, asyncssh.SSHListener] = field(default_factory=dict)
    ports: dict[Destination, int] = field(default_factory=dict)  # local port each destination had
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def attach(self, conn: asyncssh.SSHClientConnection) -> None:
        """A new connection: reopen every forward that was in use on the one before."""
        self.detach()
        self.conn = conn
        for destination in list(self.ports):
            with contextlib.suppress(ForwardError):
                await self.port_for(*destination)

    def detach(self) -> None:
        """The connection is gone: its listeners are closed (their local ports are remembered)."""
        for listener in self.listeners.values():
            listener.close()
        self.listeners.clear()
        self.conn = None

    async def port_for(self, host: str, port: int) -> int:
        """The local port that reaches ``host:port`` on the GPU host, opening the forward if needed."""
        destination = (host, port)
        async with self._lock:
            if destination in self.listeners:
                return self.listeners[destination].get_port()
            if self.conn is None:
                raise ForwardError("the SSH link is not connected")
            listener = await self._listen(destination)
            self.listeners[destination] = listener
            self.ports[destination] = listener.get_port()
            return self.ports[destination]

    async def _listen(self, destination: Destination) -> asyncssh.SSHListener:
        import asyncssh

        assert self.conn is not None
        wanted = self.ports.get(destination, 0)
        try:
            return await self.conn.forward_local_port(LISTEN_HOST, wanted, *destination)
        except (OSError, asyncssh.Error) as exc:
            if not wanted:
                raise ForwardError(f"cannot listen on {LISTEN_HOST}: {exc}") from None
        try:  # the old local port was taken meanwhile: any free one will do
            return await self.conn.forward_local_port(LISTEN_HOST, 0, *destination)
        except OSError as exc:
            raise ForwardError(f"cannot listen on {LISTEN_HOST}: {exc}") from None
        except asyncssh.Error as exc:
            raise ForwardError(f"the SSH link refused the forward: {exc}") from None
