"""GPU memory around a launch: which GPUs the ranks will use, who else holds memory there, and whether
an old server's memory is released yet. Pure functions over the session's GPU sample (host/state.py)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gdnconsole.host.ranks import RankPlacement, split_memory, visible_devices
from gdnconsole.sglang.launch import flag_value

if TYPE_CHECKING:
    from gdnconsole.host.state import Gpu, Server
    from gdnconsole.sglang.tracker import Startup

# What an idle GPU may show as used with no process listed (driver context, persistence mode); memory
# above this with no live process to account for it is an old server's, still being torn down.
IDLE_MIB = 1024
# SGLang picks mem_fraction_static from the GPU size when unset; this is about what a 48 GB card gets.
DEFAULT_MEM_FRACTION = 0.85


@dataclass(frozen=True)
class Holder:
    gpu: int
    pid: int
    name: str | None
    used_mib: int

    def __str__(self) -> str:
        return f"pid {self.pid} ({self.name or '?'}) holds {self.used_mib} MiB on GPU {self.gpu}"


def _flag_int(argv: Sequence[str], names: Sequence[str], default: int) -> int:
    value = flag_value(argv, names)
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def rank_gpus(argv: Sequence[str], env: Mapping[str, str]) -> list[int]:
    """NVML indices of the GPUs the TP ranks of ``argv`` will use (FACTS §7: base + rank × step, as
    ordinals inside CUDA_VISIBLE_DEVICES)."""
    tp = _flag_int(argv, ("--tp-size", "--tp"), 1)
    base = _flag_int(argv, ("--base-gpu-id",), 0)
    step = _flag_int(argv, ("--gpu-id-step",), 1)
    visible = visible_devices(env)
    ordinals = [base + rank * step for rank in range(tp)]
    if visible is None:
        return ordinals
    return [visible[o] for o in ordinals if o < len(visible)]


def _gpu(gpus: Sequence[Gpu], index: int) -> Gpu | None:
    return next((g for g in gpus if g.index == index), None)


def other_holders(gpus: Sequence[Gpu], indices: Sequence[int], ours: Collection[int]) -> list[Holder]:
    """Live processes (the agent could name them) holding memory on ``indices``, except ``ours``."""
    found = []
    for index in indices:
        gpu = _gpu(gpus, index)
        for proc in gpu.processes if gpu is not None else ():
            if proc.pid not in ours and proc.name is not None:
                found.append(Holder(index, proc.pid, proc.name, proc.used_mib or 0))
    return found


def group_pids(gpus: Sequence[Gpu], pgid: int) -> set[int]:
    """Live processes of process group ``pgid`` that hold memory on any GPU (a server's ranks)."""
    return {proc.pid for gpu in gpus for proc in gpu.processes if proc.pgid == pgid}


def unreleased_mib(gpus: Sequence[Gpu], indices: Sequence[int], old: Collection[int] = ()) -> dict[int, int]:
    """Per GPU, memory used beyond the idle level that no live process other than the ``old`` server's
    accounts for (its driver context is not torn down yet). Empty when every GPU is back to baseline."""
    left: dict[int, int] = {}
    for index in indices:
        gpu = _gpu(gpus, index)
        if gpu is None or gpu.used_mib is None:
            continue
        others = sum(h.used_mib for h in other_holders(gpus, [index], old))
        extra = gpu.used_mib - others - IDLE_MIB
        if extra > 0:
            left[index] = extra + IDLE_MIB
    return left


def shortfalls(
    gpus: Sequence[Gpu],
    indices: Sequence[int],
    mem_fraction: float | None,
    ours: Collection[int],
) -> list[str]:
    """Why the new server cannot have its share of a GPU: other processes hold too much of it.

    SGLang sizes its pools as ``avail - total * (1 - mem_fraction)``: memory another process holds comes
    out of that fraction, so the server needs ``mem_fraction * total`` not held by others.
    """
    fraction = mem_fraction or DEFAULT_MEM_FRACTION
    problems = []
    for index in indices:
        gpu = _gpu(gpus, index)
        total = gpu.total_mib if gpu is not None else None
        if total is None:
            continue
        holders = other_holders(gpus, [index], ours)
        needed = int(total * fraction)
        if holders and total - sum(h.used_mib for h in holders) < needed:
            names = "; ".join(str(h) for h in holders)
            problems.append(
                f"GPU {index}: {names}; the new server needs {needed} MiB of {total} "
                f"(mem_fraction {fraction:g}), {total - sum(h.used_mib for h in holders)} MiB left"
            )
    return problems


# -- what each GPU's memory holds (the GPU panel, `status`) ----------------------------------------------


def server_parts(rank: str | None, server_used: int, total: int, startup: Startup | None) -> dict[str, int]:
    """The server's memory on one GPU, MiB: split by the rank's log numbers, else all of it is `other`."""
    state = startup.ranks.get(rank) if startup is not None and rank is not None else None
    if state is None:
        return {"other": server_used} if server_used else {}
    split = split_memory(server_used, total, state.numbers, state.weights_gb, state.draft_weights_gb)
    return split.parts


def server_pids(server: Server | None) -> set[int]:
    if server is None:
        return set()
    return {server.pid, *(child.pid for child in server.children)}


def memory_split(
    gpus: Sequence[Gpu], server: Server | None, placements: Sequence[RankPlacement], startup: Startup | None
) -> dict[int, dict[str, int]]:
    """Per GPU (NVML index), MiB: the server's parts as the log sizes them (weights, kv, mamba, graphs,
    other), ``others`` (what processes that are not the server hold) and ``free``, as the dashboard's
    GPU panel draws them. A GPU whose memory NVML did not report is left out."""
    ours = server_pids(server)
    ranks: dict[int, str] = {}
    for p in placements:  # two ranks on one GPU: neither's numbers alone split it
        if p.gpu is not None:
            ranks[p.gpu] = f"{ranks[p.gpu]}+{p.rank}" if p.gpu in ranks else p.rank
    out: dict[int, dict[str, int]] = {}
    for gpu in gpus:
        used, total = gpu.used_mib, gpu.total_mib
        if used is None or total is None:
            continue
        others = sum(p.used_mib or 0 for p in gpu.processes if p.pid not in ours)
        split = server_parts(ranks.get(gpu.index), max(0, used - others), total, startup)
        if others:
            split["others"] = others
        split["free"] = max(0, total - used)
        out[gpu.index] = split
    return out
