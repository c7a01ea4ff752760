"""Which TP rank runs on which GPU, and what its memory holds (FACTS §7).

The strongest evidence is NVML's process list: the GPU that lists a rank process's pid is that rank's
GPU. Before a rank holds memory, its GPU follows from the launch flags: ``--base-gpu-id`` plus
``tp_rank * --gpu-id-step``, an ordinal inside ``CUDA_VISIBLE_DEVICES``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gdnconsole.sglang import memory
from gdnconsole.sglang.logline import tp_index

if TYPE_CHECKING:
    from gdnconsole.host.state import Gpu, Server


MIB_PER_GB = 1024.0  # SGLang's "GB" are GiB (torch memory / 2**30)


@dataclass(frozen=True)
class RankPlacement:
    rank: str  # "TP0", "DP1 TP1"
    pid: int | None
    gpu: int | None  # NVML index
    evidence: str  # "nvml" (the GPU lists the pid) or "flags" (computed from the launch flags)


def _flag(cmdline: Sequence[str], name: str, default: int) -> int:
    for i, arg in enumerate(cmdline):
        if arg == name and i + 1 < len(cmdline):
            value = cmdline[i + 1]
        elif arg.startswith(name + "="):
            value = arg.split("=", 1)[1]
        else:
            continue
        try:
            return int(value)
        except ValueError:
            return default
    return default


def visible_devices(env: Mapping[str, str]) -> list[int] | None:
    """NVML indices behind CUDA ordinals, or None when every GPU is visible (UUIDs are not resolved)."""
    value = env.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return None
    out: list[int] = []
    for part in value.split(","):
        part = part.strip()
        if not part.isdigit():
            return None
        out.append(int(part))
    return out


def place_ranks(server: Server, gpus: Sequence[Gpu]) -> list[RankPlacement]:
    """Place each rank child of ``server`` on a GPU."""
    by_pid = {proc.pid: gpu.index for gpu in gpus for proc in gpu.processes}
    base = _flag(server.cmdline, "--base-gpu-id", 0)
    step = _flag(server.cmdline, "--gpu-id-step", 1)
    visible = visible_devices(server.env or {})
    placements: list[RankPlacement] = []
    for child in server.children:
        rank = child.rank
        if not rank:
            continue
        pid = child.pid
        if pid in by_pid:
            placements.append(RankPlacement(rank, pid, by_pid[pid], "nvml"))
            continue
        tp = tp_index(rank)
        gpu: int | None = None
        if tp is not None:
            ordinal = base + tp * step
            if visible is None:
                gpu = ordinal
            elif ordinal < len(visible):
                gpu = visible[ordinal]
        placements.append(RankPlacement(rank, pid, gpu, "flags"))
    return sorted(placements, key=lambda p: (p.gpu is None, p.gpu or 0, p.rank))


@dataclass
class MemorySplit:
    """A rank's GPU memory in MiB, split as far as the log tells."""

    used: int
    total: int
    parts: dict[str, int] = field(default_factory=dict)  # weights, kv, mamba, graphs, other

    @property
    def free(self) -> int:
        return max(0, self.total - self.used)


def split_memory(
    used_mib: int,
    total_mib: int,
    numbers: Mapping[str, float],
    weights_gb: float | None,
    draft_weights_gb: float | None = None,
) -> MemorySplit:
    """Weights, KV cache, mamba state and CUDA graphs from the log; the rest of what NVML counts is other."""
    parts = {
        name: round(gb * MIB_PER_GB)
        for name, gb in memory.parts_gb(numbers, weights_gb, draft_weights_gb).items()
    }
    known = sum(parts.values())
    if used_mib > known:
        parts["other"] = used_mib - known
    return MemorySplit(used=used_mib, total=total_mib, parts=parts)
