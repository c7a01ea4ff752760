"""An OpenAI-compatible client for SGLang's HTTP server (FACTS §6), on httpx: health, models, server info,
and chat completions, streamed or not, timed.

Every server or network failure becomes a result with one clear message (never an exception, never a
hang): nothing listening, a 503 while the server warms up, an HTTP error with the body's own message, no
answer within the timeout, a stream cut off mid-answer, a stream or body that is not what the API says.

Timings: ``ttft_ms`` is measured from sending the request to the first chunk that carries content (or
reasoning) text, not to the first byte (SGLang sends an empty role chunk at once). ``tokens_per_s`` is the
decode rate, ``(completion_tokens - 1) / (total - ttft)``, as serving benchmarks define it; without a
first-token time (not streamed) it is ``completion_tokens / total``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from gdnconsole.chat.model import (
    ANSWER_TIMEOUT_S,
    CONNECT_TIMEOUT_S,
    HEALTH_TIMEOUT_S,
    ChatError,
    ChatRequest,
    ChatResult,
    Health,
    HealthResult,
    Timeouts,
)
from gdnconsole.timefmt import span

__all__ = [
    "ANSWER_TIMEOUT_S",
    "CONNECT_TIMEOUT_S",
    "HEALTH_TIMEOUT_S",
    "ChatClient",
    "ChatError",
    "ChatRequest",
    "ChatResult",
    "Health",
    "HealthResult",
    "OnDelta",
    "Timeouts",
]

ERROR_BODY_CHARS = 300
OnDelta = Callable[[str, str], None]  # (field, text): "content" or "reasoning_content"


@dataclass
class ChatClient:
    """One server's endpoint. ``where`` names it in messages (e.g. "ct129:30000 via SSH")."""

    base_url: str
    api_key: str | None = None
    where: str = ""
    timeouts: Timeouts = field(default_factory=Timeouts)
    spec_details: bool = False  # ask each answer for its own speculative figures (SGLang >= 0.5.23)
    _http: httpx.AsyncClient | None = None

    def __post_init__(self) -> None:
        self.where = self.where or self.base_url

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            # No proxies from the environment: the endpoint is loopback (or a forward to it), always.
            self._http = httpx.AsyncClient(
                base_url=self.base_url,
                headers=headers,
                trust_env=False,
                timeout=httpx.Timeout(self.timeouts.answer, connect=self.timeouts.connect),
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
            )
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- health and information -------------------------------------------------------------------

    async def health(self) -> HealthResult:
        try:
            response = await self.http.get("/health", timeout=self.timeouts.health)
        except httpx.ConnectError:
            return HealthResult(Health.REFUSED, None, f"nothing listens on {self.where} yet")
        except httpx.TimeoutException:
            return HealthResult(
                Health.ERROR, None, f"/health did not answer within {self.timeouts.health:g} s"
            )
        except httpx.HTTPError as exc:
            return HealthResult(Health.ERROR, None, f"/health failed: {_transport_words(exc)}")
        if response.status_code == 200:
            return HealthResult(Health.OK, 200, "healthy")
        if response.status_code == 503:
            return HealthResult(Health.STARTING, 503, "503: warming up or unhealthy")
        return HealthResult(Health.ERROR, response.status_code, f"/health answered {_status_words(response)}")

    async def get_json(self, path: str) -> Any:
        """A GET whose answer is JSON; ChatError with a clear message otherwise."""
        try:
            response = await self.http.get(path, timeout=self._timeout())
        except httpx.HTTPError as exc:
            raise ChatError(f"{path}: {self._failure(exc)}") from None
        if response.status_code != 200:
            raise ChatError(f"{path} answered {_status_words(response)}", response.status_code)
        try:
            return response.json()
        except ValueError:
            raise ChatError(
                f"{path} answered with a body that is not JSON: {_excerpt(response.text)}"
            ) from None

    async def model_id(self) -> str:
        listing = await self.get_json("/v1/models")
        try:
            return str(listing["data"][0]["id"])
        except (KeyError, IndexError, TypeError):
            raise ChatError(f"/v1/models lists no model: {_excerpt(json.dumps(listing))}") from None

    async def accept_length(self) -> float | None:
        """The server-wide average speculative accept length (None without speculation, or unknown)."""
        try:
            info = await self.get_json("/server_info")
        except ChatError:
            return None
        states = info.get("internal_states") if isinstance(info, dict) else None
        if isinstance(states, list) and states and isinstance(states[0], dict):
            value = states[0].get("avg_spec_accept_length")
            return float(value) if isinstance(value, int | float) else None
        return None

    # -- chat ---------------------------------------------------------------------------------------

    async def chat(
        self, request: ChatRequest, on_delta: OnDelta | None = None, *, deadline_s: float | None = None
    ) -> ChatResult:
        """Send one chat completion and time it; failures are in the result, never raised.

        ``deadline_s``: the whole wait (model lookup, connection, every byte) ends then, however the
        server trickles; a result cut by it says how long was waited, as measured here (``total_ms``)."""
        result = ChatResult()
        began = time.monotonic()
        try:
            async with asyncio.timeout(deadline_s):
                await self._chat(request, result, on_delta)
        except TimeoutError:
            result.ok = False
            result.total_ms = (time.monotonic() - began) * 1000.0  # the wait done, not the one asked
            got = f" ({result.chunks} chunks had come)" if result.chunks else ""
            result.error = (
                f"timeout: no whole answer from {self.where} within {span(result.total_ms / 1000)}{got}"
            )
        result.tokens_per_s = _decode_rate(result)
        return result

    async def _chat(self, request: ChatRequest, result: ChatResult, on_delta: OnDelta | None) -> None:
        started = time.monotonic()
        try:
            model = request.model or await self.model_id()
            started = time.monotonic()  # the model lookup is not part of the answer's latency
            body = request.body(model)
            if self.spec_details:
                body["return_spec_tokens_details"] = True
            if request.stream:
                await self._stream(body, result, started, on_delta)
            else:
                await self._whole(body, result)
            _check_answer(result)
            result.ok = True
        except ChatError as exc:
            result.error = str(exc)
            result.status = exc.status if exc.status is not None else result.status
        except httpx.HTTPError as exc:
            result.error = self._failure(exc, result)
        result.total_ms = (time.monotonic() - started) * 1000.0

    def _timeout(self) -> httpx.Timeout:
        """The timeouts as they are now: a client made for /health keeps its first ones otherwise (the
        verification then waited the default 120 s of silence while saying its own 30 s)."""
        return httpx.Timeout(self.timeouts.answer, connect=self.timeouts.connect)

    async def _whole(self, body: dict[str, Any], result: ChatResult) -> None:
        response = await self.http.post("/v1/chat/completions", json=body, timeout=self._timeout())
        result.status = response.status_code
        if response.status_code != 200:
            raise ChatError(f"HTTP {_status_words(response)}", response.status_code)
        try:
            answer = response.json()
            choice = answer["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatError(f"malformed response: {_excerpt(response.text)}", response.status_code) from None
        result.text = str(message.get("content") or "")
        result.reasoning = str(message.get("reasoning_content") or "")
        result.finish_reason = choice.get("finish_reason")
        _read_usage(answer.get("usage"), result)
        _read_spec_details(answer.get("sglext"), result)
        meta = choice.get("meta_info")
        if isinstance(meta, dict) and isinstance(meta.get("spec_accept_length"), int | float):
            result.accept_length, result.accept_source = float(meta["spec_accept_length"]), "request"

    async def _stream(
        self, body: dict[str, Any], result: ChatResult, started: float, on_delta: OnDelta | None
    ) -> None:
        async with self.http.stream(
            "POST", "/v1/chat/completions", json=body, timeout=self._timeout()
        ) as response:
            result.status = response.status_code
            if response.status_code != 200:
                await response.aread()
                raise ChatError(f"HTTP {_status_words(response)}", response.status_code)
            done = False
            number = 0
            async for line in response.aiter_lines():
                number += 1
                if not line.strip() or line.startswith(":"):
                    continue  # event separators and SSE comments
                if not line.startswith("data:"):
                    raise ChatError(f"malformed stream: line {number} is not SSE data: {_excerpt(line)}")
                data = line[5:].strip()
                if data == "[DONE]":
                    done = True
                    break
                _take_chunk(_parse_chunk(data, number), result, started, on_delta)
            if not done:
                raise ChatError(
                    f"the stream ended without [DONE] after {result.chunks} chunks: "
                    "the server closed the connection mid-answer"
                )

    def _failure(self, exc: httpx.HTTPError, result: ChatResult | None = None) -> str:
        got = f" after {result.chunks} chunks" if result is not None and result.chunks else ""
        if isinstance(exc, httpx.ConnectError):
            return f"connection refused: nothing listens on {self.where}"
        if isinstance(exc, httpx.ConnectTimeout):
            return f"connecting to {self.where} timed out after {self.timeouts.connect:g} s"
        if isinstance(exc, httpx.ReadTimeout):
            return (
                f"timeout: no answer from {self.where} for {self.timeouts.answer:g} s{got} "
                "(the server accepted the request but sent nothing)"
            )
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            return f"the server closed the connection mid-answer{got} ({_transport_words(exc)})"
        return f"{_transport_words(exc)}{got}"


def _parse_chunk(data: str, number: int) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except ValueError:
        raise ChatError(f"malformed stream: line {number} is not JSON: {_excerpt(data)}") from None
    if not isinstance(chunk, dict):
        raise ChatError(f"malformed stream: line {number} is not a JSON object: {_excerpt(data)}")
    if "error" in chunk:  # SGLang reports a failure inside the stream as an error object
        raise ChatError(f"the server reported an error mid-stream: {_error_message(chunk)}")
    return chunk


def _read_spec_details(sglext: Any, result: ChatResult) -> None:
    """SGLang's per-request speculative figures (``return_spec_tokens_details``), when the answer has them."""
    details = sglext.get("spec_tokens_details") if isinstance(sglext, dict) else None
    if isinstance(details, list):  # one per choice when n > 1: the first is the one shown
        details = details[0] if details else None
    length = details.get("spec_accept_length") if isinstance(details, dict) else None
    if isinstance(length, int | float) and not isinstance(length, bool):
        result.accept_length, result.accept_source = float(length), "request"


def _take_chunk(chunk: dict[str, Any], result: ChatResult, started: float, on_delta: OnDelta | None) -> None:
    _read_usage(chunk.get("usage"), result)
    _read_spec_details(chunk.get("sglext"), result)  # a chunk of its own, before the usage chunk
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not choices:
        return  # the usage chunk has no choices
    choice = choices[0] if isinstance(choices[0], dict) else {}
    delta = choice.get("delta") or {}
    if not isinstance(delta, dict):
        raise ChatError(f"malformed stream: a chunk's delta is not an object: {_excerpt(json.dumps(chunk))}")
    for name in ("reasoning_content", "content"):
        text = delta.get(name)
        if isinstance(text, str) and text:
            if result.ttft_ms is None:
                result.ttft_ms = (time.monotonic() - started) * 1000.0
            result.chunks += 1
            if name == "content":
                result.text += text
            else:
                result.reasoning += text
            if on_delta is not None:
                on_delta(name, text)
    if choice.get("finish_reason"):
        result.finish_reason = str(choice["finish_reason"])


def _read_usage(usage: object, result: ChatResult) -> None:
    if isinstance(usage, dict):
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        result.prompt_tokens = prompt if isinstance(prompt, int) else result.prompt_tokens
        result.completion_tokens = completion if isinstance(completion, int) else result.completion_tokens


def _check_answer(result: ChatResult) -> None:
    if result.completion_tokens is None and result.chunks:
        result.completion_tokens = result.chunks  # no usage from this server: one chunk is one token
    if not result.text and not result.reasoning:
        raise ChatError(f"empty completion (finish_reason={result.finish_reason})", result.status)


def _decode_rate(result: ChatResult) -> float | None:
    tokens = result.completion_tokens
    if not result.ok or not tokens:
        return None
    if result.ttft_ms is not None and tokens >= 2 and result.total_ms > result.ttft_ms:
        return (tokens - 1) / ((result.total_ms - result.ttft_ms) / 1000.0)
    return tokens / (result.total_ms / 1000.0) if result.total_ms > 0 else None


def _status_words(response: httpx.Response) -> str:
    """``401 Unauthorized: <the body's own message>``."""
    text = f"{response.status_code} {response.reason_phrase}".strip()
    try:
        body = response.json()
    except ValueError:
        body = None
    message = _error_message(body) if body is not None else _excerpt(response.text)
    return f"{text}: {message}" if message else text


def _error_message(body: object) -> str:
    """The message in SGLang's and FastAPI's error shapes: {"message"}, {"error": {...}|str}, {"detail"}."""
    if isinstance(body, Mapping):
        for key in ("message", "error", "detail"):
            value = body.get(key)
            if isinstance(value, Mapping):
                return _error_message(value)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, list) and value:
                return _excerpt(json.dumps(value))
    return _excerpt(json.dumps(body)) if body not in (None, "") else ""


def _transport_words(exc: BaseException) -> str:
    return str(exc) or exc.__class__.__name__


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ERROR_BODY_CHARS else text[: ERROR_BODY_CHARS - 1] + "…"
