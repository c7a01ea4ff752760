"""The prompt history of one host: every prompt run from the prompt panel, with its figures, on this machine.

One JSON object per line in ``<user data dir>/prompts/HOST.jsonl`` (``$GDNCONSOLE_PROMPTS_DIR`` instead of
the user data dir's ``prompts`` folder). The file is only ever appended to; a console that dies mid-write
loses at most that line, and a torn line is skipped when the file is read (as the launch journal does).

A line is a single run (``"kind": "prompt"``: the request, and the result's figures with its text cut to
``TEXT_CHARS``) or a burst (``"kind": "burst"``: the request, the count, the burst's summary).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gdnconsole.chat.burst import BurstResult
from gdnconsole.chat.model import ChatRequest, ChatResult
from gdnconsole.host.jsonlines import append_json_line, data_dir

PROMPTS_DIR_ENV = "GDNCONSOLE_PROMPTS_DIR"
TEXT_CHARS = 2000  # of an answer's text (and reasoning) kept in the file
RECALL = 200  # distinct prompts offered for recall


def default_dir() -> Path:
    return data_dir(PROMPTS_DIR_ENV, "prompts")


def request_json(request: ChatRequest) -> dict[str, Any]:
    return {
        "prompt": request.prompt,
        "system": request.system,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "stream": request.stream,
        "thinking": request.thinking,
    }


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_CHARS:
        return text
    return text[: TEXT_CHARS - 1] + "…"


def result_json(result: ChatResult) -> dict[str, Any]:
    """The result's figures; its text and reasoning cut to ``TEXT_CHARS`` (their full lengths kept)."""
    out = result.to_json()
    for key in ("text", "reasoning"):
        value = out.get(key)
        if isinstance(value, str) and len(value) > TEXT_CHARS:
            out[f"{key}_chars"] = len(value)
            out[key] = _cut(value)
    return out


@dataclass(frozen=True)
class Entry:
    """One line of the file, as read back."""

    time: float
    kind: Literal["prompt", "burst"]
    request: dict[str, Any]
    result: dict[str, Any]  # a prompt's figures, or a burst's summary

    @property
    def prompt(self) -> str:
        value = self.request.get("prompt")
        return value if isinstance(value, str) else ""


def _entry(raw: object) -> Entry | None:
    if not isinstance(raw, dict):
        return None
    kind, request, result, when = raw.get("kind"), raw.get("request"), raw.get("result"), raw.get("time")
    if kind not in ("prompt", "burst") or not isinstance(request, dict) or not isinstance(result, dict):
        return None
    return Entry(float(when) if isinstance(when, int | float) else 0.0, kind, request, result)


class PromptHistory:
    """The prompts run on one host."""

    def __init__(self, host: str, path: Path | None = None) -> None:
        self.host = host
        self.path = path or default_dir() / f"{host}.jsonl"

    def entries(self) -> list[Entry]:
        """Every readable line, oldest first (a line cut by a crash, or of another shape, is skipped)."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        out: list[Entry] = []
        for line in text.splitlines():
            try:
                entry = _entry(json.loads(line))
            except ValueError:
                continue
            if entry is not None:
                out.append(entry)
        return out

    def prompts(self, limit: int = RECALL) -> list[str]:
        """The distinct prompts, most recent last (a prompt run again moves to the end)."""
        seen: dict[str, None] = {}
        for entry in self.entries():
            if entry.prompt.strip():
                seen.pop(entry.prompt, None)
                seen[entry.prompt] = None
        return list(seen)[-limit:] if limit > 0 else []

    def record_run(self, request: ChatRequest, result: ChatResult, *, cancelled: bool = False) -> None:
        record: dict[str, Any] = {
            "time": time.time(),
            "kind": "prompt",
            "request": request_json(request),
            "result": result_json(result),
        }
        if cancelled:
            record["cancelled"] = True
        append_json_line(self.path, record)

    def record_burst(self, request: ChatRequest, burst: BurstResult) -> None:
        record = {
            "time": time.time(),
            "kind": "burst",
            "request": request_json(request),
            "count": burst.requests,
            "result": burst.to_json(),
        }
        append_json_line(self.path, record)
