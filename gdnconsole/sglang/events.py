"""What a log line means: its startup stage, its severity, and the numbers it carries (FACTS §2-§3).

SGLang's own lines carry no level name (a ``logger.warning`` looks like an info line), so meaning comes
from the message text. The rules below are checked in order; the first that matches wins. Whether a
multi-line block (a traceback) is fatal is decided by the tracker, which sees the whole block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gdnconsole.sglang.logline import PY_WARNING_RE as _PY_WARNING
from gdnconsole.sglang.logline import Kind, LogLine
from gdnconsole.sglang.stages import Severity, Stage

S = Stage
V = Severity


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str  # a short name for what the line is: "load_end", "decode_batch", "scheduler_exception", …
    needle: str  # matched with `in` against the message (startswith when `prefix`)
    stage: Stage | None  # None: the line does not move the stage
    severity: Severity = V.INFO
    prefix: bool = False
    opens_block: bool = False  # the unframed lines after it are its continuation (a traceback follows)


# Framed (SGLang logger) messages. Order matters: more specific needles first.
FRAMED_RULES: tuple[Rule, ...] = (
    # --- runtime, by far the most frequent lines
    Rule("decode_batch", "Decode batch", S.SERVING, prefix=True),
    Rule("prefill_batch", "Prefill batch", S.SERVING, prefix=True),
    # --- failures (§3)
    Rule("scheduler_exception", "Scheduler hit an exception", None, V.FATAL, opens_block=True),
    # ≤0.3 (2024) wrote the scheduler's traceback under this header, on the lines that follow it
    Rule("scheduler_exception", "Exception in run_tp_server", None, V.FATAL, opens_block=True),
    Rule("scheduler_exception", "Exception in ModelTpServer", None, V.FATAL, opens_block=True),
    Rule("controller_exception", "Exception in Controller", None, V.FATAL, opens_block=True),
    Rule("manager_exception", "Manager hit an exception", None, V.FATAL, opens_block=True),
    Rule("controller_exception", "Controller hit an exception", None, V.FATAL, opens_block=True),
    # 0.3.x-0.4.0 (late 2024): run_scheduler_process logged get_exception_traceback() on its own, under
    # the rank's frame, then killed its parent: a rank-prefixed bare traceback is that rank's crash.
    Rule(
        "logged_traceback", "Traceback (most recent call last)", None, V.FATAL, prefix=True, opens_block=True
    ),
    Rule("sigquit_launch", "Received sigquit from a child proces", None, V.FATAL),
    Rule("sigquit_running", "SIGQUIT received", None, V.FATAL),
    Rule("warmup_failed", "Initialization failed. warmup error", S.WARMUP, V.FATAL, opens_block=True),
    # the diffusion runtime: "Server warmup failed; aborting startup: …" + traceback
    Rule("warmup_failed", "warmup failed", S.WARMUP, V.FATAL, opens_block=True),
    Rule("init_failed", "Initialization failed", None, V.FATAL, opens_block=True),
    Rule("subprocess_crashed", "crashed with exit code", None, V.FATAL),
    Rule("scheduler_died", "scheduler died during initialization", None, V.FATAL),
    Rule("scheduler_dead", "scheduler is dead", None, V.FATAL),
    Rule(
        "not_enough_memory",
        "Not enough memory. Please try to increase --mem-fraction-static",
        S.MEMORY,
        V.FATAL,
    ),
    # The watchdog dumps the stuck scheduler's stack, then sends SIGQUIT to the main process: it is the
    # cause of the shutdown that follows (FACTS §3; 0.4 wrote "Watchdog timeout (…)", capitalised).
    Rule("watchdog", "atchdog timeout", None, V.FATAL),
    Rule("health_failed", "Health check failed", None, V.ERROR),
    Rule("runtime_oom", "out of memory. Try to lower your batch size", None, V.ERROR),
    # 0.4: "Decode out of memory happened. #retracted_reqs: 1, …": requests retracted, the server goes on
    Rule("retracted", "out of memory happened", None, V.WARNING),
    Rule("sigterm", "SIGTERM received", None, V.WARNING),
    Rule("draining", "Gracefully exiting", None),
    Rule("kill_tree", "kill_process_tree called", None),
    # --- starting (§2.1 rows 0-2)
    Rule("args", "server_args=", S.STARTING, prefix=True),
    Rule("import_error", "Ignore import error when loading", None, V.WARNING, opens_block=True),
    # 0.5.23's mimo_audio: the same missing FFmpeg, said once, and SGLang goes on without it
    Rule("torchcodec_missing", "torchcodec is unavailable", None, V.WARNING, opens_block=True),
    Rule("notice_attention", "Attention backend not specified", S.STARTING, V.WARNING),
    Rule("notice_max_running", "Max running requests is reset", S.STARTING, V.WARNING),
    Rule("notice_spec_v2", "Spec v2 is enabled", S.STARTING),
    Rule("notice_spec_v1", "Spec v1 is used", S.STARTING, V.WARNING),
    Rule("notice_draft_tokens", "speculative_num_draft_tokens is adjusted", S.STARTING, V.WARNING),
    Rule("notice_overlap", "Disabling overlap schedule", S.STARTING, V.WARNING),
    Rule("notice_radix", "Disabling Radix Cache", S.STARTING, V.WARNING),
    Rule("notice_spec_overlap", "spec v2 currently only supports", S.STARTING, V.WARNING),
    Rule("deprecated_endpoint", "Endpoint '/get_model_info' is deprecated", None, V.WARNING),
    Rule("deprecated", "deprecated", None, V.WARNING),
    Rule("param_not_found", "not found in params_dict", None, V.WARNING),  # models' logger.warning
    Rule("not_installed", " not installed", None, V.WARNING),
    Rule("chat_template", "chat template", S.STARTING),
    # --- distributed (§2.1 row 3, §2.2)
    Rule("dist_begin", "Init torch distributed begin", S.DISTRIBUTED, prefix=True),
    Rule("dist_begin", "Init nccl begin", S.DISTRIBUTED, prefix=True),  # 2024 builds ([gpu_id=N])
    Rule("dist_end", "Init torch distributed ends", S.DISTRIBUTED, prefix=True),
    Rule("dist_begin", "Init parallel begin", S.DISTRIBUTED, prefix=True),
    Rule("dist_end", "Init parallel ends", S.DISTRIBUTED, prefix=True),
    Rule("nccl_version", "sglang is using nccl", S.DISTRIBUTED, prefix=True),
    Rule("nccl_warmup", "CCL warmup completed", S.DISTRIBUTED),
    Rule("memory_baseline", "Memory baseline taken", S.DISTRIBUTED, prefix=True),
    Rule("nccl_error", "NCCL error", S.DISTRIBUTED, V.FATAL),
    # --- weights (§2.1 rows 4, 4b)
    Rule("load_begin", "Load weight begin", S.LOADING, prefix=True),
    Rule("load_end", "Load weight end", S.LOADED, prefix=True),
    # --- pools (§2.1 row 5)
    Rule("kv_dtype", "Using KV cache dtype", S.MEMORY, prefix=True),
    Rule("mamba_alloc", "Mamba Cache is allocated", S.MEMORY, prefix=True),
    # a sliding-window model's two pools (0511/0523 mem_cache/swa_memory_pool.py:97/:132)
    Rule("swa_alloc", "SWAKVPool", S.MEMORY, prefix=True),
    Rule("kv_alloc", "KV Cache is allocated", S.MEMORY),
    Rule("pool_end", "Memory pool end", S.MEMORY, prefix=True),
    Rule("profiled_tokens", "profiled value", S.MEMORY, V.WARNING),
    Rule("replayssm", "GDN ReplaySSM", S.MEMORY, prefix=True),
    # --- attention backends (§2.1 row 6): after the pools, before graphs
    Rule("linear_attention", "Linear attention kernel backend", S.MEMORY, prefix=True),
    Rule("hybrid_gdn", "Using hybrid linear attention backend", S.MEMORY, prefix=True),
    Rule("gdn_dispatcher", "GDN kernel dispatcher", S.MEMORY, prefix=True),
    # --- CUDA graphs (§2.1 row 7, §2.2)
    Rule("graph_failed", "Capture cuda graph failed", S.GRAPHS, V.FATAL),
    Rule("graph_end", "Capture cuda graph end", S.GRAPHS, prefix=True),
    Rule("graph_begin", "Capture cuda graph begin", S.GRAPHS, prefix=True),
    Rule("graph_bs", "Capture cuda graph", S.GRAPHS, prefix=True),
    Rule("graph_piecewise", "Capture piecewise CUDA graph", S.GRAPHS, prefix=True),
    Rule("graph_draft", "Capture draft", S.GRAPHS, prefix=True),
    Rule("graph_target", "Capture target", S.GRAPHS, prefix=True),
    Rule("graph_addresses", "cuda graph addresses", S.GRAPHS),
    # other devices and versions name their graphs otherwise; every SGLang "Capture …" line is a capture
    Rule("graph_other", "Capture ", S.GRAPHS, prefix=True),
    # --- scheduler ready (§2.1 row 8)
    Rule("scheduler_ready", "max_total_num_tokens=", S.SCHEDULER_READY, prefix=True),
    Rule("startup_timings", "Engine startup timings", S.SCHEDULER_READY, prefix=True),
    # --- HTTP (§2.1 rows 9-11)
    Rule("sampling_params", "Using default chat sampling params", S.LISTENING, prefix=True),
    Rule("ready", "The server is fired up and ready to roll", S.READY, prefix=True),
)

UVICORN_RULES: tuple[Rule, ...] = (
    Rule("bind_failed", "error while attempting to bind", None, V.FATAL),
    Rule("uvicorn_started", "Started server process", S.LISTENING, prefix=True),
    Rule("uvicorn_waiting", "Waiting for application startup", S.LISTENING, prefix=True),
    Rule("uvicorn_complete", "Application startup complete", S.LISTENING, prefix=True),
    Rule("uvicorn_running", "Uvicorn running on", S.LISTENING, prefix=True),
    Rule("uvicorn_shutdown", "Shutting down", None, prefix=True),
    Rule("uvicorn_finished", "Finished server process", None, prefix=True),
)

# Failures named by an exception line, and the stage they prove was reached.
EXCEPTION_STAGES: tuple[tuple[str, Stage], ...] = (
    ("Capture cuda graph failed", S.GRAPHS),
    ("NCCL error", S.DISTRIBUTED),
    ("Not enough memory", S.MEMORY),
)

# argparse's refusal: "usage: PROG [-h] …" then "PROG: error: MESSAGE", exit status 2. PROG is
# "sglang serve" from 0.5.x (srt/server_args.py prepare_server_args, cli/serve.py), the script's name
# before (launch_server.py), or python -m's __main__.py.
_PROG = r"(?:sglang serve|sglang|launch_server\.py|__main__\.py|python3? -m sglang\.launch_server)"
_ARGPARSE_ERROR = re.compile(_PROG + r": error: \S")
_ARGPARSE_USAGE = re.compile(r"usage: " + _PROG + r" ")

_UVICORN_LEVEL = {"WARNING": V.WARNING, "ERROR": V.ERROR, "CRITICAL": V.FATAL}


@dataclass(slots=True)
class Event:
    """A classified line. ``line`` is 1-based within its file."""

    line: int
    log: LogLine
    kind: str
    stage: Stage | None
    severity: Severity
    opens_block: bool = False
    numbers: dict[str, float] = field(default_factory=dict)

    @property
    def rank(self) -> str | None:
        return self.log.rank

    @property
    def time(self) -> float | None:
        return self.log.time


# The kernels and backends SGLang chose, as its lines say them (FACTS §2.1 row 6, §2.2): the name the
# console gives each, the pattern of the line, and the group holding the choice.
_BACKEND_LINES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("attention", re.compile(r"Attention backend not (?:specified|set)\. Use (?P<v>\S+) backend by default")),
    ("multimodal_attention", re.compile(r"Using (?P<v>\S+) as multimodal attention backend")),
    ("linear_attention", re.compile(r"Linear attention kernel backend: (?P<v>.+?)\.?\s*$")),
    ("hybrid_linear_attention", re.compile(r"Using (?P<v>hybrid) linear attention backend for hybrid GDN")),
    ("gdn_kernels", re.compile(r"GDN kernel dispatcher: (?P<v>.+?)\s*$")),
    ("cute_dsl_gdn_decode", re.compile(r"CuTe DSL GDN decode enabled: (?P<v>\S+)")),
)
# The args dump names the backend in force: ServerArgs(…, attention_backend='fa3', …) or, from 0.5.22,
# {…, 'attention_backend': 'fa3', …}; None (not chosen yet) is left to the notice that follows.
_ARGS_BACKEND = re.compile(r"""\battention_backend'?[=:] ?'(?P<v>[\w.-]+)'""")


def backend_choice(kind: str, message: str) -> tuple[str, str] | None:
    """The kernel or backend a line says SGLang chose: (what, choice), or None."""
    if kind == "args":
        m = _ARGS_BACKEND.search(message)
        return ("attention", m["v"]) if m else None
    if "ackend" not in message and "GDN" not in message:
        return None
    for name, pattern in _BACKEND_LINES:
        if (m := pattern.search(message)) is not None:
            return name, m["v"]
    return None


def _match(rules: tuple[Rule, ...], message: str) -> Rule | None:
    for rule in rules:
        if message.startswith(rule.needle) if rule.prefix else rule.needle in message:
            return rule
    return None


def classify(log: LogLine, line: int = 0) -> Event:
    """The meaning of one parsed line, on its own (block context is the tracker's)."""
    kind = log.kind
    if kind is Kind.FRAMED:
        rule = _match(FRAMED_RULES, log.message)
        if rule is None:
            if _PY_WARNING.match(log.message):  # a Python warning routed through SGLang's logger
                return Event(line, log, "py_warning", None, V.WARNING, opens_block=True)
            return Event(line, log, "message", None, V.INFO)
        opens = rule.opens_block or (rule.severity is V.FATAL and "Traceback" in log.message)
        return Event(
            line, log, rule.kind, rule.stage, rule.severity, opens, numbers_of(rule.kind, log.message)
        )
    if kind is Kind.UVICORN:
        rule = _match(UVICORN_RULES, log.message)
        severity = _UVICORN_LEVEL.get(log.level or "", V.INFO)
        if rule is None:
            return Event(line, log, "uvicorn", None, severity)
        numbers = numbers_of(rule.kind, log.message)
        return Event(line, log, rule.kind, rule.stage, max(severity, rule.severity), numbers=numbers)
    if kind is Kind.ACCESS:
        return Event(line, log, "access", None, V.INFO, numbers=numbers_of("access", log.message))
    if kind is Kind.TQDM:
        return Event(line, log, *_tqdm_meaning(log.message), V.INFO)
    if kind is Kind.TRACEBACK:
        return Event(line, log, "traceback", None, V.ERROR, opens_block=True)
    if kind is Kind.EXCEPTION:
        severity = V.WARNING if _is_warning_class(log.message) else V.ERROR
        return Event(line, log, "exception", exception_stage(log.message), severity)
    if kind is Kind.PY_WARNING:
        return Event(line, log, "py_warning", None, V.WARNING, opens_block=True)
    if kind is Kind.LIBRARY:
        warns = log.level == "WARNING" or " NCCL WARN" in log.message or "deprecated" in log.message
        severity = V.WARNING if warns else V.INFO
        return Event(line, log, "library", None, severity)
    if kind is Kind.OTHER and _ARGPARSE_ERROR.match(log.message):
        # SGLang's argument parser refused the command line: it exits 2 before anything starts.
        return Event(line, log, "args_refused", S.STARTING, V.FATAL)
    if kind is Kind.OTHER and _ARGPARSE_USAGE.match(log.message):
        return Event(line, log, "args_usage", S.STARTING, V.INFO)
    if kind is Kind.OTHER and log.message.strip() == "Killed":
        # the shell's word for a job ended by SIGKILL (the OOM killer, kill_process_tree, a user)
        return Event(line, log, "killed", None, V.FATAL)
    return Event(line, log, "blank" if kind is Kind.BLANK else "text", None, V.INFO)


# Traceback frames name the step of startup the process was in (FACTS §2.1-§2.2: ModelRunner.initialize
# runs load_model → init_memory_pool → init_attention_backend → init_cuda_graphs/init_device_graphs; 0.5.23
# bootstrap.init_parallel_runtime → … → init_all_cuda_graphs). The scheduler's and detokenizer's event
# loops run requests: warm-up or serving, as the batch lines (``RUNNING``).
_FRAME = re.compile(r'\s*File "(?P<path>[^"]*)", line \d+, in (?P<func>[\w<>.]+)')
_FRAME_STAGES: dict[str, Stage] = {
    "init_torch_distributed": S.DISTRIBUTED,
    "init_distributed_environment": S.DISTRIBUTED,
    "initialize_model_parallel": S.DISTRIBUTED,
    "init_parallel_runtime": S.DISTRIBUTED,
    "load_model": S.LOADING,
    "load_weights_and_postprocess": S.LOADING,
    "init_memory_pool": S.MEMORY,
    "init_memory_pools": S.MEMORY,
    "profile_max_num_token": S.MEMORY,
    "init_attention_backend": S.MEMORY,
    "init_cuda_graphs": S.GRAPHS,
    "init_device_graphs": S.GRAPHS,
    "init_all_cuda_graphs": S.GRAPHS,
    "capture": S.GRAPHS,
    "capture_one_batch_size": S.GRAPHS,
    "_execute_server_warmup": S.WARMUP,
    "_wait_and_warmup": S.WARMUP,
}
RUNNING = S.SERVING  # the stage a frame of the request loop proves; the tracker reads it in context
_RUNNING_FRAMES = frozenset(
    {
        "run_event_loop",
        "dispatch_event_loop",
        "run_batch",
        "get_next_batch_to_run",
        "get_model_worker_batch",
        "handle_loop",  # the TokenizerManager's loop over the schedulers' outputs
        "generate_request",
    }
)


def frame_stage(message: str) -> Stage | None:
    """The stage a traceback frame (``File "…", line N, in func``) proves its process was in."""
    m = _FRAME.match(message)
    if m is None:
        return None
    func, path = m["func"], m["path"]
    stage = _FRAME_STAGES.get(func)
    if stage is not None:
        return stage
    if "memory_pool" in path.rsplit("/", 1)[-1]:
        return S.MEMORY  # the KV / state pools' buffers are created in memory_pool*.py
    if func == "__init__" and path.endswith("cuda_graph_runner.py"):
        return S.GRAPHS  # the runner captures in its constructor
    if func.startswith(("event_loop", "process_batch_result")) or func in _RUNNING_FRAMES:
        return RUNNING
    return None


def exception_stage(message: str) -> Stage | None:
    for needle, stage in EXCEPTION_STAGES:
        if needle in message:
            return stage
    return None


def _is_warning_class(message: str) -> bool:
    name = message.split(":", 1)[0]
    return name.endswith("Warning")


def _tqdm_meaning(message: str) -> tuple[str, Stage | None]:
    last = message.rsplit("\r", 1)[-1] or message
    if "checkpoint shards" in last or "loading shards" in last:
        return "tqdm_loading", S.LOADING
    if "Capturing" in last:
        return "tqdm_graphs", S.GRAPHS
    return "tqdm", None


# -- numbers ---------------------------------------------------------------------------------------

# The unit after a value is consumed: SGLang's mamba line runs on with no comma ("8.72GB intermediate_…").
_PAIR = re.compile(r"(?P<key>[#A-Za-z_][\w #()/-]*?)\s*[=:]\s*(?P<value>-?\d+(?:\.\d+)?)(?:\s*[KMGT]i?B\b)?")
_UVICORN_PORT = re.compile(r"https?://\S+?:(?P<port>\d+)")
_UVICORN_PID = re.compile(r"\[(?P<pid>\d+)\]")
_ACCESS_PARTS = re.compile(r'"(?P<method>[A-Z]+) (?P<path>\S*) HTTP/[\d.]+" (?P<status>\d{3})')

# The names numbers have in SGLang's lines, and the names the console gives them.
NUMBER_NAMES: dict[str, str] = {
    "avail mem": "avail_gb",
    "available_gpu_mem": "avail_gb",
    "mem usage": "mem_usage_gb",
    "elapsed": "elapsed_s",
    "Time elapsed": "elapsed_s",
    "#tokens": "kv_tokens",
    "K size": "k_gb",
    "V size": "v_gb",
    "KV size": "kv_gb",
    "max_mamba_cache_size": "mamba_cache_size",
    "conv_state size": "mamba_conv_gb",
    "ssm_state size": "mamba_ssm_gb",
    "intermediate_ssm_state_cache size": "mamba_intermediate_ssm_gb",
    "intermediate_conv_window_cache size": "mamba_intermediate_conv_gb",
    "max_total_num_tokens": "max_total_num_tokens",
    "chunked_prefill_size": "chunked_prefill_size",
    "max_prefill_tokens": "max_prefill_tokens",
    "max_running_requests": "max_running_requests",
    "context_len": "context_len",
    "#running-req": "running_req",
    "#queue-req": "queue_req",
    "#new-seq": "new_seq",
    "#new-token": "new_token",
    "#cached-token": "cached_token",
    "#token": "tokens",
    "#full token": "tokens",
    "token usage": "token_usage",
    "full token usage": "token_usage",
    "swa size": "swa_tokens",
    "#swa token": "swa_used",
    "swa token usage": "swa_usage",
    "mamba num": "mamba_num",
    "mamba usage": "mamba_usage",
    "accept len": "accept_len",
    "accept rate": "accept_rate",
    "gen throughput (token/s)": "gen_throughput",
    "input throughput (token/s)": "input_throughput",
}
_KINDS_WITH_NUMBERS = frozenset(
    {
        "decode_batch",
        "prefill_batch",
        "dist_end",
        "load_begin",
        "load_end",
        "kv_alloc",
        "mamba_alloc",
        "swa_alloc",
        "pool_end",
        "graph_begin",
        "graph_end",
        "graph_piecewise",
        "graph_draft",
        "graph_target",
        "scheduler_ready",
        "memory_baseline",
    }
)


def numbers_of(kind: str, message: str) -> dict[str, float]:
    """The named numbers of a line (GB, seconds, tokens, rates), under the console's names."""
    if kind in _KINDS_WITH_NUMBERS:
        numbers: dict[str, float] = {}
        for m in _PAIR.finditer(message):
            name = NUMBER_NAMES.get(m["key"].strip())
            if name is not None and name not in numbers:
                numbers[name] = float(m["value"])
        if kind == "load_end" and "mem_usage_gb" in numbers:
            numbers["weights_gb"] = numbers["mem_usage_gb"]
        if kind == "graph_end":
            if "elapsed_s" in numbers:
                numbers["graph_s"] = numbers["elapsed_s"]
            if "mem_usage_gb" in numbers:
                numbers["graph_mem_gb"] = numbers["mem_usage_gb"]
        return numbers
    if kind == "uvicorn_running" and (port := _UVICORN_PORT.search(message)):
        return {"port": float(port["port"])}
    if kind == "uvicorn_started" and (pid := _UVICORN_PID.search(message)):
        return {"pid": float(pid["pid"])}
    if kind == "access" and (access := _ACCESS_PARTS.search(message)):
        return {"status": float(access["status"])}
    return {}


def access_path(message: str) -> str | None:
    m = _ACCESS_PARTS.search(message)
    return m["path"] if m else None
