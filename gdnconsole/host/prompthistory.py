"""The prompt history of one host: every prompt run from the prompt panel, with its figures, on this machine.

One JSON object per line in ``<user data dir>/prompts/HOST.jsonl`` (``$GDNCONSOLE_PROMPTS_DIR`` instead of
the user data dir's ``prompts`` folder). The file is only ever appended to; a console that dies mid-write
loses at most that line; a torn or damaged line is skipped when the file is read, with one warning
per read (as the launch journal does).

A line is a single run (``"kind": "prompt"``: the request, and the result's figures with its text cut to
``TEXT_CHARS``) or a burst (``"kind": "burst"``: the request, the count, the burst's summary).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gdnconsole import readback
from gdnconsole.chat.burst import BurstResult
from gdnconsole.chat.model import ChatRequest, ChatResult
from gdnconsole.host.jsonlines import append_json_line, data_dir
from gdnconsole.readback import BadRecord

PROMPTS_DIR_ENV = "GDNCONSOLE_PROMPTS_DIR"
TEXT_CHARS = 2000  # of an answer's text (and reasoning) kept in the file
RECALL = 200  # distinct prompts offered for recall
MAX_FILE_BYTES = 256 << 20  # thousands of runs with their answers; a larger file is not read
Warn = Callable[[str], None]


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


def parse_entry(line: bytes) -> Entry:
    """One line of the file as an Entry; BadRecord saying what is wrong with it."""
    raw = readback.loads_json(line)
    if not isinstance(raw, dict):
        raise BadRecord("not an object")
    kind, request, result, when = raw.get("kind"), raw.get("request"), raw.get("result"), raw.get("time")
    if kind not in ("prompt", "burst"):
        raise BadRecord("kind is neither prompt nor burst")
    if not isinstance(request, dict) or not isinstance(result, dict):
        raise BadRecord("request or result is not an object")
    if isinstance(when, bool) or not isinstance(when, int | float) or not _finite(when):
        raise BadRecord("time is not a number")  # (a 400-digit integer is not finite as a float either)
    return Entry(float(when), kind, request, result)


def _finite(value: int | float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _to_stderr(message: str) -> None:
    print(f"gdnconsole: warning: {message}", file=sys.stderr)


class PromptHistory:
    """The prompts run on one host. ``warn`` hears each read's damaged lines, once per line (stderr)."""

    def __init__(self, host: str, path: Path | None = None, *, warn: Warn | None = None) -> None:
        self.host = host
        self.path = path or default_dir() / f"{host}.jsonl"
        self.warn = warn or _to_stderr
        self.warnings: list[str] = []  # every warning said, in order
        self._warned: set[int] = set()  # line numbers already warned about

    def entries(self) -> list[Entry]:
        """Every good line, oldest first; a line cut by a crash, or of another shape, is skipped, and
        one warning per read says how many were and where the first is."""
        try:
            data = readback.read_regular(self.path, MAX_FILE_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:  # a directory, a FIFO, a file of gigabytes: no history, said once
            self._say(f"the prompt history {self.path} cannot be read: {exc.strerror or exc}")
            return []
        out: list[Entry] = []
        damaged: list[tuple[int, str]] = []
        for number, line in enumerate(data.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                out.append(parse_entry(line))
            except BadRecord as exc:
                if number not in self._warned:
                    damaged.append((number, str(exc)))
        if damaged:
            self._warned.update(n for n, _ in damaged)
            first, why = damaged[0]
            count = "1 damaged line" if len(damaged) == 1 else f"{len(damaged)} damaged lines"
            self._say(f"skipped {count} in {self.path} (first at line {first}: {why})")
        return out

    def _say(self, message: str) -> None:
        if message not in self.warnings:  # an unreadable file is said once, not at every read
            self.warnings.append(message)
            self.warn(message)

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
