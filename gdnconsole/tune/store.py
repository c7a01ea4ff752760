"""Sweeps kept on this machine, beside the launch journal: ``HOST.tune.jsonl`` (one JSON object per
line, only ever appended). A ``result`` line per combination as soon as it is known, so that an
interrupted sweep keeps what it measured and ``--resume`` reuses it; a ``sweep`` line when a sweep ends
(or stops): the journal's one entry for it (``SweepEntry``, a line of the journal screen), naming its
grid, its attempts, its best and how many combinations were measured, rejected or crashed, and holding the
whole `tune --json` object so that the tune screen can show the last sweep again.

Every line read back may be damaged (cut by a crash, edited, written by another version): each is
checked field by field against what its readers (``ComboResult.from_json``, ``SweepEntry.of``,
``sweep.from_record``) take from it, and a bad one skipped, with one warning per read naming the file,
how many lines were skipped and the first one's line and fault."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gdnconsole import readback
from gdnconsole.host.journal import default_dir
from gdnconsole.host.jsonlines import append_json_line
from gdnconsole.tune.grid import KEYS, Combo
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


Warn = Callable[[str], None]
STORE_MAX = 256 << 20  # sweeps of thousands of combinations; a larger file is not read


class TuneStore:
    def __init__(self, host: str, folder: Path | None = None, *, warn: Warn | None = None) -> None:
        self.folder = folder or default_dir()
        self.path = self.folder / f"{host}.tune.jsonl"
        self.warn = warn or _to_stderr
        self.warnings: list[str] = []  # every warning said (the screens show them)
        self._warned: set[int] = set()  # line numbers already warned about

    def _lines(self) -> list[dict[str, Any]]:
        """Every good record, in the file's order; the damaged ones skipped and warned about once."""
        try:
            data = readback.read_regular(self.path, STORE_MAX)  # a FIFO is said, not waited on
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            self._say(f"the tune store {self.path} cannot be read: {exc.strerror or exc}")
            return []
        out, damaged = [], []
        for number, line in enumerate(data.split(b"\n"), start=1):
            if not line.strip():
                continue
            record, why = parse_record(line)
            if record is not None:
                out.append(record)
            elif number not in self._warned:
                damaged.append((number, why))
        if damaged:
            self._warned.update(n for n, _ in damaged)
            count, (first, why) = len(damaged), damaged[0]
            lines = "line" if count == 1 else "lines"
            self._say(f"skipped {count} damaged {lines} in {self.path} (first at line {first}: {why})")
        return out

    def _say(self, message: str) -> None:
        self.warnings.append(message)
        self.warn(message)

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
            result = ComboResult.from_json(record["result"])
            if result is not None and result.status == "measured" and set(batches) <= set(result.by_batch):
                result.resumed = True
                found[result.combo] = result
        return found

    def sweeps(self) -> list[dict[str, Any]]:
        return [r for r in self._lines() if r.get("kind") == "sweep"]

    def entries(self) -> list[SweepEntry]:
        """Every sweep, oldest first, as the journal lists them."""
        return [e for e in map(SweepEntry.of, self.sweeps()) if e is not None]


def _to_stderr(message: str) -> None:
    print(f"gdnconsole: warning: {message}", file=sys.stderr)


# -- reading a line: typed at the edge ---------------------------------------------------------------


class _Bad(ValueError):
    pass


def _need(ok: bool, why: str) -> None:
    if not ok:
        raise _Bad(why)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _optional(raw: Mapping[str, Any], name: str, ok: Callable[[Any], bool], what: str) -> None:
    value = raw.get(name)
    _need(value is None or ok(value), f"{name} is not {what}")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _ints(value: Any) -> bool:
    return isinstance(value, list) and all(_is_int(v) for v in value)


def _combo(value: Any) -> bool:
    return isinstance(value, dict) and all(_is_int(value.get(k)) for k in KEYS)


def _check_figures(raw: Any, where: str) -> None:
    _need(isinstance(raw, dict), f"{where} is not an object")
    for name in ("n", "failed"):
        _optional(raw, name, _is_int, "a whole number")


def check_result(raw: Any, where: str = "result") -> None:
    """A combination's result as ``ComboResult.from_json`` reads it; _Bad names the first fault."""
    _need(isinstance(raw, dict), f"{where} is not an object")
    _need(raw.get("status") in STATUSES, f"{where}'s status is not one a sweep gives")
    for name in ("combo", "same_as"):
        _optional(raw, name, _combo, "a combination of whole numbers")
    _optional(raw, "rule", lambda v: isinstance(v, dict), "an object")
    for name in ("notices", "warnings"):
        _optional(raw, name, _strings, "a list of strings")
    _optional(raw, "gpu_mib", lambda v: isinstance(v, dict) and all(map(_is_int, v.values())), "MiB per rank")
    by_batch = raw.get("by_batch")
    _optional(raw, "by_batch", lambda v: isinstance(v, dict), "an object")
    for batch, figures in (by_batch or {}).items():
        _need(batch.isascii() and batch.isdigit(), f"{where} has a batch size that is not a whole number")
        _check_figures(figures, f"{where}'s figures at batch {batch}")


def _check_sweep(record: Mapping[str, Any]) -> None:
    """A sweep's line as ``SweepEntry.of`` and ``sweep.from_record`` read it."""
    _need(_is_number(record.get("started", record.get("time"))), "started is not a time")
    _optional(record, "ended", _is_number, "a time")
    _optional(record, "batches", _ints, "a list of whole numbers")
    _optional(record, "attempts", _ints, "a list of whole numbers")
    _optional(record, "results", lambda v: isinstance(v, list), "a list")
    for name in ("profile", "grid"):
        _optional(record, name, lambda v: isinstance(v, str), "a string")
    _optional(record, "key", lambda v: isinstance(v, dict), "an object")
    _optional(record, "best", lambda v: isinstance(v, dict) and _combo(v.get("combo")), "a best combination")
    _optional(record.get("key") or {}, "max_tokens", _is_int, "a whole number")
    raw = record.get("sweep")
    if raw is None:
        return
    _need(isinstance(raw, dict), "sweep is not an object")
    _optional(raw, "gpus", lambda v: isinstance(v, list), "a list")
    _optional(raw, "batches", lambda v: isinstance(v, list), "a list")
    _optional(raw, "results", lambda v: isinstance(v, list), "a list")
    if raw.get("baseline") is not None:
        check_result(raw["baseline"], "the baseline")
    for result in raw.get("results") or []:
        check_result(result, "a result")


def parse_record(line: bytes) -> tuple[dict[str, Any] | None, str]:
    """One line of the store as its record, or (None, what is wrong with it)."""
    try:
        record = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except ValueError:
        return None, "not JSON (a line cut by a crash?)"
    except RecursionError:  # arrays thousands deep exhaust the stack of json's decoder
        return None, "nested too deeply"
    try:
        _need(isinstance(record, dict), "not an object")
        kind = record.get("kind")
        if kind == "result":
            _need(isinstance(record.get("key"), dict), "key is not an object")
            check_result(record.get("result"))
        else:
            _need(kind == "sweep", "kind is neither result nor sweep")
            _check_sweep(record)
    except _Bad as exc:
        return None, str(exc)
    return record, ""
