"""What a chat request and its answer are, with no HTTP library: the session and the UI hold these, and
``chat/client.py`` (httpx) is imported only when a request is sent (httpx takes ~90 ms to import)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from gdnconsole.errors import ConsoleError

CONNECT_TIMEOUT_S = 5.0
ANSWER_TIMEOUT_S = 120.0  # no byte for this long means the server will not answer (curl's 30 s was too short)
HEALTH_TIMEOUT_S = 25.0  # SGLang's own health check waits up to 20 s for the scheduler (FACTS §6)


class Health(Enum):
    REFUSED = "refused"  # nothing listens yet: the server is still loading, or gone
    STARTING = "starting"  # 503: uvicorn is up, warm-up or a health generation has not finished
    OK = "ok"
    ERROR = "error"  # another status, a timeout, a broken connection


@dataclass(frozen=True)
class HealthResult:
    health: Health
    status: int | None
    message: str


@dataclass(frozen=True)
class ChatRequest:
    prompt: str
    system: str | None = None
    max_tokens: int | None = 256
    temperature: float | None = None
    stream: bool = True
    thinking: bool | None = None  # the chat template's enable_thinking; None leaves the model's default
    model: str | None = None  # None: the first model /v1/models lists
    return_meta_info: bool = False  # SGLang >= 0.5.23, not streamed: per-request speculative figures

    def body(self, model: str) -> dict[str, Any]:
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages.append({"role": "user", "content": self.prompt})
        payload: dict[str, Any] = {"model": model, "messages": messages, "stream": self.stream}
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if self.thinking is not None:
            payload["chat_template_kwargs"] = {"enable_thinking": self.thinking}
        if self.stream:
            payload["stream_options"] = {"include_usage": True}
        elif self.return_meta_info:
            payload["return_meta_info"] = True
        return payload


@dataclass
class ChatResult:
    ok: bool = False
    status: int | None = None
    ttft_ms: float | None = None
    total_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    tokens_per_s: float | None = None
    text: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    error: str | None = None
    accept_length: float | None = None  # speculative accept length, when the server tells it
    accept_source: str | None = None  # "request" (this answer's meta_info) or "server" (its average)
    chunks: int = 0  # content chunks received (the token count when the server sends no usage)

    def to_json(self) -> dict[str, Any]:
        """The `prompt --json` object (issue 6 §4), plus the reasoning and speculation figures."""
        return {
            "ok": self.ok,
            "status": self.status,
            "ttft_ms": rounded(self.ttft_ms),
            "total_ms": round(self.total_ms, 1),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens_per_s": rounded(self.tokens_per_s),
            "text": self.text,
            "error": self.error,
            "reasoning": self.reasoning or None,
            "finish_reason": self.finish_reason,
            "accept_length": self.accept_length,
            "accept_source": self.accept_source,
        }


def rounded(value: float | None) -> float | None:
    """One decimal for a JSON figure; None stays None."""
    return None if value is None else round(value, 1)


class ChatError(ConsoleError):
    """What went wrong with one request, in words for the user; ``status`` when an HTTP answer came."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Timeouts:
    connect: float = CONNECT_TIMEOUT_S
    answer: float = ANSWER_TIMEOUT_S  # the longest silence allowed between two bytes of the answer
    health: float = HEALTH_TIMEOUT_S
