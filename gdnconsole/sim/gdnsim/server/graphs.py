"""CUDA graph capture of one rank (FACTS §2.1 stage 7; the 0.5.14+ named form of §2.2).

Batch sizes are captured largest first, as SGLang does; rank 0 draws the ``Capturing batches`` bar.
The oom-graph and hang-graph scenarios strike a few batch sizes in.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from gdnsim.server import sizing, timeline, tracebacks, version
from gdnsim.server.failures import SchedulerFailed
from gdnsim.server.tqdm_bar import Bar, default_text

if TYPE_CHECKING:
    from gdnsim.server.rank_startup import RankContext

FAULT_AFTER = 2  # batch sizes captured before a scenario strikes


def capture_target(ctx: RankContext, bs_list: list[int]) -> float:
    kind = "verify" if ctx.speculative else "decode"
    per_req = ctx.draft_tokens if ctx.speculative else 1
    before, start = ctx.avail(), time.monotonic()
    if version.named_cuda_graphs():
        ctx.log.info(
            f"Capture target {kind} CUDA graph begin. backend=full, num_tokens_per_req={per_req}, "
            f"avail mem={before:.2f} GB"
        )
    else:
        ctx.log.info(
            f"Capture cuda graph begin. This can take up to several minutes. avail mem={before:.2f} GB"
        )
        if ctx.rank0:
            ctx.log.info(f"Capture cuda graph bs {bs_list}")
    kept = sizing.graph_gib(max(bs_list), draft=False)
    _capture(ctx, bs_list, kept, timeline.span("graph_per_bs"), faults=True)
    after, elapsed = ctx.avail(), ctx.sim_seconds(start)
    if version.named_cuda_graphs():
        ctx.log.info(
            f"Capture target {kind} CUDA graph end. bs={bs_list}, elapsed={elapsed:.2f} s, "
            f"mem usage={before - after:.2f} GB, avail mem={after:.2f} GB."
        )
    else:
        ctx.log.info(
            f"Capture cuda graph end. Time elapsed: {elapsed:.2f} s. mem usage={before - after:.2f} GB. "
            f"avail mem={after:.2f} GB."
        )
    return kept


def capture_draft(ctx: RankContext, bs_list: list[int]) -> float:
    """The draft worker's decode and extend graphs (511 eagle_worker_v2.py:277-323)."""
    kept = 0.0
    for phase in ("", "extend "):
        gib = sizing.graph_gib(max(bs_list), draft=True) / (1 if not phase else 2)
        kept += gib
        before, start = ctx.avail(), time.monotonic()
        named = version.named_cuda_graphs()
        if named and ctx.rank0:
            label = "decode" if not phase else "extend"
            topk = ctx.args.get("speculative_eagle_topk") or 1
            ctx.log.info(
                f"Capture draft {label} CUDA graph begin. backend=full, num_tokens_per_req={topk}, "
                f"bs={bs_list}, avail mem={before:.2f} GB"
            )
        elif not named:
            ctx.log.info(
                f"Capture draft {phase}cuda graph begin. This can take up to several minutes. "
                f"avail mem={before:.2f} GB"
            )
        _capture(ctx, bs_list, gib, timeline.span("draft_graph") / len(bs_list) / 2, faults=False)
        after, elapsed = ctx.avail(), ctx.sim_seconds(start)
        if named and ctx.rank0:
            label = "decode" if not phase else "extend"
            ctx.log.info(
                f"Capture draft {label} CUDA graph end. elapsed={elapsed:.2f} s, "
                f"mem usage={before - after:.2f} GB, "
                f"avail mem={after:.2f} GB."
            )
        elif not named:
            ctx.log.info(
                f"Capture draft {phase}cuda graph end. Time elapsed: {elapsed:.2f} s. "
                f"mem usage={before - after:.2f} GB. avail mem={after:.2f} GB."
            )
    return kept


def _capture(ctx: RankContext, bs_list: list[int], gib: float, per_bs: float, faults: bool) -> None:
    order = sorted(bs_list, reverse=True)
    bar = Bar(len(order)) if ctx.rank0 else None
    start = time.monotonic()
    for n, bs in enumerate(order):
        if bar:
            desc = f"Capturing batches (bs={bs} avail_mem={ctx.avail():.2f} GB)"
            bar.draw(default_text(desc, n, len(order), ctx.sim_seconds(start)))
        if faults and n == min(FAULT_AFTER, len(order) - 1):
            _maybe_fault(ctx, bs)
        time.sleep(per_bs)
        ctx.hold(gib / len(order), util=60)
    if bar:
        desc = f"Capturing batches (bs={order[-1]} avail_mem={ctx.avail():.2f} GB)"
        bar.draw(default_text(desc, len(order), len(order), ctx.sim_seconds(start)))
        bar.close()


def _maybe_fault(ctx: RankContext, bs: int) -> None:
    if ctx.cfg.scenario == "hang-graph":
        while True:  # no progress, no exit, no more lines (the parent's death still kills us)
            time.sleep(3600)
    if ctx.cfg.scenario == "oom-graph":
        if ctx.rank0:
            from gdnsim.server.logwriter import write_raw

            write_raw("\n")  # the bar stays on its line, as tqdm leaves it when the process dies
        tried = 512.0 + bs * 16
        free_mib = max(0.0, ctx.avail() * 1024 * 0.05)
        total = ctx.cfg.gpu_mib / 1024 - 0.62
        assert ctx.gpu is not None
        raise SchedulerFailed(tracebacks.graph_oom(tried, ctx.gpu, total, free_mib))
