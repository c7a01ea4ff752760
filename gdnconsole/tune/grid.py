"""The grid of speculative settings to sweep, and the batch sizes: parsed from the command line's words."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gdnconsole.errors import ConsoleError

KEYS = ("num_steps", "eagle_topk", "num_draft_tokens")
DEFAULT_GRID = "num_steps=1,2,3 eagle_topk=1 num_draft_tokens=2,3,4"
DEFAULT_BATCHES = "1,8"
MAX_COMBOS = 64  # a sweep relaunches the server once per combination: more is a typo, not a plan


class GridError(ConsoleError, ValueError):
    """A grid or batch list that cannot be read; the message says which word and why."""


@dataclass(frozen=True, order=True)
class Combo:
    num_steps: int
    eagle_topk: int
    num_draft_tokens: int

    def to_json(self) -> dict[str, int]:
        return {
            "num_steps": self.num_steps,
            "eagle_topk": self.eagle_topk,
            "num_draft_tokens": self.num_draft_tokens,
        }

    @classmethod
    def parse(cls, raw: Any) -> Combo | None:
        if not isinstance(raw, dict):
            return None
        try:
            return cls(*(int(raw[k]) for k in KEYS))
        except (KeyError, TypeError, ValueError):
            return None

    @property
    def label(self) -> str:
        """Short and stable: "s2 k1 d3"."""
        return f"s{self.num_steps} k{self.eagle_topk} d{self.num_draft_tokens}"


def _values(key: str, text: str) -> list[int]:
    values: list[int] = []
    for word in text.split(","):
        word = word.strip()
        if not word.isdigit() or int(word) < 1:
            raise GridError(f"grid: {key}={text!r}: {word!r} is not an integer ≥ 1")
        if int(word) not in values:
            values.append(int(word))
    return values


def parse_grid(text: str) -> list[Combo]:
    """``"num_steps=1,2,3 eagle_topk=1 num_draft_tokens=2,3,4"`` → the combinations, in that order (the
    first key varies slowest). Every key must be given once."""
    given: dict[str, list[int]] = {}
    for word in text.split():
        key, eq, values = word.partition("=")
        if not eq or key not in KEYS:
            raise GridError(f"grid: {word!r} is not KEY=V1,V2… with KEY one of {', '.join(KEYS)}")
        if key in given:
            raise GridError(f"grid: {key} is given twice")
        given[key] = _values(key, values)
    missing = [k for k in KEYS if k not in given]
    if missing:
        raise GridError(f"grid: no values for {', '.join(missing)} (e.g. {DEFAULT_GRID!r})")
    combos = [Combo(*values) for values in itertools.product(*(given[k] for k in KEYS))]
    if len(combos) > MAX_COMBOS:
        raise GridError(f"grid: {len(combos)} combinations, more than {MAX_COMBOS}")
    return combos


def parse_batches(text: str) -> list[int]:
    """``"1,8"`` → [1, 8]: the number of requests in flight at once, each measured in turn."""
    batches = _values("batch", text)
    if any(b > 256 for b in batches):
        raise GridError(f"batch: {text!r}: at most 256 requests at once")
    return batches


def grid_text(combos: Sequence[Combo]) -> str:
    """The grid's words again: ``"num_steps=1,2 eagle_topk=1 num_draft_tokens=2,3"`` (values sorted)."""
    values: dict[str, list[int]] = {k: [] for k in KEYS}
    for combo in combos:
        for key, value in combo.to_json().items():
            if value not in values[key]:
                values[key].append(value)
    return " ".join(f"{k}={','.join(map(str, sorted(v)))}" for k, v in values.items() if v)
