"""SGLang's ``ignore_eos``: the simulated answer goes on to ``max_tokens`` (a benchmark's fixed length)."""

from __future__ import annotations

from tests.simmodules import import_sim

generation = import_sim("gdnsim.server.generation")
MESSAGES = [{"role": "user", "content": "Say hello."}]


def test_ignore_eos_answers_exactly_max_tokens() -> None:
    natural = generation.complete(MESSAGES, 500, thinking=True)
    assert natural.finish_reason == "stop" and len(natural.tokens) < 100
    fixed = generation.complete(MESSAGES, 300, thinking=True, ignore_eos=True)
    assert len(fixed.tokens) == 300 and fixed.finish_reason == "length"
    assert fixed.tokens[: len(natural.tokens)] == natural.tokens  # the same answer, longer
    assert generation.complete(MESSAGES, None, thinking=False, ignore_eos=True) == generation.complete(
        MESSAGES, None, thinking=False
    )
