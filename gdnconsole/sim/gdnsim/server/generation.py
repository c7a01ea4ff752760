"""Deterministic model output: the same messages always give the same answer.

Text is made of word-sized tokens drawn from a seed that hashes the messages; with a reasoning parser the
first part is the reasoning (``reasoning_content``) unless the request turns thinking off.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass

WORDS = [
    "the",
    "model",
    "answers",
    "from",
    "a",
    "simulated",
    "GPU",
    "host",
    "and",
    "every",
    "token",
    "arrives",
    "on",
    "time",
    "while",
    "the",
    "console",
    "measures",
    "latency",
    "throughput",
    "and",
    "memory",
    "of",
    "each",
    "rank",
    "so",
    "operators",
    "can",
    "see",
    "what",
    "the",
    "server",
    "does",
    "under",
    "load",
    "with",
    "speculative",
    "decoding",
    "enabled",
    "through",
    "the",
    "draft",
    "heads",
    "of",
    "the",
    "hybrid",
    "network",
]
THINKING = [
    "let",
    "me",
    "think",
    "about",
    "what",
    "the",
    "user",
    "asks",
    "first",
    "then",
    "check",
    "the",
    "facts",
    "and",
    "give",
    "a",
    "short",
    "clear",
    "answer",
    "considering",
    "the",
    "context",
    "carefully",
    "before",
    "writing",
    "it",
    "down",
]


@dataclass(frozen=True)
class Completion:
    reasoning: list[str]  # tokens of reasoning_content (empty without a reasoning parser)
    content: list[str]  # tokens of the answer
    finish_reason: str  # "stop" or "length"

    @property
    def tokens(self) -> list[tuple[str, str]]:
        """(field, text) per token, reasoning first."""
        return [("reasoning_content", t) for t in self.reasoning] + [("content", t) for t in self.content]


def seed_of(payload: object) -> int:
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _sentence(rng: random.Random, words: tuple[str, ...] | list[str], count: int) -> list[str]:
    tokens = []
    for i in range(count):
        word = rng.choice(words)
        tokens.append(word.capitalize() if i == 0 else " " + word)
    if tokens:
        tokens[-1] += "."
    return tokens


def complete(
    messages: object, max_tokens: int | None, thinking: bool, ignore_eos: bool = False
) -> Completion:
    """The answer to ``messages``, cut at ``max_tokens`` (finish_reason "length" then). With
    ``ignore_eos`` (SGLang's sampling parameter, which benchmarks use for a fixed output length) the
    answer goes on, sentence after sentence, until ``max_tokens``."""
    rng = random.Random(seed_of(messages))
    reasoning = _sentence(rng, THINKING, rng.randint(12, 24)) if thinking else []
    content = _sentence(rng, WORDS, rng.randint(16, 40))
    while ignore_eos and max_tokens is not None and len(reasoning) + len(content) < max_tokens:
        content += _sentence(rng, WORDS, rng.randint(16, 40))
    limit = max_tokens if max_tokens is not None and max_tokens >= 0 else len(reasoning) + len(content)
    if len(reasoning) + len(content) <= limit and not (ignore_eos and max_tokens is not None):
        return Completion(reasoning, content, "stop")
    kept_reasoning = reasoning[:limit]
    return Completion(kept_reasoning, content[: limit - len(kept_reasoning)], "length")


def count_prompt_tokens(messages: object) -> int:
    """A tokenizer's count, roughly: words × 1.3 plus the chat template's framing."""
    text = json.dumps(messages, default=str)
    return 8 + int(len(text.split()) * 1.3) + text.count('"role"') * 4
