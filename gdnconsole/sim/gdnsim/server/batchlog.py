"""The scheduler's runtime batch lines (FACTS §2.4, comma style of 0.5.5+), for plain and hybrid models."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class PoolSizes:
    max_total_tokens: int
    mamba_slots: int  # 0 on a plain model
    speculative: bool


def _head(kind: str, forward_ct: int) -> str:
    """``Prefill batch`` (``Prefill batch [12]`` with SGLANG_LOG_FORWARD_ITERS=1)."""
    if os.environ.get("SGLANG_LOG_FORWARD_ITERS") == "1":
        return f"{kind} batch [{forward_ct}]"
    return f"{kind} batch"


def prefill_line(
    pools: PoolSizes,
    forward_ct: int,
    new_seq: int,
    new_token: int,
    cached: int,
    used_tokens: int,
    running: int,
    queued: int,
    throughput: float,
) -> str:
    usage = used_tokens / max(1, pools.max_total_tokens)
    if pools.mamba_slots:
        mamba = min(1.0, (running + new_seq) / pools.mamba_slots)
        usage_text = f"full token usage: {usage:.2f}, mamba usage: {mamba:.2f}"
    else:
        usage_text = f"token usage: {usage:.2f}"
    return (
        f"{_head('Prefill', forward_ct)}, #new-seq: {new_seq}, #new-token: {new_token}, "
        f"#cached-token: {cached}, "
        f"{usage_text}, #running-req: {running}, #queue-req: {queued}, #pending-token: 0, "
        f"cuda graph: False, input throughput (token/s): {throughput:.2f}"
    )


def decode_line(
    pools: PoolSizes,
    forward_ct: int,
    running: int,
    used_tokens: int,
    accept_len: float,
    steps: int,
    graph: bool,
    throughput: float,
    queued: int,
) -> str:
    usage = used_tokens / max(1, pools.max_total_tokens)
    if pools.mamba_slots:
        mamba = min(1.0, running / pools.mamba_slots)
        usage_text = (
            f"#full token: {used_tokens}, full token usage: {usage:.2f}, mamba num: {running}, "
            f"mamba usage: {mamba:.2f}"
        )
    else:
        usage_text = f"#token: {used_tokens}, token usage: {usage:.2f}"
    spec = ""
    if pools.speculative:
        # accept rate = accepted drafts / proposed drafts (steps per verify, topk 1)
        spec = f"accept len: {accept_len:.2f}, accept rate: {(accept_len - 1) / max(1, steps):.2f}, "
    return (
        f"{_head('Decode', forward_ct)}, #running-req: {running}, {usage_text}, {spec}"
        f"cuda graph: {graph}, gen throughput (token/s): {throughput:.2f}, #queue-req: {queued}"
    )
