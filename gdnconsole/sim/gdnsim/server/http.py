"""A small asyncio HTTP/1.1 server: keep-alive, Content-Length bodies, chunked transfer for streams.

Enough for SGLang's endpoints and for uvicorn's access log lines (written when a response starts).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

MAX_HEADER_LINES = 100


@dataclass
class Request:
    method: str
    target: str
    version: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    client: str  # "127.0.0.1:53422", as uvicorn's access log shows it

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.target).query)

    def json(self) -> object:
        return json.loads(self.body or b"{}")


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    stream: AsyncIterator[bytes] | None = None  # chunked when set

    @classmethod
    def json(cls, payload: object, status: int = 200) -> Response:
        return cls(status, json.dumps(payload).encode())

    @classmethod
    def text(cls, text: str, status: int = 200) -> Response:
        return cls(status, text.encode(), "text/plain; charset=utf-8")


Handler = Callable[[Request], Awaitable[Response]]
AccessLog = Callable[[Request, int], None]


class BadRequest(Exception):
    pass


class Drop(Exception):
    """Raised by a handler or a response stream: close the connection now, without another byte (a stream
    ends without its terminating chunk)."""


class Stall(Exception):
    """Raised by a handler: send nothing at all and keep the connection open until the client closes it."""


async def read_request(reader: asyncio.StreamReader, client: str) -> Request | None:
    """The next request on a connection, or None when the client closed it."""
    line = await reader.readline()
    if not line:
        return None
    try:
        method, target, version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    except ValueError as exc:
        raise BadRequest(line) from exc
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADER_LINES):
        raw = (await reader.readline()).decode("latin-1").rstrip("\r\n")
        if not raw:
            break
        name, _, value = raw.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(length) if length else b""
    return Request(method.upper(), target, version, headers, body, client)


def _head(status: int, headers: dict[str, str]) -> bytes:
    phrase = HTTPStatus(status).phrase
    lines = [f"HTTP/1.1 {status} {phrase}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode("latin-1")


async def write_response(writer: asyncio.StreamWriter, response: Response, keep_alive: bool) -> None:
    headers = {"content-type": response.content_type, **response.headers}
    headers["connection"] = "keep-alive" if keep_alive else "close"
    if response.stream is None:
        headers["content-length"] = str(len(response.body))
        writer.write(_head(response.status, headers) + response.body)
        await writer.drain()
        return
    headers["transfer-encoding"] = "chunked"
    writer.write(_head(response.status, headers))
    await writer.drain()
    async for chunk in response.stream:
        if chunk:
            writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()
    writer.write(b"0\r\n\r\n")
    await writer.drain()


class HttpServer:
    """Serves ``handler`` on a listening socket; ``access_log`` is called as each response starts."""

    def __init__(self, handler: Handler, access_log: AccessLog) -> None:
        self.handler = handler
        self.access_log = access_log
        self.server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> None:
        """Bind and listen; raises ``OSError`` (errno 98) when the address is in use, as asyncio words it."""
        self.server = await asyncio.start_server(self._connection, host, port, reuse_address=True)

    def close(self) -> None:
        if self.server is not None:
            self.server.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("127.0.0.1", 0)
        client = f"{peer[0]}:{peer[1]}"
        try:
            while True:
                request = await read_request(reader, client)
                if request is None:
                    break
                keep_alive = request.headers.get("connection", "").lower() != "close"
                response = await self.handler(request)
                self.access_log(request, response.status)
                await write_response(writer, response, keep_alive)
                if not keep_alive:
                    break
        except Stall:
            with contextlib.suppress(ConnectionError):
                while await reader.read(65536):  # whatever else the client sends goes unanswered
                    pass
        except (Drop, BadRequest, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()
