"""The tune screen on hand-set, deterministic state for `make screenshots` and its snapshot test: ct129's
sweep of the issue's grid, figures from the simulator's performance model (one combination crashed)."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from gdnconsole.tune.grid import Combo, parse_grid
from gdnconsole.tune.results import BatchFigures, ComboResult, Identity, set_speedups
from gdnconsole.tune.sweep import Sweep
from gdnconsole.ui.screens.tune import TuneScreen
from tests.simmodules import import_sim
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import on_screen, until

specperf = import_sim("gdnsim.server.specperf")
RATE = 40.0  # ct129's decode rate without speculation, one request
NOTICE = "SGLang runs NEXTN as EAGLE: the model's own MTP layers are the draft model."
OOM = "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.02 GiB."


def figures(combo: Combo | None, batch: int, wobble: float) -> BatchFigures:
    spec = specperf.Spec(combo.num_steps, 1, combo.num_steps + 1) if combo else None
    model = specperf.SpecPerf(spec, RATE)
    rate = model.expected_tokens_per_s(batch) * (1 + wobble)
    return BatchFigures(
        batch=batch, n=8, tokens_per_s=rate * batch * 0.93, request_tokens_per_s=rate,
        ttft_p50_ms=62.0 + 9 * batch, ttft_p90_ms=80.0 + 11 * batch, ttft_max_ms=95.0 + 12 * batch,
        accept_length=model.expected_accept_length() if combo else None, accept_source="server",
        spread=0.02 + abs(wobble),
    )  # fmt: skip


def adjusted(combo: Combo) -> list[str]:
    """SGLang's own change to a topk-1 combination's draft tokens, as the plan says it."""
    if combo.num_draft_tokens == combo.num_steps + 1:
        return []
    return [
        f"SGLang would set --speculative-num-draft-tokens to {combo.num_steps + 1} (num steps + 1) "
        f"(you gave {combo.num_draft_tokens}), because --speculative-eagle-topk is 1."
    ]


def measured(combo: Combo | None, n: int) -> ComboResult:
    """A combination that was launched: the baseline, or one whose flags SGLang runs as given."""
    if combo == Combo(3, 1, 4):
        return ComboResult(combo, "crashed", fatal=OOM, startup_s=41.2, notices=[NOTICE], attempt=12 + n)
    wobble = ((n * 37) % 7 - 3) / 200
    return ComboResult(
        combo, "measured", notices=[NOTICE] if combo else [], startup_s=48.0 + n % 4,
        kv_tokens=163349 if combo is None else 81815 + 4421 * (combo.num_steps - 1), attempt=12 + n,
        by_batch={b: figures(combo, b, wobble) for b in (1, 8)},
    )  # fmt: skip


def sweep() -> Sweep:
    """The issue's grid as a sweep runs it: each number of steps launched once (topk 1: SGLang sets the
    draft tokens to steps + 1 itself), the other draft-token counts sharing its figures."""
    ident = Identity(
        "ct129", "0.5.11", "Qwen/Qwen3.6-27B", ["NVIDIA RTX A6000"] * 2, "chat@9c1e0f6a3b2d", "3f7a"
    )
    combos = parse_grid("num_steps=1,2,3 eagle_topk=1 num_draft_tokens=2,3,4")
    leads = {c.num_steps: measured(c, n) for n, c in enumerate(c for c in combos if not adjusted(c))}
    results = [measured(None, 0)]
    for combo in sorted(combos, key=lambda c: (c.num_steps, bool(adjusted(c)))):
        lead = leads[combo.num_steps]
        results.append(lead if lead.combo == combo else lead.shared_by(combo, [NOTICE, *adjusted(combo)]))
    done = Sweep(ident, (1, 8), results=results)
    set_speedups(done.baseline, done.results)
    return done


async def tune_shown(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("u")
    assert await until(pilot, lambda: on_screen(pilot.app, TuneScreen), 5)
    screen = pilot.app.screen
    assert isinstance(screen, TuneScreen)
    screen.show(sweep())
    await settle(pilot)
