"""The prompt history file: one JSON line per run or burst, appended only, torn lines skipped, prompts
recalled distinct and newest last, long answers cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gdnconsole.chat.burst import BurstResult
from gdnconsole.chat.client import ChatRequest, ChatResult
from gdnconsole.host.prompthistory import PROMPTS_DIR_ENV, TEXT_CHARS, PromptHistory, default_dir


def ok(text: str = "Hello.", **figures: object) -> ChatResult:
    values: dict[str, object] = {"ok": True, "status": 200, "ttft_ms": 120.04, "total_ms": 900.0,
                                 "prompt_tokens": 12, "completion_tokens": 8, "tokens_per_s": 8.04}  # fmt: skip
    values.update(figures)
    return ChatResult(text=text, **values)  # type: ignore[arg-type]


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_default_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROMPTS_DIR_ENV, str(tmp_path / "p"))
    assert default_dir() == tmp_path / "p"
    assert PromptHistory("ct129").path == tmp_path / "p" / "ct129.jsonl"
    monkeypatch.delenv(PROMPTS_DIR_ENV)
    assert default_dir().name == "prompts"


def test_a_run_is_recorded_with_its_request_and_figures(tmp_path: Path) -> None:
    history = PromptHistory("ct129", tmp_path / "h" / "ct129.jsonl")
    request = ChatRequest("Say hi", system="be brief", max_tokens=16, temperature=0.0, thinking=True)
    history.record_run(request, ok(accept_length=1.8, accept_source="server"))
    [record] = lines(history.path)
    assert record["kind"] == "prompt" and isinstance(record["time"], float)
    assert record["request"] == {"prompt": "Say hi", "system": "be brief", "max_tokens": 16, "temperature": 0.0,
                                 "stream": True, "thinking": True}  # fmt: skip
    result = record["result"]
    assert isinstance(result, dict)
    assert result["ttft_ms"] == 120.0 and result["tokens_per_s"] == 8.0 and result["text"] == "Hello."
    assert result["accept_length"] == 1.8 and result["accept_source"] == "server"
    assert "cancelled" not in record


def test_long_answers_are_cut_and_their_length_kept(tmp_path: Path) -> None:
    history = PromptHistory("h", tmp_path / "h.jsonl")
    history.record_run(ChatRequest("long"), ok("x" * 5000, reasoning="r" * 3000))
    result = lines(history.path)[0]["result"]
    assert isinstance(result, dict)
    assert len(result["text"]) == TEXT_CHARS and result["text"].endswith("…") and result["text_chars"] == 5000
    assert len(result["reasoning"]) == TEXT_CHARS and result["reasoning_chars"] == 3000


def test_a_cancelled_run_and_a_burst(tmp_path: Path) -> None:
    history = PromptHistory("h", tmp_path / "h.jsonl")
    history.record_run(ChatRequest("a"), ChatResult(error="cancelled by the user"), cancelled=True)
    failed = ChatResult(error="HTTP 503 Service Unavailable")
    history.record_burst(ChatRequest("b"), BurstResult(3, 1500.0, [ok(), ok(), failed]))
    first, second = lines(history.path)
    assert first["cancelled"] is True
    assert second["kind"] == "burst" and second["count"] == 3
    summary = second["result"]
    assert isinstance(summary, dict)
    assert summary["ok"] == 2 and summary["errors"] == [{"error": "HTTP 503 Service Unavailable", "count": 1}]
    assert [e.kind for e in history.entries()] == ["prompt", "burst"]


def test_prompts_are_distinct_newest_last(tmp_path: Path) -> None:
    history = PromptHistory("h", tmp_path / "h.jsonl")
    for prompt in ("one", "two", "one", "three", "  "):
        history.record_run(ChatRequest(prompt), ok())
    history.record_burst(ChatRequest("four"), BurstResult(1, 10.0, [ok()]))
    assert history.prompts() == ["two", "one", "three", "four"]
    assert history.prompts(limit=2) == ["three", "four"]
    assert PromptHistory("nobody", tmp_path / "none.jsonl").prompts() == []


def test_torn_and_foreign_lines_are_skipped_and_never_glued(tmp_path: Path) -> None:
    history = PromptHistory("h", tmp_path / "h.jsonl")
    history.record_run(ChatRequest("before"), ok())
    with history.path.open("a") as fh:
        fh.write('{"time": 1, "kind": "prompt", "request": {"prompt": "torn')  # a crash mid-write
    history.record_run(ChatRequest("after"), ok())
    with history.path.open("a") as fh:
        fh.write('[1, 2]\n{"kind": "other", "request": {}, "result": {}}\n')
    assert history.prompts() == ["before", "after"]
    assert len(history.path.read_text().splitlines()) == 5  # the torn line stayed alone
