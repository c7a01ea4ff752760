"""The main process once every rank is ready: uvicorn's lines, the HTTP server, the warm-up, and SGLang's
signal handling (FACTS §7): uvicorn's shutdown before the first generation, then SIGTERM drains and a
SIGQUIT from a child takes the whole tree down."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import sys
from collections.abc import Coroutine
from http import HTTPStatus
from typing import Any

from gdnsim.server import timeline
from gdnsim.server.app import UP, App, ServerState
from gdnsim.server.batching import Batcher
from gdnsim.server.http import HttpServer, Request
from gdnsim.server.logwriter import LogWriter
from gdnsim.server.procs import kill_process_tree
from gdnsim.server.ranklink import RankGroup
from gdnsim.server.specperf import Spec, SpecPerf
from gdnsim.server.warmup import warm_up


class Server:
    def __init__(self, args: Any, group: RankGroup, ready: list[dict[str, Any]], log: LogWriter) -> None:
        self.args = args
        self.group = group
        self.log = log
        self.loop = asyncio.get_running_loop()
        self.stopped = self.loop.create_future()
        self.handlers_installed = False
        self.tasks: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks
        steps = args.speculative_num_steps if args.speculative_algorithm else None
        batcher = Batcher(
            send_tp0=lambda cmd: group.send(group.tp0, cmd),
            set_util=lambda pct: group.broadcast({"cmd": "util", "pct": pct}),
            tokens_per_s=0.0,
            decode_log_interval=args.decode_log_interval,
            spec_steps=steps,
        )
        self.state = ServerState(
            args, ready, log, batcher, self.install_tokenizer_handlers, self.first_real_request
        )
        batcher.tokens_per_s = max(self.state.cfg.tokens_per_s, 0.1)
        batcher.max_running = ready[0].get("max_running_requests") if ready else None
        batcher.perf = SpecPerf(Spec.of(args), batcher.tokens_per_s)  # the flags as SGLang adjusted them
        self.http = HttpServer(App(self.state), self.access_log)

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` as a task that cannot be garbage-collected before it ends."""
        task = self.loop.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def access_log(self, request: Request, status: int) -> None:
        self.log.access(
            request.client, f"{request.method} {request.target} HTTP/1.1", status, HTTPStatus(status).phrase
        )

    # --- uvicorn -------------------------------------------------------------------------------------------

    async def run(self) -> None:
        self.log.uvicorn(f"Started server process [{os.getpid()}]")
        self.log.uvicorn("Waiting for application startup.")
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(sig, self.uvicorn_exit, sig)
        await asyncio.sleep(timeline.span("uvicorn"))
        if "qwen" in self.args.model_path.lower():
            self.log.info(
                "Using default chat sampling params from model generation config: "
                "{'temperature': 0.6, 'top_k': 20, 'top_p': 0.95}"
            )
        self.log.uvicorn("Application startup complete.")
        try:
            await self.bind()
        except OSError as exc:
            self.bind_failed(exc)
        self.log.uvicorn(
            f"Uvicorn running on http://{self.args.host}:{self.args.port} (Press CTRL+C to quit)"
        )
        self.spawn(self.warm_up())
        await self.stopped

    async def bind(self) -> None:
        if self.state.cfg.scenario == "port-in-use":
            address = (self.args.host, self.args.port)
            raise OSError(
                errno.EADDRINUSE,
                f"error while attempting to bind on address {address!r}: address already in use",
            )
        await self.http.start(self.args.host, self.args.port)

    def bind_failed(self, exc: OSError) -> None:
        """uvicorn logs the error, shuts the lifespan down and exits 1 (launch_server's finally kills the
        tree)."""
        self.log.uvicorn(str(exc), "error")
        self.log.uvicorn("Waiting for application shutdown.")
        self.log.uvicorn("Application shutdown complete.")
        sys.exit(1)

    def uvicorn_exit(self, sig: int) -> None:
        """uvicorn's own handler: shut down, then re-raise the signal (PDEATHSIG takes the children)."""
        self.log.uvicorn("Shutting down")
        self.http.close()
        self.log.uvicorn("Waiting for application shutdown.")
        self.log.uvicorn("Application shutdown complete.")
        self.log.uvicorn(f"Finished server process [{os.getpid()}]")
        kill_process_tree(os.getpid(), include_parent=False)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    async def warm_up(self) -> None:
        if not self.args.skip_server_warmup and not await warm_up(self.args, self.log):
            kill_process_tree(os.getpid(), include_parent=True)
        self.state.status = UP
        if self.state.cfg.ready_log_lag_s:
            await asyncio.sleep(self.state.cfg.ready_log_lag_s)
        self.log.info("The server is fired up and ready to roll!")

    # --- TokenizerManager (installed on the first generation, 511 tokenizer_manager auto_create_handle_loop)

    def install_tokenizer_handlers(self) -> None:
        if self.handlers_installed:
            return
        self.handlers_installed = True
        self.loop.add_signal_handler(signal.SIGTERM, self.sigterm)
        self.loop.add_signal_handler(signal.SIGQUIT, self.sigquit)
        self.spawn(self.sigterm_watchdog())

    def sigterm(self) -> None:
        self.log.warning("SIGTERM received. signum=None frame=None. Draining requests and shutting down...")
        self.state.draining = True

    def sigquit(self) -> None:
        self.log.error("SIGQUIT received. signum=None, frame=None. It usually means one child failed.")
        kill_process_tree(os.getpid(), include_parent=True)

    async def sigterm_watchdog(self) -> None:
        """511 tokenizer_manager.py `sigterm_watchdog`: checks every 5 s, drains, then kills the tree."""
        while not self.state.draining:
            await asyncio.sleep(timeline.span("drain_log"))
        while True:
            running = [rid for rid in self.state.batcher.running if not rid.startswith("HEALTH_CHECK")]
            if self.state.status == "UnHealthy":
                self.log.error("Signal SIGTERM received while health check failed. Force exiting.")
                break
            self.log.info(
                f"Gracefully exiting... Remaining number of requests {len(running)}. "
                f"Remaining requests remaining_rids={running}."
            )
            if not running:
                break
            await asyncio.sleep(timeline.span("drain_log"))
        kill_process_tree(os.getpid(), include_parent=True)

    def first_real_request(self) -> None:
        # TP0 has this request's Prefill line queued before the crash, so the log shows the server
        # serving when it dies; the other ranks die with the tree (their tracebacks would race TP0's).
        if self.state.cfg.scenario == "crash-serving":
            self.group.send(self.group.tp0, {"cmd": "crash"})


async def serve(args: Any, group: RankGroup, ready: list[dict[str, Any]], log: LogWriter) -> None:
    await Server(args, group, ready, log).run()
