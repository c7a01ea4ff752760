"""The chat client against servers that misbehave in each way operators meet, over real sockets.

Each stub is a few lines of asyncio serving canned bytes on 127.0.0.1; every failure must come back as
a result with its own clear message, quickly, never as an exception or a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from gdnconsole.chat.burst import burst, percentile
from gdnconsole.chat.client import ChatClient, ChatRequest, Health, Timeouts
from tests.sshhosts import free_loopback_port

Reply = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
MODELS = json.dumps({"object": "list", "data": [{"id": "stub-model", "object": "model"}]}).encode()


def _response(status: str, body: bytes, content_type: str = "application/json") -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n\r\n"
    return head.encode() + body


def _chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    body = await reader.readexactly(length) if length else b""
    return head.split(b" ")[1].decode(), body


@contextlib.asynccontextmanager
async def stub(chat: Reply, health: bytes | None = None) -> AsyncIterator[ChatClient]:
    """A server whose /v1/models is fine, /health answers ``health`` and the chat endpoint runs ``chat``."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while True:
                path, _ = await _read_request(reader)
                if path == "/v1/models":
                    writer.write(_response("200 OK", MODELS))
                elif path == "/health":
                    writer.write(health or _response("200 OK", b""))
                else:
                    await chat(reader, writer)
                    return
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = ChatClient(f"http://127.0.0.1:{port}", timeouts=Timeouts(answer=1.0, connect=2.0, health=1.0))
    try:
        yield client
    finally:
        await client.aclose()
        server.close()


async def _stream(writer: asyncio.StreamWriter, parts: list[bytes], end: bool = True) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
    for part in parts:
        writer.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        await writer.drain()
    if end:
        writer.write(b"0\r\n\r\n")
    await writer.drain()
    writer.close()


GOOD = [
    _chunk({"role": "assistant", "content": ""}),
    _chunk({"content": "Hello"}),
    _chunk({"content": " there"}),
]


async def test_refused_says_nothing_listens() -> None:
    port = free_loopback_port()
    async with ChatClient(f"http://127.0.0.1:{port}", where=f"box:{port}") as client:
        result = await client.chat(ChatRequest("hi"))
        health = await client.health()
    assert not result.ok and result.status is None
    assert result.error == f"/v1/models: connection refused: nothing listens on box:{port}"
    assert health.health is Health.REFUSED and "nothing listens" in health.message


async def test_503_while_warming_up_is_its_own_health_state() -> None:
    async def never(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise AssertionError("no chat expected")

    async with stub(never, health=_response("503 Service Unavailable", b"")) as client:
        health = await client.health()
    assert health.health is Health.STARTING and health.status == 503


async def test_401_shows_the_servers_own_message() -> None:
    async def unauthorized(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_response("401 Unauthorized", b'{"error": "Unauthorized"}'))
        await writer.drain()

    async with stub(unauthorized) as client:
        result = await client.chat(ChatRequest("hi"))
    assert not result.ok and result.status == 401
    assert result.error == "HTTP 401 Unauthorized: Unauthorized"


async def test_400_with_sglang_error_object() -> None:
    body = json.dumps({"object": "error", "message": "messages is required", "code": 400}).encode()

    async def bad(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_response("400 Bad Request", body))
        await writer.drain()

    async with stub(bad) as client:
        result = await client.chat(ChatRequest("hi", stream=False))
    assert result.error == "HTTP 400 Bad Request: messages is required"


async def test_accepts_and_never_answers_is_a_timeout() -> None:
    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.Event().wait()

    async with stub(hang) as client:
        result = await asyncio.wait_for(client.chat(ChatRequest("hi")), 10)
    assert not result.ok and result.status is None
    assert result.error is not None and result.error.startswith("timeout: no answer from")
    assert "accepted the request but sent nothing" in result.error


async def test_silence_mid_stream_is_a_timeout_after_the_chunks_received() -> None:
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        for part in GOOD:
            writer.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        await writer.drain()
        await asyncio.Event().wait()

    async with stub(stall) as client:
        result = await asyncio.wait_for(client.chat(ChatRequest("hi")), 10)
    assert result.error is not None and "after 2 chunks" in result.error and result.text == "Hello there"


async def test_a_stream_cut_mid_answer() -> None:
    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _stream(writer, GOOD, end=False)

    async with stub(drop) as client:
        result = await client.chat(ChatRequest("hi"))
    assert not result.ok and result.status == 200
    assert result.error is not None and "closed the connection mid-answer" in result.error
    assert result.text == "Hello there"  # what arrived is kept


async def test_a_stream_that_ends_without_done() -> None:
    async def short(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _stream(writer, GOOD, end=True)

    async with stub(short) as client:
        result = await client.chat(ChatRequest("hi"))
    assert result.error == (
        "the stream ended without [DONE] after 2 chunks: the server closed the connection mid-answer"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'data: {"id": broken\n\n', 'malformed stream: line 7 is not JSON: {"id": broken'),
        (b"<html>oops</html>\n\n", "malformed stream: line 7 is not SSE data: <html>oops</html>"),
        (b"data: [1, 2]\n\n", "malformed stream: line 7 is not a JSON object: [1, 2]"),
        (
            b'data: {"error": {"message": "CUDA out of memory"}}\n\n',
            "the server reported an error mid-stream: CUDA out of memory",
        ),
    ],
)
async def test_malformed_streams(line: bytes, message: str) -> None:
    async def bad(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _stream(writer, [*GOOD, line, b"data: [DONE]\n\n"])

    async with stub(bad) as client:
        result = await client.chat(ChatRequest("hi"))
    assert not result.ok and result.error == message


async def test_malformed_json_body() -> None:
    async def bad(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_response("200 OK", b'{"id": "x", "choices": ['))
        await writer.drain()

    async with stub(bad) as client:
        result = await client.chat(ChatRequest("hi", stream=False))
    assert not result.ok and result.status == 200
    assert result.error == 'malformed response: {"id": "x", "choices": ['


async def test_an_empty_completion_is_not_an_answer() -> None:
    async def empty(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _stream(
            writer, [_chunk({"role": "assistant", "content": ""}), _chunk({}, "stop"), b"data: [DONE]\n\n"]
        )

    async with stub(empty) as client:
        result = await client.chat(ChatRequest("hi"))
    assert not result.ok and result.error == "empty completion (finish_reason=stop)"


async def test_a_server_without_usage_counts_chunks() -> None:
    async def plain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _stream(writer, [*GOOD, _chunk({}, "stop"), b"data: [DONE]\n\n"])

    async with stub(plain) as client:
        result = await client.chat(ChatRequest("hi"))
    assert result.ok and result.completion_tokens == 2 and result.prompt_tokens is None
    assert result.ttft_ms is not None and result.tokens_per_s is not None


async def test_a_burst_reports_each_error_once_with_its_count() -> None:
    calls = 0

    async def alternate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal calls
        calls += 1
        if calls % 2:
            await _stream(writer, [*GOOD, b"data: [DONE]\n\n"])
        else:
            writer.write(_response("503 Service Unavailable", b'{"error": {"message": "shutting down"}}'))
            await writer.drain()

    async with stub(alternate) as client:
        result = await burst(client, ChatRequest("hi"), 6)
    table = result.to_json()
    assert table["ok"] == 3 and table["failed"] == 3
    assert table["errors"] == [{"error": "HTTP 503 Service Unavailable: shutting down", "count": 3}]
    assert table["ttft_ms"]["p50"] is not None


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50 and percentile(values, 90) == 90 and percentile(values, 99) == 99
    assert percentile([7.0], 99) == 7.0 and percentile([], 50) is None
