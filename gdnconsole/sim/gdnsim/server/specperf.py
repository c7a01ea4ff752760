"""How fast the simulated server decodes: the speculative settings and the batch size decide, with noise
from a seed. A tuning sweep against the simulator then finds an optimum inside the grid, not at a corner.

The unit is the **iteration**: one decode forward of the whole running batch (without speculation), or
one draft-then-verify round (with it). ``tokens_per_s`` (sim.json) is the decode rate of one request
without speculation: an iteration of a batch of one lasts ``t0 = 1 / tokens_per_s`` and yields one token.

- **Cost of an iteration** (memory-bound decode: each extra token in a forward costs a little):
  ``target = t0 · (1 + BETA · (B · d − 1))`` for a batch of ``B`` requests verifying ``d`` tokens each
  (``d = 1`` without speculation, else ``--speculative-num-draft-tokens``); the draft model runs
  ``s = --speculative-num-steps`` steps of ``DRAFT_COST · t0 · (1 + BETA · (B · k − 1))`` each
  (``k = --speculative-eagle-topk`` branches); spec v1 (topk > 1: no overlap schedule) costs
  ``V1_PENALTY`` more. Bigger trees cost more per step; a bigger batch makes every extra token dearer.
- **Tokens of an iteration** (per request): the bonus token, plus the drafted tokens accepted in a row.
  Position ``i`` (1-based) is accepted with ``p_i = 1 − (1 − P0 · DECAY^(i−1))^(k_eff)``: acceptance
  falls per extra step, more branches per step catch more; at most ``min(s, d − 1)`` positions can be
  accepted, and ``k_eff = min(k, (d − 1) / depth)`` (a tree pruned to ``d`` tokens has fewer branches).
- **Noise**: each iteration's duration is multiplied by ``1 + JITTER · N(0, 1)`` (kept ≥ 0.5), and each
  request's accepted tokens are drawn, both from a ``random.Random`` seeded by the speculative settings:
  the same server flags give the same noise, another combination another.

The expected per-request rate is ``accept_length / iteration``; ``expected_tokens_per_s`` says it, so that a
test can compare what a client measured with what the model meant.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

BETA = 0.03  # cost of one more token in a forward, as a share of a one-token forward
DRAFT_COST = 0.15  # one draft step (an MTP head: one layer) against one target forward
V1_PENALTY = 1.10  # spec v1 (no overlap schedule) against v2
P0 = 0.82  # acceptance of the first drafted token
DECAY = 0.75  # each later position is accepted this much less often
JITTER = 0.04  # relative spread of an iteration's duration


@dataclass(frozen=True)
class Spec:
    steps: int
    topk: int
    draft_tokens: int
    overlap: bool = True  # spec v2 (topk 1 with the overlap schedule)

    @classmethod
    def of(cls, args: Any) -> Spec | None:
        """The speculative settings the server runs with (after SGLang adjusted them), None without."""
        if not getattr(args, "speculative_algorithm", None) or not getattr(args, "speculative_num_steps", 0):
            return None
        steps = int(args.speculative_num_steps)
        topk = int(getattr(args, "speculative_eagle_topk", None) or 1)
        draft = int(getattr(args, "speculative_num_draft_tokens", None) or steps + 1)
        return cls(steps, topk, draft, overlap=topk == 1)

    @property
    def depth(self) -> int:
        return max(0, min(self.steps, self.draft_tokens - 1))


class SpecPerf:
    """The performance model of one server (``spec`` None: no speculative decoding)."""

    def __init__(self, spec: Spec | None, tokens_per_s: float, seed: int | None = None) -> None:
        self.spec = spec
        self.t0 = 1.0 / max(tokens_per_s, 0.1)
        self.rng = random.Random(seed if seed is not None else seed_of(spec))

    # --- the model's expectations ---------------------------------------------------------------------

    def accept_probs(self) -> list[float]:
        spec = self.spec
        if spec is None or spec.depth == 0:
            return []
        branches = max(1.0, min(float(spec.topk), (spec.draft_tokens - 1) / spec.depth))
        return [1.0 - (1.0 - P0 * DECAY**i) ** branches for i in range(spec.depth)]

    def expected_accept_length(self) -> float:
        """Tokens per iteration per request, on average (1.0 without speculation)."""
        total, run = 1.0, 1.0
        for p in self.accept_probs():
            run *= p
            total += run
        return total

    def iteration_s(self, batch: int) -> float:
        """The mean duration of one iteration with ``batch`` running requests."""
        batch = max(1, batch)
        spec = self.spec
        tokens = batch * (spec.draft_tokens if spec is not None else 1)
        seconds = self.t0 * (1.0 + BETA * (tokens - 1))
        if spec is not None:
            seconds += spec.steps * DRAFT_COST * self.t0 * (1.0 + BETA * (batch * spec.topk - 1))
            if not spec.overlap:
                seconds *= V1_PENALTY
        return seconds

    def expected_tokens_per_s(self, batch: int) -> float:
        """One request's decode rate with ``batch`` requests running together."""
        return self.expected_accept_length() / self.iteration_s(batch)

    # --- drawing one iteration ------------------------------------------------------------------------

    def draw_accepted(self) -> int:
        """Tokens one request gets from one iteration: the bonus token and the accepted run."""
        accepted = 1
        for p in self.accept_probs():
            if self.rng.random() >= p:
                break
            accepted += 1
        return accepted

    def draw_iteration_s(self, batch: int) -> float:
        return self.iteration_s(batch) * max(0.5, 1.0 + JITTER * self.rng.gauss(0.0, 1.0))


def seed_of(spec: Spec | None) -> int:
    """The noise of a server follows from its speculative settings (str hashes vary per process)."""
    if spec is None:
        return 0
    return spec.steps * 1_000_003 + spec.topk * 1_009 + spec.draft_tokens * 7 + (0 if spec.overlap else 1)
