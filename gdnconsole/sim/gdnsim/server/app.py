"""SGLang's HTTP endpoints (FACTS §6) over the simulated scheduler: health, model and server info, the
native ``/generate`` used by the warm-up, ``/flush_cache`` and OpenAI ``/v1/chat/completions``.

Chat completions can misbehave on purpose (``chat_fault`` in sim.json, read again for every chat request so
that a test can switch a running server): hang, drop the connection, or send a line or body that is not
JSON. From 0.5.23, ``"return_meta_info": true`` on a non-streamed chat request adds SGLang's ``meta_info``
(with the request's own speculative figures) to each choice (FACTS §6)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import gdnsim.config as config
from gdnsim.server import args_dump, generation, loads, timeline, version
from gdnsim.server.batching import Batcher, Running
from gdnsim.server.http import Drop, Request, Response, Stall
from gdnsim.server.internal_state import internal_state
from gdnsim.server.layout import Layout
from gdnsim.server.logwriter import LogWriter
from gdnsim.server.metrics import Registry
from gdnsim.server.metrics_feed import Feed, schedulers
from gdnsim.server.models import describe

STARTING, UP, UNHEALTHY = "Starting", "Up", "UnHealthy"  # 511 ServerStatus
Route = Callable[[Request], Awaitable[Response]]
FAULT_AFTER = 3  # answer tokens sent (or generated) before a chat fault strikes
BAD_SSE_LINE = b'data: {"id": broken\n\n'
META_INFO_SINCE = (0, 5, 23)  # chat's "return_meta_info" (523 protocol.py:964); older versions ignore it
# chat's "return_spec_tokens_details" (523 protocol.py:961): the request's own speculative figures in the
# answer's "sglext" (streamed: a chunk with no choices before the usage chunk, serving_chat.py:2703-2763)
SPEC_DETAILS_SINCE = (0, 5, 23)


@dataclass
class ServerState:
    args: Any  # the resolved ServerArgs
    ready: list[dict[str, Any]]  # what each rank reported
    log: LogWriter
    batcher: Batcher
    on_generate: Callable[[], None]  # the first generation installs SGLang's signal handlers
    on_first_real_request: Callable[[], None]
    cfg: config.SimConfig = field(default_factory=config.load)
    status: str = STARTING
    draining: bool = False
    real_requests: int = 0
    started: float = field(default_factory=time.time)

    @property
    def model_name(self) -> str:
        return str(self.args.served_model_name or self.args.model_path)

    def chat_fault(self) -> str:
        """``chat_fault`` as sim.json says now (a file being rewritten: the value read at start)."""
        try:
            return config.load().chat_fault
        except (OSError, ValueError, TypeError, RuntimeError):
            return self.cfg.chat_fault


def launch_command(argv: list[str], watermark: str | None) -> str:
    """The server's argv as 0.5.23 keeps it: joined by spaces, the watermark config redacted (0.5.23
    server_args.py:717 from launch_server.py:81's ``sys.argv[1:]``, sampling/watermarking/core.py:110-134)."""
    out: list[str] = []
    redact_next = False
    for arg in argv:
        if redact_next:
            out.append("<redacted>")
            redact_next = False
        elif watermark is not None and arg == watermark:
            out.append("<redacted>")
        elif watermark is not None and "=" in arg and arg.split("=", 1)[1] == watermark:
            out.append(f"{arg.split('=', 1)[0]}=<redacted>")
        elif arg == "--watermark-config":
            out.append(arg)
            redact_next = True
        elif arg.startswith("--watermark-config="):
            out.append("--watermark-config=<redacted>")
        else:
            out.append(arg)
    return " ".join(out)


def metrics_version(sglang: str) -> str:
    """The wheel whose families a version serves: 0.5.23's from 0.5.23 on, 0.5.11's before."""
    return "0.5.23" if version.parse(sglang) >= (0, 5, 23) else "0.5.11"


def make_feed(state: ServerState) -> Feed:
    """The metrics of this server process: nothing carries over a restart."""
    args = state.args
    return Feed(
        Registry(metrics_version(state.cfg.sglang)),
        schedulers(args, state.model_name),
        state.model_name,
        int(state.ready[0]["max_total_num_tokens"]),
        Layout.of(args).dp_ranks,
        {**state.ready[0], "page_size": int(getattr(args, "page_size", 1) or 1)},
    )


class App:
    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.feed = make_feed(state)
        state.batcher.observer = self.feed
        self.routes: dict[tuple[str, str], Route] = {}
        for method in ("GET", "POST"):
            for path in ("/health", "/health_generate"):
                self.routes[(method, path)] = self.health
            self.routes[(method, "/flush_cache")] = self.flush_cache
        self.routes[("GET", "/model_info")] = self.model_info
        self.routes[("GET", "/get_model_info")] = self.get_model_info
        self.routes[("GET", "/server_info")] = self.server_info
        self.routes[("GET", "/get_server_info")] = self.server_info
        self.routes[("GET", "/v1/models")] = self.models
        self.routes[("GET", "/ping")] = self.ping
        self.routes[("GET", "/metrics")] = self.metrics
        self.routes[("GET", "/v1/loads")] = self.v1_loads
        self.routes[("POST", "/generate")] = self.generate
        self.routes[("POST", "/freeze_gc")] = self.ping
        self.routes[("POST", "/v1/chat/completions")] = self.chat_completions

    async def __call__(self, request: Request) -> Response:
        route = self.routes.get((request.method, request.path))
        if route is None:
            known = any(path == request.path for _, path in self.routes)
            return Response.json(
                {"detail": "Method Not Allowed" if known else "Not Found"}, 405 if known else 404
            )
        if not self._authorized(request):
            return Response.json({"error": "Unauthorized"}, 401)
        return await route(request)

    def _authorized(self, request: Request) -> bool:
        """``--api-key`` wants ``Authorization: Bearer KEY``; health and metrics stay open
        (511 add_api_key_middleware)."""
        key = self.state.args.api_key
        if not key or request.path.startswith(("/health", "/metrics")):
            return True
        return request.headers.get("authorization", "") == f"Bearer {key}"

    # --- health ------------------------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        """511 http_server.py:506-578: 503 while starting or draining, else a 1-token generation."""
        state = self.state
        if state.draining:
            state.log.info("Health check request received during shutdown. Returning 503.")
            return Response(503)
        if state.status == STARTING:
            return Response(503)
        if state.cfg.scenario == "health-fail" or state.status == UNHEALTHY:
            return await self._health_timeout()
        if state.batcher.running:
            return Response(200)  # busy: a running request proves liveness
        state.on_generate()
        running = state.batcher.submit(f"HEALTH_CHECK_{uuid.uuid4().hex}", 1, [("content", "")])
        await _drain(running)
        return Response(200)

    async def _health_timeout(self) -> Response:
        tic = time.strftime("%H:%M:%S")
        await asyncio.sleep(timeline.span("health_timeout"))
        self.state.status = UNHEALTHY
        self.state.log.error(
            "Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. "
            f"tic start time: {tic}. last_heartbeat time: {_clock(self.state.started)}"
        )
        return Response(503)

    async def ping(self, request: Request) -> Response:
        return Response(200)

    # --- information ---------------------------------------------------------------------------------------

    async def model_info(self, request: Request) -> Response:
        spec = describe(self.state.args.model_path)
        info: dict[str, Any] = {
            "model_path": self.state.args.model_path,
            "tokenizer_path": self.state.args.tokenizer_path,
            "is_generation": True,
            "preferred_sampling_params": None,
            "weight_version": "default",
            "has_image_understanding": spec.arch.endswith("ForConditionalGeneration"),
            "has_audio_understanding": False,
            "model_type": spec.model_type,
            "architectures": [spec.arch],
        }
        return Response.json(info)

    async def get_model_info(self, request: Request) -> Response:
        self.state.log.warning(
            "Endpoint '/get_model_info' is deprecated and will be removed in a future version. "
            "Please use '/model_info' instead."
        )
        return await self.model_info(request)

    async def server_info(self, request: Request) -> Response:
        state = self.state
        info: dict[str, Any] = dict(args_dump.values(state.args))
        rank0 = state.ready[0]
        accept = state.batcher.avg_accept_length
        internal = internal_state(
            state.cfg.sglang,
            info,
            self.feed,
            round(state.batcher.last_gen_throughput, 2),
            None if accept is None else round(accept, 4),
        )
        info["max_total_num_tokens"] = rank0["max_total_num_tokens"]
        # the scheduler's handshake (511 scheduler.py:1475-1486; tp_worker.py:302-306)
        longest = min(int(rank0["context_len"]) - 1, int(rank0["max_total_num_tokens"]) - 1)
        info["max_req_input_len"] = longest - 5
        # one per DP rank (0.5.23 http_server.py:875-878 "internal states per DP")
        info["internal_states"] = [dict(internal) for _ in range(self.feed.groups)]
        info["version"] = state.cfg.sglang
        if version.parse(state.cfg.sglang) >= (0, 5, 23):
            # 523 http_server.py:882-891 and utils/common.py:3584-3593: no KV-event publisher by default
            info["launch_command"] = launch_command(
                sys.argv[1:], getattr(state.args, "watermark_config", None)
            )
            info["kv_events"] = None
            info["startup_time"] = self.feed.engine_startup_time()  # 523 http_server.py:884
            info["frontend"] = "python"
        return Response.json(info)

    async def models(self, request: Request) -> Response:
        name = self.state.model_name
        card = {
            "id": name,
            "object": "model",
            "created": int(self.state.started),
            "owned_by": "sglang",
            "root": name,
            "parent": None,
            "max_model_len": self.state.ready[0]["context_len"],
        }
        return Response.json({"object": "list", "data": [card]})

    async def metrics(self, request: Request) -> Response:
        """404 without ``--enable-metrics``, as SGLang mounts the route only then (0.5.11
        http_server.py add_prometheus_middleware)."""
        if not self.state.args.enable_metrics:
            return Response.json({"detail": "Not Found"}, 404)
        text = self.feed.registry.render(os.getpid())
        return Response(200, text.encode(), content_type="text/plain; version=0.0.4; charset=utf-8")

    async def v1_loads(self, request: Request) -> Response:
        started = time.perf_counter()
        try:
            return self._v1_loads()
        finally:
            self.feed.on_loads(time.perf_counter() - started)

    def _v1_loads(self) -> Response:
        state, feed = self.state, self.feed
        rank0 = state.ready[0]
        capacity = int(rank0["max_total_num_tokens"])
        dp_attention = feed.groups > 1
        memory = {
            "weight_gb": round(rank0["weight_gib"], 3),
            "kv_cache_gb": round(rank0["kv_gib"], 3),
            "graph_gb": round(rank0["graph_gib"], 3),
            "token_capacity": capacity,
        }
        accept = state.batcher.avg_accept_length
        spec = None if accept is None else {"accept_length": accept, "accept_rate": _accept_rate(state)}
        answer = []
        for group in range(feed.groups):
            mine = [r for r in state.batcher.running.values() if feed.group(r.rid) == group]
            used = sum(r.prompt_tokens + r.generated for r in mine)
            base = loads.core(
                group if dp_attention else None,
                len(mine),
                used,
                capacity,
                state.batcher.last_gen_throughput,
                int(rank0.get("max_running_requests", 0)),
                sum(1 for r in state.batcher.waiting if feed.group(r.rid) == group),
            )
            answer.append(loads.one_rank(state.cfg.sglang, base, memory, spec))
        tp, pp = int(state.args.tp_size), int(state.args.pp_size)
        per_rank = tp * pp // feed.groups
        return Response.json(loads.answer(state.cfg.sglang, answer, per_rank, state.cfg.gpu_name))

    async def flush_cache(self, request: Request) -> Response:
        if self.state.batcher.running:
            return Response.text(
                "Cache not flushed. Please check backend logs for more details. (When there are running or "
                "waiting requests, the operation will not be performed.)",
                400,
            )
        self.state.log.info("Cache flushed successfully!")
        return Response.text(
            "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting "
            "requests, the operation will not be performed.)"
        )

    # --- generation ----------------------------------------------------------------------------------------

    def _admit(
        self,
        messages: object,
        prompt_tokens: int,
        tokens: list[tuple[str, str]],
        warmup: bool,
        stream: bool = False,
    ) -> Running | None:
        """Hand a request to the scheduler; None when it will never be answered (a fault scenario)."""
        state = self.state
        state.on_generate()
        if warmup:
            return state.batcher.submit(uuid.uuid4().hex, prompt_tokens, tokens)
        state.real_requests += 1
        if state.cfg.scenario == "health-fail":
            return None
        running = state.batcher.submit(uuid.uuid4().hex, prompt_tokens, tokens, stream)
        if state.real_requests == 1:
            state.on_first_real_request()  # crash-serving: after the Prefill line, as SGLang would
        return None if state.cfg.scenario == "crash-serving" else running

    async def generate(self, request: Request) -> Response:
        """Native ``/generate``: ``{"text": …, "sampling_params": {"max_new_tokens": …}}``."""
        if self.state.draining:
            return Response.json({"error": {"message": "The server is shutting down."}}, 503)
        body = _body(request)
        params = body.get("sampling_params") or {}
        completion = generation.complete(body.get("text"), params.get("max_new_tokens", 128), thinking=False)
        prompt_tokens = generation.count_prompt_tokens(body.get("text"))
        warmup = request.headers.get("user-agent", "").startswith("python-requests")
        running = self._admit(body.get("text"), prompt_tokens, completion.tokens, warmup)
        if running is None:
            await asyncio.Event().wait()
        assert running is not None
        text = "".join(t for _, t in await _drain(running))
        meta = {
            "id": running.rid,
            "finish_reason": {"type": completion.finish_reason},
            "prompt_tokens": prompt_tokens,
            "completion_tokens": running.generated,
            "cached_tokens": 0,
            "weight_version": "default",
        }
        if self.state.batcher.spec_steps:
            meta["spec_verify_ct"] = running.verify_ct
        return Response.json({"text": text, "output_ids": list(range(running.generated)), "meta_info": meta})

    async def chat_completions(self, request: Request) -> Response:
        if self.state.draining:
            return Response.json({"error": {"message": "The server is shutting down."}}, 503)
        fault = self.state.chat_fault()
        if fault == "hang":
            raise Stall()
        try:
            body = _body(request)
            messages = body["messages"]
        except (ValueError, KeyError, TypeError):
            return _bad_request("messages is required")
        meta_info = bool(body.get("return_meta_info")) and (
            version.parse(self.state.cfg.sglang) >= META_INFO_SINCE
        )
        if meta_info and body.get("stream"):
            return _bad_request("return_meta_info is not supported with streaming (stream=true).")
        spec_details = bool(body.get("return_spec_tokens_details")) and (
            version.parse(self.state.cfg.sglang) >= SPEC_DETAILS_SINCE
        )
        kwargs = body.get("chat_template_kwargs") or {}
        thinking = bool(self.state.args.reasoning_parser) and kwargs.get("enable_thinking", True) is not False
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        completion = generation.complete(messages, max_tokens, thinking, bool(body.get("ignore_eos")))
        prompt_tokens = generation.count_prompt_tokens(messages)
        running = self._admit(messages, prompt_tokens, completion.tokens, False, bool(body.get("stream")))
        spec_steps = self.state.batcher.spec_steps
        chat = ChatStream(self.state.model_name, running, prompt_tokens, completion.finish_reason, spec_steps)
        chat.spec_details = spec_details
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return Response(200, content_type="text/event-stream", stream=chat.sse(include_usage, fault))
        return await chat.whole(fault, meta_info)


class ChatStream:
    """One chat completion, as SSE chunks or as one response (511 serving_chat.py)."""

    def __init__(
        self,
        model: str,
        running: Running | None,
        prompt_tokens: int,
        finish_reason: str,
        spec_steps: int | None = None,
    ) -> None:
        self.model = model
        self.running = running
        self.rid = running.rid if running else uuid.uuid4().hex
        self.prompt_tokens = prompt_tokens
        self.finish_reason = finish_reason
        self.spec_steps = spec_steps
        self.created = int(time.time())
        self.started = time.monotonic()
        self.spec_details = False  # asked for the request's own speculative figures (sglext)

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish, "matched_stop": None}
        payload = {
            "id": self.rid,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [choice],
            "usage": None,
        }
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    def _usage(self, completion_tokens: int) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.prompt_tokens + completion_tokens,
            "completion_tokens": completion_tokens,
            "prompt_tokens_details": None,
        }

    async def sse(self, include_usage: bool, fault: str = "none") -> AsyncIterator[bytes]:
        if self.running is None:
            await asyncio.Event().wait()  # accepted, never answered
        assert self.running is not None
        broken = fault in ("drop", "bad-sse", "bad-json")  # the fault is still to strike
        sent = 0
        try:
            yield self._chunk({"role": "assistant", "content": ""})
            while (piece := await self.running.out.get()) is not None:
                for kind, text in piece:
                    yield self._chunk({kind: text})
                    sent += 1
                    if broken and sent >= FAULT_AFTER:
                        broken = False
                        yield self._fault_line(fault)
            if broken:  # an answer too short to reach FAULT_AFTER: the fault strikes before its end
                yield self._fault_line(fault)
            yield self._chunk({}, self.finish_reason)
            sglext = self._sglext()
            if sglext is not None:
                chunk = {
                    "id": self.rid,
                    "object": "chat.completion.chunk",
                    "created": self.created,
                    "model": self.model,
                    "choices": [],
                    "sglext": sglext,
                }
                yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
            if include_usage:
                usage = {
                    "id": self.rid,
                    "object": "chat.completion.chunk",
                    "created": self.created,
                    "model": self.model,
                    "choices": [],
                    "usage": self._usage(self.running.generated),
                }
                yield b"data: " + json.dumps(usage).encode() + b"\n\n"
            yield b"data: [DONE]\n\n"
        finally:
            if self.running.pending:
                self.running.pending.clear()  # the client left: stop generating for it
                self.running.aborted = True

    @staticmethod
    def _fault_line(fault: str) -> bytes:
        """What a streamed answer sends where its fault strikes ("drop": nothing, the connection closes)."""
        if fault == "drop":
            raise Drop()
        return BAD_SSE_LINE

    def _meta_info(self) -> dict[str, Any]:
        """SGLang's per-request ``meta_info`` (523 tokenizer_manager.py), with speculative figures if on."""
        assert self.running is not None
        running = self.running
        meta: dict[str, Any] = {
            "id": running.rid,
            "finish_reason": {"type": self.finish_reason},
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": running.generated,
            "cached_tokens": 0,
            "weight_version": "default",
            "e2e_latency": round(time.monotonic() - self.started, 6),
        }
        if self.spec_steps:
            verify_ct = running.verify_ct
            correct = running.spec_accepted - verify_ct  # the bonus token of each verify is no draft
            proposed = verify_ct * self.spec_steps
            meta["spec_verify_ct"] = verify_ct
            meta["spec_accept_length"] = running.spec_accepted / verify_ct if verify_ct else 1.0
            meta["spec_accept_rate"] = correct / proposed if proposed else 0.0
            meta["spec_num_correct_drafts"] = correct
            meta["spec_num_proposed_drafts"] = proposed
        return meta

    def _sglext(self) -> dict[str, Any] | None:
        """The answer's SGLang extension (523 protocol.py SglExt): the request's speculative figures
        (SpecTokensDetails) when asked for and speculation is on; None otherwise (nothing is sent)."""
        if not self.spec_details or not self.spec_steps:
            return None
        meta = self._meta_info()
        details = {
            "spec_accept_rate": meta["spec_accept_rate"],
            "spec_accept_length": meta["spec_accept_length"],
            "spec_cap_length": 0.0,
            "spec_block_accept_length": 0.0,
            "spec_num_correct_drafts": meta["spec_num_correct_drafts"],
            "spec_num_proposed_drafts": meta["spec_num_proposed_drafts"],
            "spec_verify_ct": meta["spec_verify_ct"],
            "spec_correct_drafts_histogram": [],
            "spec_cap_lens_histogram": [],
        }
        return {"spec_tokens_details": details}

    async def whole(self, fault: str = "none", meta_info: bool = False) -> Response:
        if self.running is None:
            await asyncio.Event().wait()
        assert self.running is not None
        if fault == "drop":  # a few tokens in, the connection goes without an answer
            generated = 0
            while generated < FAULT_AFTER and (piece := await self.running.out.get()) is not None:
                generated += len(piece)
            self.running.pending.clear()
            self.running.aborted = True
            raise Drop()
        pieces = await _drain(self.running)
        content = "".join(t for kind, t in pieces if kind == "content")
        reasoning = "".join(t for kind, t in pieces if kind == "reasoning_content") or None
        message = {
            "role": "assistant",
            "content": content,
            "reasoning_content": reasoning,
            "tool_calls": None,
        }
        choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": self.finish_reason,
            "matched_stop": None,
        }
        if meta_info:
            choice["meta_info"] = self._meta_info()
        answer = {
            "id": self.rid,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [choice],
            "usage": self._usage(self.running.generated),
            "metadata": {"weight_version": "default"},
        }
        sglext = self._sglext()
        if sglext is not None:
            answer["sglext"] = sglext
        if fault == "bad-json":  # the body breaks off where the choices begin
            text = json.dumps(answer)
            cut = text.index('"choices": [') + len('"choices": [')
            return Response(200, text[:cut].encode())
        return Response.json(answer)


async def _drain(running: Running) -> list[tuple[str, str]]:
    """Every token of a request, once it finishes."""
    tokens: list[tuple[str, str]] = []
    while (piece := await running.out.get()) is not None:
        tokens.extend(piece)
    return tokens


def _accept_rate(state: ServerState) -> float:
    """Accepted drafts over proposed drafts (the bonus token of each verify is no draft)."""
    batcher = state.batcher
    proposed = batcher.verify_ct * (batcher.spec_steps or 0)
    return (batcher.accepted - batcher.verify_ct) / proposed if proposed else 0.0


def _bad_request(message: str) -> Response:
    error = {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}
    return Response.json(error, 400)


def _clock(moment: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(moment))


def _body(request: Request) -> dict[str, Any]:
    body = request.json()
    if not isinstance(body, dict):
        raise ValueError("JSON object expected")
    return body
