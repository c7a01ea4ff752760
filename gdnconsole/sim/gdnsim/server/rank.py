"""A scheduler rank process: ``sglang::scheduler_TP0 -m gdnsim.server.rank …``.

It talks to the main process over two pipes in JSON lines: the main process sends the resolved server
args first and later runtime commands (batch log lines, utilisation, crash); the rank answers
``{"ev": "ready", …}`` once its startup is done. It writes its own log lines to the inherited stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
from typing import IO, Any

import gdnsim.gpustate as gpustate
from gdnsim.server import batchlog, procs
from gdnsim.server.failures import SchedulerFailed
from gdnsim.server.logwriter import LogWriter
from gdnsim.server.rank_startup import RankContext, run


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--parent-pid", type=int, required=True)
    parser.add_argument("--ctl-fd", type=int, required=True)
    parser.add_argument("--evt-fd", type=int, required=True)
    opts = parser.parse_args(argv)
    procs.die_with_parent(opts.parent_pid)
    procs.set_comm(procs.own_title())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the main process, which cleans up
    ctl = os.fdopen(opts.ctl_fd, "r")
    evt = os.fdopen(opts.evt_fd, "w")
    setup = json.loads(ctl.readline())
    ctx = RankContext(
        args=setup["args"],
        tp_rank=setup["tp_rank"],
        gpu=setup["gpu"],
        log=LogWriter(setup["prefix"], setup["args"].get("log_level", "info")),
    )
    try:
        ready = run(ctx)
    except SchedulerFailed as failure:
        fail(ctx, failure.traceback)
    _send(evt, {"ev": "ready", **dataclasses.asdict(ready)})
    serve(ctx, ctl, ready.max_total_num_tokens, ready.mamba_slots)


def fail(ctx: RankContext, traceback: str) -> None:
    """Log the exception and tell the parent (511 scheduler.py:3938: SIGQUIT to the parent)."""
    ctx.log.error(f"Scheduler hit an exception: {traceback}".rstrip("\n"))
    os.kill(os.getppid(), signal.SIGQUIT)
    sys.exit(1)


def serve(ctx: RankContext, ctl: IO[str], max_tokens: int, mamba_slots: int) -> None:
    """Follow the main process's commands until it closes the pipe (or dies, taking us along)."""
    from gdnsim.server import tracebacks

    pools = batchlog.PoolSizes(max_tokens, mamba_slots, ctx.speculative)
    steps = int(ctx.args.get("speculative_num_steps") or 1)
    for line in ctl:
        cmd: dict[str, Any] = json.loads(line)
        kind = cmd.pop("cmd")
        if kind == "prefill":
            ctx.log.info(batchlog.prefill_line(pools, **cmd))
        elif kind == "decode":
            ctx.log.info(batchlog.decode_line(pools, steps=steps, **cmd))
        elif kind == "util" and ctx.gpu is not None:
            gpustate.report(ctx.gpu, round(ctx.held_gib * 1024), int(cmd["pct"]))
        elif kind == "crash":
            fail(ctx, tracebacks.serving_crash())


def _send(evt: IO[str], message: dict[str, Any]) -> None:
    evt.write(json.dumps(message) + "\n")
    evt.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
