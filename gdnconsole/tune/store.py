"""Sweeps kept on this machine, beside the launch journal: ``HOST.tune.jsonl`` (one JSON object per
line, only ever appended). A ``result`` line per combination as soon as it is known, so that an
interrupted sweep keeps what it measured and ``--resume`` reuses it; a ``sweep`` line when a sweep ends
(or stops): the journal's one entry for it, naming its attempts and its best."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gdnconsole.host.journal import default_dir
from gdnconsole.host.jsonlines import append_json_line
from gdnconsole.tune.grid import Combo
from gdnconsole.tune.results import ComboResult, Identity


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
