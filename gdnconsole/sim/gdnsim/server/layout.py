"""Where a server's scheduler processes go: data-parallel replicas, each on a TP group of its own GPUs,
or attention-DP groups, which split one TP group's GPUs. One layout, read by the rank spawner, the
metrics and the load and info endpoints, so they agree on how many DP ranks there are."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Slot:
    """One scheduler: its replica, TP rank, DP rank (None without DP), and the CUDA ordinal it uses."""

    replica: int
    tp_rank: int
    dp_rank: int | None
    ordinal: int


def _int(args: Any, name: str) -> int:
    return max(1, int(getattr(args, name, 1) or 1))


@dataclass(frozen=True)
class Layout:
    tp: int
    pp: int
    replicas: int  # --dp N without attention DP: N TP groups, each on its own GPUs
    attn_groups: int  # attention DP: the TP group's ranks split into this many DP ranks
    base_gpu_id: int = 0
    gpu_id_step: int = 1

    @classmethod
    def of(cls, args: Any) -> Layout:
        """From resolved server args. 0.5.11 keeps ``--dp N --enable-dp-attention`` as dp_size=N with the
        flag (511 server_args.py:2928-2940); 0.5.22+ resolves it to attn_dp_size=N, dp_size=1 (523
        arg_groups/parallel_hook.py:39-61), and counts DP ranks as dp_size * attn_dp_size (523
        runtime_context.py:202-207)."""
        dp = _int(args, "dp_size")
        attn = _int(args, "attn_dp_size")
        if bool(getattr(args, "enable_dp_attention", False)) and dp > 1:
            attn, dp = dp, 1
        return cls(
            _int(args, "tp_size"),
            _int(args, "pp_size"),
            dp,
            attn,
            int(getattr(args, "base_gpu_id", 0) or 0),
            _int(args, "gpu_id_step"),
        )

    @property
    def dp_ranks(self) -> int:
        return self.replicas * self.attn_groups

    @property
    def attn_tp(self) -> int:
        """The attention-TP width: the TP ranks that make one DP rank (523 dp_attention.py:445-460)."""
        return max(1, self.tp // self.attn_groups)

    def dp_rank(self, replica: int, tp_rank: int) -> int | None:
        """A scheduler's DP rank: None with one DP rank; its attention group with attention DP; else its
        replica (the rank the DP controller hands each TP group, 523 data_parallel_controller.py:420-450)."""
        if self.dp_ranks == 1:
            return None
        return tp_rank // self.attn_tp if self.attn_groups > 1 else replica

    def ordinal(self, replica: int, tp_rank: int) -> int:
        """523 data_parallel_controller.py:445-449 and 747-752 with one node and no PP: each replica
        starts tp*pp*step GPUs after the last; attention DP stays within the one TP group."""
        start = replica * self.tp * self.pp * self.gpu_id_step
        return self.base_gpu_id + start + tp_rank * self.gpu_id_step

    def slots(self) -> Iterator[Slot]:
        """Every scheduler, in SGLang's launch order (replica-major)."""
        for replica in range(self.replicas):
            for tp_rank in range(self.tp):
                yield Slot(replica, tp_rank, self.dp_rank(replica, tp_rank), self.ordinal(replica, tp_rank))
