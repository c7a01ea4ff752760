"""What the GPU panel shows, per GPU: its rank, its memory split by what the log says, and the memory
held by processes that are not the server (the usual reason a relaunch runs out of memory).

Pure functions over a HostSession's state: no Textual, no I/O, so they are tested on fixed messages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gdnconsole.host.gpumem import server_parts
from gdnconsole.host.ranks import RankPlacement
from gdnconsole.logs.textsafe import visible
from gdnconsole.sglang.tracker import Startup

if TYPE_CHECKING:
    from gdnconsole.host.state import Gpu, GpuProcess, Rank, Server

# The order of a GPU's memory parts, left to right in its bar.
SERVER_PARTS = ("weights", "kv", "mamba", "graphs", "other")


@dataclass(frozen=True)
class Holder:
    """A process holding GPU memory that is not the running server."""

    pid: int
    name: str
    mib: int | None
    orphan: str | None = None  # the rank title of a server child whose server is gone


@dataclass(frozen=True)
class GpuRow:
    index: int
    name: str
    rank: str | None
    total: int | None  # MiB
    used: int | None  # MiB, as NVML counts it (every process, plus the driver's own)
    util: int | None
    parts: dict[str, int] = field(default_factory=dict)  # the server's memory, as far as the log tells
    holders: tuple[Holder, ...] = ()

    @property
    def held_by_others(self) -> int:
        return sum(h.mib or 0 for h in self.holders)

    @property
    def free(self) -> int | None:
        if self.total is None or self.used is None:
            return None
        return max(0, self.total - self.used)


def short_gpu_name(name: str) -> str:
    """``NVIDIA RTX A6000`` → ``RTX A6000``: the vendor is the same on every row."""
    for prefix in ("NVIDIA GeForce ", "NVIDIA "):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def server_pids(server: Server | None) -> set[int]:
    if server is None:
        return set()
    return {server.pid, *(child.pid for child in server.children)}


def _orphan_titles(orphans: Sequence[Rank]) -> dict[int, str]:
    return {o.pid: visible(o.title or o.rank or "sglang") for o in orphans}  # as the host named them


def _holder(proc: GpuProcess, orphans: Mapping[int, str]) -> Holder:
    name = visible(os.path.basename(proc.name or "") or "?")
    return Holder(pid=proc.pid, name=name, mib=proc.used_mib, orphan=orphans.get(proc.pid))


def _ranks_by_gpu(placements: Sequence[RankPlacement]) -> dict[int, str]:
    out: dict[int, str] = {}
    for p in placements:
        if p.gpu is not None:
            out[p.gpu] = f"{out[p.gpu]}+{p.rank}" if p.gpu in out else p.rank
    return out


def gpu_rows(
    gpus: Sequence[Gpu],
    server: Server | None,
    orphans: Sequence[Rank],
    placements: Sequence[RankPlacement],
    startup: Startup | None,
) -> list[GpuRow]:
    """One row per GPU the agent reported, in NVML order."""
    ours = server_pids(server)
    orphan_titles = _orphan_titles(orphans)
    ranks = _ranks_by_gpu(placements)
    rows: list[GpuRow] = []
    for gpu in gpus:
        holders = tuple(_holder(p, orphan_titles) for p in gpu.processes if p.pid not in ours)
        used, total = gpu.used_mib, gpu.total_mib
        rank = ranks.get(gpu.index)
        parts: dict[str, int] = {}
        if used is not None and total is not None:
            server_used = max(0, used - sum(h.mib or 0 for h in holders))
            parts = server_parts(rank, server_used, total, startup)
        rows.append(
            GpuRow(
                index=gpu.index,
                name=visible(short_gpu_name(gpu.name or "GPU")),
                rank=rank,
                total=total,
                used=used,
                util=gpu.util_pct,
                parts=parts,
                holders=holders,
            )
        )
    return rows


def allocate_cells(values: Sequence[int], width: int, least: int = 1) -> list[int]:
    """Split ``width`` cells in proportion to ``values`` (largest remainder); a value of ``least`` or
    more gets at least one cell while there are cells to spare, so a small part never vanishes from the
    bar (and one too small to be said, "0.0 GiB", is not drawn as a whole cell)."""
    total = sum(values)
    if total <= 0 or width <= 0:
        return [0] * len(values)
    exact = [v * width / total for v in values]
    cells = [int(x) for x in exact]
    order = sorted(range(len(values)), key=lambda i: exact[i] - cells[i], reverse=True)
    for i in order[: width - sum(cells)]:
        cells[i] += 1
    for i, v in enumerate(values):
        if v >= max(1, least) and cells[i] == 0:
            donor = max(range(len(cells)), key=lambda k: cells[k])
            if cells[donor] > 1:
                cells[donor] -= 1
                cells[i] = 1
    return cells
