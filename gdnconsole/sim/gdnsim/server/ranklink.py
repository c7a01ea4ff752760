"""The main process's side of the rank processes: spawning them with their titles and GPUs, waiting for
them to be ready, and sending them commands (JSON lines over pipes)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import selectors
import subprocess
import time
from dataclasses import dataclass
from typing import Any

import gdnsim.config as config
from gdnsim.server import procs
from gdnsim.server.layout import Layout
from gdnsim.server.logwriter import rank_prefix


@dataclass
class RankProc:
    index: int  # position in SGLang's scheduler list (dp-major)
    tp_rank: int
    dp_rank: int | None
    proc: subprocess.Popen[bytes]
    ctl: int  # write end: commands to the rank
    evt: int  # read end: events from the rank
    ready: dict[str, Any] | None = None


def title(dp_rank: int | None, tp_rank: int, tp_size: int) -> str:
    """``sglang::scheduler``, ``sglang::scheduler_TP1``, ``sglang::scheduler_DP0_TP1`` (FACTS §7)."""
    return "sglang::scheduler" + rank_prefix(dp_rank, tp_rank, tp_size).replace(" ", "_")


def physical_gpu(ordinal: int, cfg: config.SimConfig) -> int | None:
    """The physical GPU behind CUDA ordinal ``ordinal`` (SGLang's gpu_id is within CUDA_VISIBLE_DEVICES)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        entries = [v.strip() for v in visible.split(",") if v.strip()]
        if ordinal >= len(entries) or not entries[ordinal].isdigit():
            return None
        ordinal = int(entries[ordinal])
    return ordinal if 0 <= ordinal < cfg.gpus else None


class RankGroup:
    def __init__(self, ranks: list[RankProc], others: list[subprocess.Popen[bytes]]) -> None:
        self.ranks = ranks
        self.others = others

    @classmethod
    def start(cls, server_args: Any) -> RankGroup:
        cfg = config.load()
        ranks: list[RankProc] = []
        layout = Layout.of(server_args)
        for slot in layout.slots():
            gpu = physical_gpu(slot.ordinal, cfg)
            ranks.append(_spawn_rank(server_args, len(ranks), slot.dp_rank, slot.tp_rank, gpu))
        others = []
        if layout.dp_ranks > 1:  # 523 engine.py:911: a DP controller whenever there is more than one
            others.append(procs.spawn("sglang::data_parallel_controller", "gdnsim.server.idle_child", []))
        others.append(procs.spawn("sglang::detokenizer", "gdnsim.server.idle_child", []))
        return cls(ranks, others)

    @property
    def tp0(self) -> RankProc:
        return self.ranks[0]

    def wait_ready(self) -> list[dict[str, Any]]:
        """Block until every rank reports ready (511 engine.py `_wait_for_scheduler_ready`)."""
        selector = selectors.DefaultSelector()
        buffers: dict[int, bytes] = {}
        for rank in self.ranks:
            selector.register(rank.evt, selectors.EVENT_READ, rank)
            buffers[rank.evt] = b""
        while any(rank.ready is None for rank in self.ranks):
            for key, _ in selector.select():
                rank = key.data
                chunk = os.read(rank.evt, 65536)
                if not chunk:
                    selector.unregister(rank.evt)
                    raise _scheduler_died_error(rank)
                buffers[rank.evt] += chunk
                while b"\n" in buffers[rank.evt]:
                    line, buffers[rank.evt] = buffers[rank.evt].split(b"\n", 1)
                    message = json.loads(line)
                    if message.get("ev") == "ready":
                        rank.ready = message
        selector.close()
        return [rank.ready for rank in self.ranks if rank.ready is not None]

    def send(self, rank: RankProc, command: dict[str, Any]) -> None:
        # a rank that died is reported by the signal it sends, not here
        with contextlib.suppress(OSError):
            os.write(rank.ctl, (json.dumps(command) + "\n").encode())

    def broadcast(self, command: dict[str, Any]) -> None:
        for rank in self.ranks:
            self.send(rank, command)


def _spawn_rank(server_args: Any, index: int, dp: int | None, tp: int, gpu: int | None) -> RankProc:
    ctl_read, ctl_write = os.pipe()
    evt_read, evt_write = os.pipe()
    proc = procs.spawn(
        title(dp, tp, server_args.tp_size),
        "gdnsim.server.rank",
        ["--ctl-fd", str(ctl_read), "--evt-fd", str(evt_write)],
        pass_fds=(ctl_read, evt_write),
    )
    os.close(ctl_read)
    os.close(evt_write)
    setup = {
        "args": dataclasses.asdict(server_args),
        "tp_rank": tp,
        "gpu": gpu,
        "prefix": rank_prefix(dp, tp, server_args.tp_size),
    }
    os.write(ctl_write, (json.dumps(setup) + "\n").encode())
    return RankProc(index, tp, dp, proc, ctl_write, evt_read)


def _scheduler_died_error(rank: RankProc) -> RuntimeError:
    deadline = time.monotonic() + 2.0
    while rank.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # the pipe closed; the exit status follows within moments
    code = rank.proc.returncode
    return RuntimeError(
        f"Rank {rank.index} scheduler died during initialization (exit code: {code}). If exit code is -9 "
        "(SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check."
    )
