"""The main process of ``sglang serve``: args dump, rank processes, tokenizer stage, then HTTP.

Called by the stand-in ``sglang.srt.entrypoints.engine`` once the arguments are resolved.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sysconfig
from typing import Any

import gdnsim.config as config
from gdnsim.server import args_dump, timeline, torchcodec, version
from gdnsim.server.logwriter import LogWriter
from gdnsim.server.procs import kill_process_tree
from gdnsim.server.ranklink import RankGroup
from gdnsim.server.serving import serve


def run(server_args: Any) -> None:
    log = LogWriter("", server_args.log_level, server_args.log_level_http)
    install_launch_sigquit(log)
    timeline.pause("args")
    log.info(args_dump.render(server_args))
    group = RankGroup.start(server_args)
    tokenizer_stage(log)
    ready = group.wait_ready()
    if version.at_least("0.5.22"):
        log.info(_startup_timings(ready[0]))
    asyncio.run(serve(server_args, group, ready, log))


def install_launch_sigquit(log: LogWriter) -> None:
    """511 engine.py:1187: a child that fails during launch sends SIGQUIT; the whole tree goes down."""

    def handler(signum: int, frame: object) -> None:
        log.error("Received sigquit from a child process. It usually means the child failed.")
        kill_process_tree(os.getpid(), include_parent=True)

    signal.signal(signal.SIGQUIT, handler)


def tokenizer_stage(log: LogWriter) -> None:
    """The TokenizerManager in the main process: chat template, multimodal processors (FACTS §2.1 #2)."""
    timeline.pause("tokenizer")
    log.info("Using default HuggingFace chat template with detected content format: openai")
    if not config.load().ffmpeg:
        site = sysconfig.get_paths()["purelib"]
        log.warning(
            "Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: "
            + torchcodec.warning_text(site)
        )


def _startup_timings(rank0: dict[str, Any]) -> str:
    """523 engine.py:1117."""
    e2e = rank0["load_s"] + rank0["pool_s"] + rank0["graph_s"]
    return (
        f"Engine startup timings (s): load_weight={rank0['load_s']:.2f}, "
        f"kv_cache_allocation={rank0['pool_s']:.2f}, scheduler_e2e={e2e:.2f}, "
        f"cuda_graph={{phase=decode, elapsed={rank0['graph_s']:.2f}}}, tokenizer_e2e=0.62"
    )
