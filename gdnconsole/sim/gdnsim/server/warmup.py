"""The warm-up SGLang runs once uvicorn listens (511 http_server.py `_execute_server_warmup`): poll
``GET /model_info``, then one ``POST /generate``; 0.5.22+ also ``POST /freeze_gc``. It goes through the
real socket, so its access lines are uvicorn's own."""

from __future__ import annotations

import asyncio
import json
import traceback
from typing import Any

from gdnsim.server import timeline, version
from gdnsim.server.logwriter import LogWriter

USER_AGENT = "python-requests/2.32.5"  # the warm-up uses requests; the app tells warm-up traffic by it


async def request(
    host: str, port: int, method: str, path: str, body: object = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    """One HTTP/1.1 request on a fresh loopback connection."""
    reader, writer = await asyncio.open_connection(host, port)
    payload = b"" if body is None else json.dumps(body).encode()
    lines = [
        f"{method} {path} HTTP/1.1",
        f"Host: {host}:{port}",
        f"User-Agent: {USER_AGENT}",
        "Connection: close",
        f"Content-Length: {len(payload)}",
    ]
    if body is not None:
        lines.append("Content-Type: application/json")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
    await writer.drain()
    raw = await reader.read()
    writer.close()
    head, _, rest = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, rest


def _connect_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host


async def warm_up(args: Any, log: LogWriter) -> bool:
    """True when the warm-up succeeded; False after logging SGLang's failure line."""
    host = _connect_host(args.host)
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    try:
        await asyncio.sleep(timeline.span("warmup_wait"))
        await request(host, args.port, "GET", "/model_info", headers=headers)
        body: dict[str, Any] = {
            "text": "The capital city of France is",
            "sampling_params": {"temperature": 0, "max_new_tokens": 8},
        }
        await asyncio.sleep(timeline.span("warmup"))
        status, _ = await request(host, args.port, "POST", "/generate", body, headers)
        if status != 200:
            raise RuntimeError(f"warmup /generate returned {status}")
        if version.at_least("0.5.22"):
            await request(host, args.port, "POST", "/freeze_gc", headers=headers)
    except Exception:
        log.error(f"Initialization failed. warmup error: {traceback.format_exc()}")
        return False
    return True
