"""Which rank's Decode batch lines make the sparkline: TP0's, whatever other parallelism the prefix names
(FACTS §1.2: DP, PP, ATTN_CP, MOE_DP, TP, EP, in 0.5.2's order DP TP EP PP too)."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.decodepoints import last_points, parse


def decode(rank: str, rate: float) -> str:
    return (
        f"[2026-07-14 10:40:25 {rank}] Decode batch, #running-req: 8, #token: 900, token usage: 0.02,"
        f" cuda graph: True, gen throughput (token/s): {rate:.2f}, #queue-req: 0"
    )


@pytest.mark.parametrize("rank", ["TP0 EP0", "DP0 TP0 EP0 PP0", "PP1 TP0 EP0", "ATTN_CP1 TP0"])
def test_tp0_is_read_when_expert_parallelism_follows_it_in_the_prefix(rank: str) -> None:
    point = parse(decode(rank, 321.5))
    assert point is not None and point.gen_throughput == 321.5 and point.running == 8


@pytest.mark.parametrize("rank", ["TP1 EP1", "TP3 EP3", "DP0 TP1 EP1 PP0", "TP10 EP0"])
def test_other_tensor_ranks_are_skipped_with_expert_parallelism_too(rank: str) -> None:
    assert parse(decode(rank, 321.5)) is None


def test_a_tp8_ep8_server_gives_one_point_per_batch() -> None:
    lines = [decode(f"TP{r} EP{r}", 100.0 + batch) for batch in range(3) for r in range(8)]
    data = "".join(line + "\n" for line in lines).encode()
    assert [p.gen_throughput for p in last_points(data, 10)] == [100.0, 101.0, 102.0]
