"""The summary of a log's last startup, as the plain data that `log summarize --json` prints."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gdnconsole.sglang.memory import log_split_gb
from gdnconsole.sglang.stages import Stage
from gdnconsole.sglang.tracker import Problem, StageTracker, Startup

# What each kernel/backend choice is called on screen, in the order SGLang makes them (FACTS §2.1 row 6).
BACKEND_NAMES: dict[str, str] = {
    "attention": "attention backend",
    "multimodal_attention": "multimodal attention",
    "linear_attention": "linear attention kernels",
    "hybrid_linear_attention": "linear attention backend (GDN)",
    "gdn_kernels": "GDN kernel dispatcher",
    "cute_dsl_gdn_decode": "CuTe DSL GDN decode",
}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


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
        "ready": bool(startup and startup.reached_ready),
        "fatal": fatal_json(startup.fatal if startup else None),
        "warnings": warning_groups(startup.warnings if startup else []),
        "ranks": _ranks(startup),
        "spec": _spec(startup),
        "gen_throughput": startup.gen_throughput if startup else None,
        "durations": startup.durations() if startup else {},
        "kernels": kernels(startup),
        "memory": memory_split(startup),
    }


def fatal_json(fatal: Problem | None) -> dict[str, Any] | None:
    """The fatal problem: where, who (the rank, else the process, when the lines say), what, the fix."""
    if fatal is None:
        return None
    return {
        "line": fatal.line,
        "rank": fatal.rank,
        "process": fatal.process,
        "ranks": list(fatal.ranks) if fatal.collective else None,  # every rank, for a collective hang
        "stage": fatal.stage.label,
        "summary": fatal.summary,
        "hint": fatal.hint,
    }


def warning_groups(warnings: Iterable[Problem]) -> list[dict[str, Any]]:
    """Warnings, a repeated one once: the same text (numbers aside: a retraction's ratios change) on any
    rank is one entry with its count, the ranks that said it, and its first line."""
    groups: dict[str, dict[str, Any]] = {}
    for w in warnings:
        key = _NUMBER.sub("#", w.summary)
        group = groups.get(key)
        if group is None:
            groups[key] = {"line": w.line, "rank": w.rank, "summary": w.summary, "count": 1, "ranks": []}
            group = groups[key]
        else:
            group["count"] += 1
        if w.rank is not None and w.rank not in group["ranks"]:
            group["ranks"].append(w.rank)
    return list(groups.values())


def kernels(startup: Startup | None) -> dict[str, str]:
    """The kernels and backends the log says SGLang chose, in SGLang's order."""
    if startup is None:
        return {}
    chosen = startup.backends
    return {name: chosen[name] for name in BACKEND_NAMES if name in chosen}


def memory_split(startup: Startup | None) -> dict[str, dict[str, float]]:
    """Per rank, GB of weights / KV / mamba / graphs the log sized, and the free memory it last said."""
    if startup is None:
        return {}
    out: dict[str, dict[str, float]] = {}
    for label, state in sorted(startup.scheduler_ranks().items()):
        split = log_split_gb(state.numbers, state.weights_gb, state.draft_weights_gb)
        if split:
            out[label] = split
    return out


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
