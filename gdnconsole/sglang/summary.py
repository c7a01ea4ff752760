"""The summary of a log's last startup, as the plain data that `log summarize --json` prints."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gdnconsole.sglang.stages import Stage
from gdnconsole.sglang.tracker import StageTracker, Startup


def track(lines: Iterable[tuple[int, str]]) -> StageTracker:
    """Feed numbered lines (1-based, in order, gaps allowed) to a new tracker."""
    tracker = StageTracker()
    for number, text in lines:
        tracker.feed(text, number)
    return tracker


def summary(tracker: StageTracker, *, file: str, lines: int) -> dict[str, Any]:
    startup = tracker.current
    return {
        "file": file,
        "lines": lines,
        "sglang": tracker.sglang_lines > 0,  # false: no line of the file is SGLang's
        "startups": len(tracker.startups),
        "stage": startup.stage.label if startup else Stage.STARTING.label,
        "ready": bool(startup and startup.stage >= Stage.READY),
        "fatal": _fatal(startup),
        "warnings": [
            {"line": w.line, "rank": w.rank, "summary": w.summary}
            for w in (startup.warnings if startup else [])
        ],
        "ranks": _ranks(startup),
        "spec": _spec(startup),
        "gen_throughput": startup.gen_throughput if startup else None,
        "durations": startup.durations() if startup else {},
    }


def _fatal(startup: Startup | None) -> dict[str, Any] | None:
    fatal = startup.fatal if startup else None
    if fatal is None:
        return None
    return {"line": fatal.line, "rank": fatal.rank, "stage": fatal.stage.label, "summary": fatal.summary}


def _ranks(startup: Startup | None) -> dict[str, dict[str, Any]]:
    if startup is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for label, state in sorted(startup.scheduler_ranks().items()):
        kv = state.numbers.get("kv_tokens")
        out[label] = {
            "stage": state.stage.label,
            "weights_gb": state.weights_gb,
            "avail_gb": state.numbers.get("avail_gb"),
            "kv_tokens": int(kv) if kv is not None else None,
        }
    return out


def _spec(startup: Startup | None) -> dict[str, Any] | None:
    if startup is None or startup.accept_len is None:
        return None
    return {"accept_len": startup.accept_len, "accept_rate": startup.accept_rate}
