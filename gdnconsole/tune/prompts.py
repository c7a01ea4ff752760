"""The prompts a sweep measures with: two shipped sets (fixed order, sent at temperature 0) or the
user's file, one prompt per line. A set is named by its name and a digest of its text, so that a resumed
sweep only reuses figures measured with the very same prompts."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from gdnconsole.tune.grid import GridError

CHAT = (
    "Say hello in one short sentence.",
    "What is the capital of France, and why is it famous?",
    "Give me three tips for sleeping better.",
    "Explain what a GPU does in two sentences.",
    "Write a haiku about autumn rain.",
    "What is the difference between weather and climate?",
    "Summarise the plot of Romeo and Juliet in three sentences.",
    "How do I politely decline a meeting invitation?",
)
CODE = (
    "Write a Python function that reverses a linked list.",
    "Explain what this does: [x * x for x in range(10) if x % 2]",
    "Write a SQL query that returns the ten most recent orders per customer.",
    "Write a bash one-liner that counts the lines of every .py file in a tree.",
    "What is the time complexity of binary search, and why?",
    "Write a Rust function that parses a comma-separated list of integers.",
    "Refactor this to use a dict: if a == 1: f() elif a == 2: g() elif a == 3: h()",
    "Write a unit test for a function add(a, b) with pytest.",
)
SHIPPED = {"chat": CHAT, "code": CODE}


@dataclass(frozen=True)
class PromptSet:
    name: str
    prompts: tuple[str, ...]

    @property
    def digest(self) -> str:
        return hashlib.sha256("\n".join(self.prompts).encode("utf-8")).hexdigest()[:12]

    @property
    def ident(self) -> str:
        """What a measurement names as its prompt set: "chat@1a2b3c4d5e6f"."""
        return f"{self.name}@{self.digest}"


def load(name: str) -> PromptSet:
    """A shipped set by name, else a file of prompts (one per line; blank lines and # comments skipped)."""
    if name in SHIPPED:
        return PromptSet(name, SHIPPED[name])
    path = Path(name).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GridError(
            f"prompts: {name!r} is neither a shipped set ({', '.join(SHIPPED)}) nor a readable file: {exc}"
        ) from None
    prompts = tuple(
        line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    )
    if not prompts:
        raise GridError(f"prompts: {path} has no prompt (one per line)")
    return PromptSet(path.name, prompts)
