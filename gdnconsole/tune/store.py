"""Sweeps kept on this machine, beside the launch journal: ``HOST.tune.jsonl`` (one JSON object per
line, only ever appended). A ``result`` line per combination as soon as it is known, so that an
interrupted sweep keeps what it measured and ``--resume`` reuses it; a ``sweep`` line when a sweep ends
(or stops): the journal's one entry for it (``SweepEntry``, a line of the journal screen), naming its
grid, its attempts, its best and how many combinations were measured, rejected or crashed, and holding the
whole `tune --json` object so that the tune screen can show the last sweep again."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gdnconsole.host.journal import default_dir
from gdnconsole.host.jsonlines import append_json_line
from gdnconsole.tune.grid import Combo
from gdnconsole.tune.results import ComboResult, Identity

STATUSES = ("measured", "rejected", "crashed", "timeout")


@dataclass(frozen=True)
class SweepEntry:
    """One sweep as the journal lists it."""

    started: float
    ended: float | None
    profile: str
    grid: str  # "num_steps=1,2 eagle_topk=1 num_draft_tokens=2,3" ("" in a record older than the field)
    batches: tuple[int, ...]
    interrupted: bool
    attempts: tuple[int, ...]  # the journal's attempt numbers, in order, each once
    counts: dict[str, int]  # combinations (not the baseline) per status
    best: str | None  # "s2 k1 d3 at batch 1, 1.55×"
    results: tuple[tuple[str, str, int | None], ...] = ()  # (combination, status, attempt), baseline first
    record: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def counts_text(self) -> str:
        """ "6 measured, 1 rejected, 1 crashed": every status a combination had, in that order."""
        return ", ".join(f"{self.counts[s]} {s}" for s in STATUSES if self.counts.get(s))

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> SweepEntry | None:
        try:
            started = float(record.get("started") or record["time"])
        except (KeyError, TypeError, ValueError):
            return None
        results = []
        for raw in record.get("results") or []:
            if isinstance(raw, Mapping) and isinstance(raw.get("combo"), str):
                attempt = raw.get("attempt") if isinstance(raw.get("attempt"), int) else None
                results.append((raw["combo"], str(raw.get("status")), attempt))
        counts: dict[str, int] = {}
        for label, status, _ in results:
            if label != "baseline":
                counts[status] = counts.get(status, 0) + 1
        attempts = [a for a in record.get("attempts") or [] if isinstance(a, int)]
        ended = record.get("ended")
        return cls(
            started=started,
            ended=float(ended) if isinstance(ended, int | float) else None,
            profile=str(record.get("profile") or ""),
            grid=str(record.get("grid") or ""),
            batches=tuple(b for b in record.get("batches") or [] if isinstance(b, int)),
            interrupted=bool(record.get("interrupted")),
            attempts=tuple(dict.fromkeys(attempts)),
            counts=counts,
            best=_best_text(record.get("best")),
            results=tuple(results),
            record=record,
        )


def _best_text(raw: Any) -> str | None:
    if not isinstance(raw, Mapping):
        return None
    combo = Combo.parse(raw.get("combo"))
    speedup, batch = raw.get("speedup"), raw.get("batch")
    if combo is None or not isinstance(speedup, int | float):
        return None
    return f"{combo.label} at batch {batch}, {speedup:.2f}×"


class TuneStore:
    def __init__(self, host: str, folder: Path | None = None) -> None:
        self.folder = folder or default_dir()
        self.path = self.folder / f"{host}.tune.jsonl"

    def _lines(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line torn by a crash
            if isinstance(record, dict):
                out.append(record)
        return out

    def add_result(self, identity: Identity, result: ComboResult) -> None:
        append_json_line(
            self.path,
            {"kind": "result", "time": time.time(), "key": identity.key(), "result": result.to_json()},
        )

    def add_sweep(self, record: dict[str, Any]) -> None:
        append_json_line(self.path, {"kind": "sweep", "time": time.time(), **record})

    def measured(self, identity: Identity, batches: Sequence[int]) -> dict[Combo | None, ComboResult]:
        """The latest measured result of each combination (None: the baseline) for the same identity,
        with figures at every one of ``batches``."""
        key = identity.key()
        found: dict[Combo | None, ComboResult] = {}
        for record in self._lines():
            if record.get("kind") != "result" or record.get("key") != key:
                continue
            result = ComboResult.from_json(record.get("result") or {})
            if result is not None and result.status == "measured" and set(batches) <= set(result.by_batch):
                result.resumed = True
                found[result.combo] = result
        return found

    def sweeps(self) -> list[dict[str, Any]]:
        return [r for r in self._lines() if r.get("kind") == "sweep"]

    def entries(self) -> list[SweepEntry]:
        """Every sweep, oldest first, as the journal lists them."""
        return [e for e in map(SweepEntry.of, self.sweeps()) if e is not None]
