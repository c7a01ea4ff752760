"""An independent checker of SGLang's log formats, written from /work/shared/sglang/FACTS.md only.

It exists so that the simulator (``gdnconsole/sim``) cannot drift from SGLang: every line the simulator
writes can be fed through :func:`check_line` / :func:`check_log`. It shares no code with the simulator or
with the console's parser on purpose (ARCHITECTURE.md, "Tests use real parts").

- :func:`check_line` classifies one line (a :class:`LineKind`) or raises :class:`FormatError`.
- :func:`check_log` checks a whole log and returns a list of :class:`Finding` (empty when clean): every
  line, plus cross-line facts (timestamps per process stream, rank0-only messages, once-per-rank messages,
  stage order per rank, main-process order).
- ``version=None`` is the lenient mode: any dialect's wording is accepted where the version is unknown.

Section numbers in comments (§1.1 …) refer to FACTS.md.
"""

from __future__ import annotations

import enum
import functools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

__all__ = [
    "Finding",
    "FormatError",
    "LineKind",
    "ParsedLine",
    "check_line",
    "check_log",
    "format_findings",
    "parse_line",
    "parse_version",
]

Version = tuple[int, int, int]


class FormatError(ValueError):
    """A line that does not follow SGLang's format; the message names the line and the reason."""

    def __init__(self, line: str, why: str) -> None:
        self.line = line
        self.why = why
        shown = line if len(line) <= 300 else line[:300] + "…"
        super().__init__(f"{why}\n    line: {shown!r}")


class LineKind(enum.StrEnum):
    RANKED = "ranked"  # framed, with a rank prefix (scheduler process, §1.2)
    MAIN = "main"  # framed, no prefix: main process, detokenizer, or a tp=1 scheduler (§1.3)
    PRE_LOGGER = "pre_logger"  # framed by logging.basicConfig before configure_logger (§1.1, §2.1 row 0)
    UVICORN = "uvicorn"  # uvicorn default formatter (§1.1)
    UVICORN_ACCESS = "uvicorn_access"  # uvicorn access formatter (§1.1)
    TQDM = "tqdm"  # progress bars on stderr, possibly several \r states, possibly a log line glued (§1.1)
    TRACEBACK = "traceback"  # traceback lines, exception lines and their continuation lines
    TORCHCODEC = "torchcodec"  # `[end of libtorchcodec loading traceback].` (§3 torchcodec)
    PYTHON_WARNING = "python_warning"  # `/path/x.py:12: UserWarning: …`
    NCCL = "nccl"  # `host:pid:tid [gpu] NCCL INFO …`
    FLASHINFER = "flashinfer"  # `2025-03-27 21:33:31,320 - INFO - flashinfer.jit: …`
    TRANSFORMERS = "transformers"  # `[transformers] …`
    BLANK = "blank"


# --------------------------------------------------------------------------------------------------
# Versions and dialects (§2.3)
# --------------------------------------------------------------------------------------------------


def parse_version(version: str | None) -> Version | None:
    """``"0.5.11"``, ``"0.5.11.dev20260512+g339e36e"``, ``"0.5.11rc1"`` → ``(0, 5, 11)``; None → None."""
    if version is None or version in ("", "unknown"):
        return None
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    if match is None:
        raise ValueError(f"not a SGLang version: {version!r}")
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def _in_range(version: Version | None, first: Version | None, last: Version | None) -> bool:
    if version is None:  # lenient mode: every dialect
        return True
    return (first is None or version >= first) and (last is None or version <= last)


def _vtext(first: Version | None, last: Version | None) -> str:
    def fmt(v: Version | None) -> str:
        return ".".join(map(str, v)) if v else "…"

    return f"{fmt(first)}–{fmt(last)}"


# --------------------------------------------------------------------------------------------------
# The frame: `[%Y-%m-%d %H:%M:%S(.mmm)?( PREFIX)?] message` (§1.1, §1.2)
# --------------------------------------------------------------------------------------------------

FRAME_RE = re.compile(
    r"""
    \[
    (?P<date>\d{4}-\d{2}-\d{2})\ (?P<time>\d{2}:\d{2}:\d{2})
    (?:\.(?P<ms>\d{3}))?                 # SGLANG_LOG_MS=1 adds .%(msecs)03d
    (?P<prefix>(?:\ [A-Z_]+\d+)*)        # rank prefix: ` DP0 PP1 TP0 EP0` …
    \]\ (?P<message>.*)
    """,
    re.VERBOSE | re.DOTALL,
)
# Anything starting like a timestamped frame must be a correct frame.
FRAME_START_RE = re.compile(r"\[\d{2,4}-\d{2}")
PREFIX_TOKEN_RE = re.compile(r"(?P<name>[A-Z_]+?)(?P<index>\d+)")

# §1.2: prefix component order by version.
PREFIX_ORDER_0511 = ("DP", "PP", "ATTN_CP", "MOE_DP", "TP", "EP")  # 0.5.11+
PREFIX_ORDER_0506 = ("DP", "PP", "TP", "EP")  # 0.5.6+
PREFIX_ORDER_0502 = ("DP", "TP", "EP", "PP")  # 0.5.2
PREFIX_ORDER_044 = ("DP", "TP")  # 0.4.4: always TP (even tp=1)


def _prefix_orders(version: Version | None) -> list[tuple[tuple[str, ...], bool]]:
    """The allowed (order, TP required) grammars for a version; several in lenient mode."""
    if version is None:
        return [(PREFIX_ORDER_0511, False), (PREFIX_ORDER_0502, False), (PREFIX_ORDER_044, True)]
    if version >= (0, 5, 11):
        return [(PREFIX_ORDER_0511, False)]
    if version >= (0, 5, 6):
        return [(PREFIX_ORDER_0506, False)]
    if version >= (0, 5, 2):
        return [(PREFIX_ORDER_0502, False)]
    return [(PREFIX_ORDER_044, True)]


def _parse_prefix(prefix: str, version: Version | None, line: str) -> dict[str, int]:
    """Check the rank prefix grammar (§1.2) and return e.g. ``{"DP": 0, "TP": 1}``."""
    names: list[str] = []
    ranks: dict[str, int] = {}
    for token in prefix.split():
        match = PREFIX_TOKEN_RE.fullmatch(token)
        if match is None:
            raise FormatError(line, f"bad rank prefix token {token!r} (§1.2)")
        names.append(match["name"])
        ranks[match["name"]] = int(match["index"])
    if not names:
        return ranks
    problems = []
    for order, tp_required in _prefix_orders(version):
        if any(name not in order for name in names):
            problems.append(f"components must be among {' '.join(order)}")
        elif len(set(names)) != len(names) or [order.index(n) for n in names] != sorted(
            order.index(n) for n in names
        ):
            problems.append(f"order must be {' '.join(order)}")
        elif tp_required and "TP" not in names:
            problems.append("TP is always printed in this version")
        else:
            return ranks
    where = "any known version" if version is None else ".".join(map(str, version))
    raise FormatError(
        line, f"rank prefix {prefix.strip()!r} invalid for {where}: {'; '.join(problems)} (§1.2)"
    )


def _parse_timestamp(date: str, time: str, ms: str | None, line: str) -> datetime:
    try:
        stamp = datetime.strptime(f"{date} {time}", "%Y-%m-%d %H:%M:%S")
    except ValueError as exc:
        raise FormatError(line, f"invalid date/time {date} {time}: {exc} (§1.1)") from None
    if ms is not None:
        stamp = stamp.replace(microsecond=int(ms) * 1000)
    return stamp


# --------------------------------------------------------------------------------------------------
# Known messages: a trigger (how a message claiming to be this one starts) and its exact forms
# --------------------------------------------------------------------------------------------------


class Scope(enum.Enum):
    MAIN = "main"  # main process only: never a rank prefix (§1.3)
    RANK = "rank"  # every scheduler rank, once per rank (§1.3 plain logger.info)
    RANK0 = "rank0"  # rank0_log / log_info_on_rank0: only TP0 when tp>1 (§1.3)
    ANY = "any"


class Stage(enum.IntEnum):
    """Per-rank startup stages in order (§2.1, §2.2)."""

    DIST = 1
    LOAD_BEGIN = 2
    LOAD_END = 3
    POOL = 4
    ATTN = 5
    GRAPH = 6
    READY = 7
    SERVING = 8


@dataclass(frozen=True)
class Form:
    """One exact wording of a message, valid for an inclusive version range (None = open end)."""

    event: str  # name of the event; may use the regex's named groups: "{role}_{phase}_graph_begin"
    template: str  # FACTS' f-string, shown in errors
    regex: re.Pattern[str]
    first: Version | None = None
    last: Version | None = None
    scope: Scope = Scope.ANY
    stage: Stage | None = None
    max_per_rank: int = 1  # used by check_log for Scope.RANK events (a draft model doubles some)


@dataclass(frozen=True)
class Rule:
    name: str
    trigger: re.Pattern[str]  # matched at the start of the message (case-insensitive: catches drift)
    forms: tuple[Form, ...]
    source: str  # FACTS section


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.VERBOSE)


def _trigger(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Value fragments. `{:.2f}` is exactly two decimals; FACTS never shows a negative value but
# `mem usage` is a difference of two measurements, so a minus sign is allowed.
F2 = r"-?\d+\.\d{2}"
F3 = r"-?\d+\.\d{3}"
INT = r"\d+"
CLS = r"[A-Za-z_]\w*"
DTYPE = r"[\w.]+"  # torch.bfloat16, torch.float8_e4m3fn, fp8_e4m3
BOOL = r"(?:True|False)"
INT_LIST = r"\[\d+(?:,\ \d+)*\]"
GRAPH_LABEL = r"(?:cuda|cpu|npu|musa)\ graph"  # §2.4 `cuda graph:` label per device

V0_4_X: Version = (0, 4, 99)

RULES: list[Rule] = []


def rule(name: str, trigger: str, source: str, *forms: Form) -> None:
    RULES.append(Rule(name, _trigger(trigger), forms, source))


# ---- main process, §2.1 rows 0–2, §2.2 -------------------------------------------------------------

rule(
    "args_dump",
    r"server_args=",
    "§2.1 row 1, §2.2",
    Form(
        "args",
        "server_args=ServerArgs(model_path='…', …)",
        _rx(r"server_args=ServerArgs\(.*\)"),
        last=(0, 5, 22),
        scope=Scope.MAIN,
    ),
    Form(
        "args",
        "server_args={'model_path': '…', …}",
        _rx(r"server_args=\{.*\}"),
        first=(0, 5, 12),
        scope=Scope.MAIN,
    ),
)
rule(
    "cli_attention_backend",
    r"Attention backend not specified",
    "§2.1 row 0",
    Form(
        "cli_warning",
        "Attention backend not specified. Use {backend} backend by default.",
        _rx(r"Attention\ backend\ not\ specified\.\ Use\ \S+\ backend\ by\ default\."),
        scope=Scope.MAIN,
    ),
)
rule(
    "cli_max_running",
    r"Max running requests is reset",
    "§2.1 row 0, §4.1",
    Form(
        "cli_warning",
        "Max running requests is reset to 48 for speculative decoding. You can override this by "
        "explicitly setting --max-running-requests.",
        _rx(r"""Max\ running\ requests\ is\ reset\ to\ 48\ for\ speculative\ decoding\.
                 \ You\ can\ override\ this\ by\ explicitly\ setting\ --max-running-requests\."""),
        scope=Scope.MAIN,
    ),
)
rule(
    "cli_spec_v2",
    r"Spec v[12] is",
    "§2.1 row 0",
    Form(
        "cli_warning",
        "Spec v2 is enabled by default for eagle/eagle3/standalone speculative decoding.",
        _rx(r"Spec\ v2\ is\ enabled\ by\ default\ for\ eagle/eagle3/standalone\ speculative\ decoding\."),
        scope=Scope.MAIN,
    ),
    Form(
        "cli_warning",
        "Spec v1 is used for eagle/eagle3/standalone speculative decoding because {reason}.",
        _rx(r"Spec\ v1\ is\ used\ for\ eagle/eagle3/standalone\ speculative\ decoding\ because\ .+\."),
        scope=Scope.MAIN,
    ),
)
rule(
    "cli_draft_tokens_adjusted",
    r"speculative_num_draft_tokens is adjusted",
    "§2.1 row 0, §4.2 rule 2",
    Form(
        "cli_warning",
        "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1"
        " when speculative_eagle_topk == 1",
        _rx(r"""speculative_num_draft_tokens\ is\ adjusted\ to\ speculative_num_steps\ \+\ 1
                 \ when\ speculative_eagle_topk\ ==\ 1"""),
        scope=Scope.MAIN,
    ),
)
rule(
    "cli_mamba_overlap",
    r"Disabling overlap schedule since mamba",
    "§4.3",
    Form(
        "cli_warning",
        "Disabling overlap schedule since mamba no_buffer is not compatible with overlap schedule, …",
        _rx(
            r"Disabling\ overlap\ schedule\ since\ mamba\ no_buffer\ is\ not\ compatible\ with\ overlap"
            r"\ schedule,\ .+"
        ),
        scope=Scope.MAIN,
    ),
)
rule(
    "cli_radix_disabled",
    r"Disabling Radix Cache for",
    "§4.3",
    Form(
        "cli_warning",
        "Disabling Radix Cache for {arch} as it is not yet supported.",
        _rx(r"Disabling\ Radix\ Cache\ for\ \S+\ as\ it\ is\ not\ yet\ supported\."),
        scope=Scope.MAIN,
    ),
)
rule(
    "chat_sampling_params",
    r"Using default chat sampling params",
    "§2.1 row 9",
    Form(
        "sampling_params",
        "Using default chat sampling params from model generation config: {…}",
        _rx(r"Using\ default\ chat\ sampling\ params\ from\ model\ generation\ config:\ \{.*\}"),
        scope=Scope.MAIN,
    ),
)
rule(
    "deprecated_endpoint",
    r"Endpoint '",
    "§2.1 row 10, §6",
    Form(
        "deprecated_endpoint",
        "Endpoint '/get_model_info' is deprecated and will be removed in a future version. "
        "Please use '/model_info' instead.",
        _rx(r"""Endpoint\ '/get_(?P<name>\w+)'\ is\ deprecated\ and\ will\ be\ removed\ in\ a\ future
                 \ version\.\ Please\ use\ '/(?P=name)'\ instead\."""),
        scope=Scope.MAIN,
    ),
)
rule(
    "ready",
    r"The server is fired up",
    "§2.1 row 11",
    Form(
        "ready",
        "The server is fired up and ready to roll!",
        _rx(r"The\ server\ is\ fired\ up\ and\ ready\ to\ roll!"),
        scope=Scope.MAIN,
    ),
)
rule(
    "startup_timings",
    r"Engine startup timings",
    "§2.2",
    Form(
        "startup_timings",
        "Engine startup timings (s): load_weight={:.2f}, kv_cache_allocation={:.2f}, scheduler_e2e={:.2f}, "
        "cuda_graph={phase=…, …}, tokenizer_e2e={:.2f}",
        _rx(rf"""Engine\ startup\ timings\ \(s\):\ load_weight={F2},\ kv_cache_allocation={F2},
                  \ scheduler_e2e={F2},\ cuda_graph=\{{.*\}},\ tokenizer_e2e={F2}"""),
        first=(0, 5, 12),
        scope=Scope.MAIN,
    ),
)
rule(
    "launch_dp",
    r"Launch DP\d",
    "§7",
    Form(
        "launch_dp",
        "Launch DP{r} starting at GPU #{base}.",
        _rx(r"Launch\ DP\d+\ starting\ at\ GPU\ \#\d+\."),
        scope=Scope.MAIN,
    ),
)

# ---- failures, §3 (framed) ---------------------------------------------------------------------------

rule(
    "hit_exception",
    r"(Scheduler|DetokenizerManager|TokenizerManager|DataParallelController) hit an",
    "§3",
    Form(
        "scheduler_exception",
        "Scheduler hit an exception: {traceback}",
        _rx(r"Scheduler\ hit\ an\ exception:\ Traceback\ \(most\ recent\ call\ last\):"),
        scope=Scope.ANY,
    ),
    Form(
        "manager_exception",
        "{Manager} hit an exception: {traceback}",
        _rx(r"""(?:DetokenizerManager|TokenizerManager|DataParallelController)\ hit\ an\ exception:
                 \ Traceback\ \(most\ recent\ call\ last\):"""),
        scope=Scope.MAIN,
    ),
)
rule(
    "sigquit_launch",
    r"Received sigquit",
    "§3",
    Form(
        "sigquit",
        "Received sigquit from a child process. It usually means the child failed.",
        _rx(r"Received\ sigquit\ from\ a\ child\ process\.\ It\ usually\ means\ the\ child\ failed\."),
        scope=Scope.MAIN,
    ),
    Form(
        "sigquit",
        "Received sigquit from a child proces. It usually means the child failed. (early 2025)",
        _rx(r"Received\ sigquit\ from\ a\ child\ proces\.\ It\ usually\ means\ the\ child\ failed\."),
        last=V0_4_X,
        scope=Scope.MAIN,
    ),
)
rule(
    "sigquit_running",
    r"SIGQUIT received",
    "§3",
    Form(
        "sigquit",
        "SIGQUIT received. signum=None, frame=None. It usually means one child failed.",
        _rx(r"SIGQUIT\ received\.\ signum=None,\ frame=None\.\ It\ usually\ means\ one\ child\ failed\."),
        scope=Scope.MAIN,
    ),
)
rule(
    "init_failed",
    r"Initialization failed",
    "§2.1, §3",
    Form(
        "warmup_failed",
        "Initialization failed. warmup error: {traceback}",
        _rx(r"Initialization\ failed\.\ warmup\ error:\ .+"),
        scope=Scope.MAIN,
    ),
    Form(
        "init_failed",
        "Initialization failed. Please see the error messages above.",
        _rx(r"Initialization\ failed\.\ Please\ see\ the\ error\ messages\ above\."),
        first=(0, 5, 12),
        scope=Scope.MAIN,
    ),
)
rule(
    "subprocess_crashed",
    r"Subprocess \S+ \(pid=",
    "§3",
    Form(
        "subprocess_crashed",
        "Subprocess {scheduler_N/detokenizer} (pid={pid}) crashed with exit code {code}. "
        "Triggering SIGQUIT for cleanup...",
        _rx(r"""Subprocess\ \w+\ \(pid=\d+\)\ crashed\ with\ exit\ code\ -?\d+\.
                 \ Triggering\ SIGQUIT\ for\ cleanup\.\.\."""),
        scope=Scope.MAIN,
    ),
)
rule(
    "health_check_failed",
    r"Health check failed",
    "§3",
    Form(
        "health_check_failed",
        "Health check failed. Server couldn't get a response from detokenizer for last {20} seconds. "
        "tic start time: HH:MM:SS. last_heartbeat time: HH:MM:SS",
        _rx(r"""Health\ check\ failed\.\ Server\ couldn't\ get\ a\ response\ from\ detokenizer\ for\ last
                 \ \d+\ seconds\.\ tic\ start\ time:\ \d{2}:\d{2}:\d{2}\.
                 \ last_heartbeat\ time:\ \d{2}:\d{2}:\d{2}"""),
        scope=Scope.MAIN,
    ),
)
rule(
    "health_during_shutdown",
    r"Health check request received during shutdown",
    "§6",
    Form(
        "health_during_shutdown",
        "Health check request received during shutdown. Returning 503.",
        _rx(r"Health\ check\ request\ received\ during\ shutdown\.\ Returning\ 503\."),
        scope=Scope.MAIN,
    ),
)
rule(
    "sigterm",
    r"SIGTERM received",
    "§3, §7",
    Form(
        "sigterm",
        "SIGTERM received. signum=… frame=…. Draining requests and shutting down...",
        _rx(r"SIGTERM\ received\.\ signum=\S+\ frame=.+\.\ Draining\ requests\ and\ shutting\ down\.\.\."),
        scope=Scope.MAIN,
    ),
    Form(
        "sigterm_node",
        "SIGTERM received on node_rank {n}; waiting for the rank-0 ShutdownReq broadcast "
        "to stop the schedulers.",
        _rx(r"""SIGTERM\ received\ on\ node_rank\ \d+;\ waiting\ for\ the\ rank-0\ ShutdownReq\ broadcast
                 \ to\ stop\ the\ schedulers\."""),
        first=(0, 5, 12),
        scope=Scope.MAIN,
    ),
)
rule(
    "gracefully_exiting",
    r"Gracefully exiting",
    "§3",
    Form(
        "draining",
        "Gracefully exiting... Remaining number of requests {n}. Remaining requests remaining_rids=[…].",
        _rx(r"""Gracefully\ exiting\.\.\.\ Remaining\ number\ of\ requests\ \d+\.
                 \ Remaining\ requests\ remaining_rids=\[.*\]\."""),
        scope=Scope.MAIN,
    ),
)
rule(
    "kv_oom",
    r"(Prefill|Decode) out of memory",
    "§3",
    Form(
        "kv_oom",
        "{Prefill|Decode} out of memory. Try to lower your batch size.[ Try to allocate N tokens.]",
        _rx(r"""(?:Prefill|Decode)\ out\ of\ memory\.\ Try\ to\ lower\ your\ batch\ size\.
                 (?:\ Try\ to\ allocate\ \d+\ tokens\.)?"""),
        scope=Scope.ANY,
    ),
)
rule(
    "max_total_tokens_profiled",
    r"max_total_tokens=",
    "§3",
    Form(
        "profiled",
        "max_total_tokens=… is larger than the profiled value N. Use the profiled value instead.",
        _rx(r"""max_total_tokens=\d+\ is\ larger\ than\ the\ profiled\ value\ -?\d+\.
                 \ Use\ the\ profiled\ value\ instead\."""),
        scope=Scope.ANY,
    ),
)
rule(
    "watchdog",
    r"[\w ]+ watchdog timeout",
    "§3",
    Form(
        "watchdog",
        "{name} watchdog timeout (self.watchdog_timeout=…, self.soft=…)",
        _rx(r"[\w\ ]+\ watchdog\ timeout\ \(self\.watchdog_timeout=[^,]+,\ self\.soft=[^)]+\)"),
    ),
)
rule(
    "diffusion_scheduler_dead",
    r"Rank \d+ scheduler is dead",
    "§3 (diffusion runtime only)",
    # No form: this text is only printed by the diffusion runtime, never by the LLM server.
)
rule(
    "ignore_import_error",
    r"Ignore import error when loading",
    "§2.1 row 2, §3 torchcodec",
    Form(
        "ignore_import_error",
        "Ignore import error when loading {module}: {e}",
        _rx(r"Ignore\ import\ error\ when\ loading\ [\w.]+:\ .+"),
        scope=Scope.ANY,
    ),
)
rule(
    "torchcodec_unavailable",
    r"torchcodec is unavailable",
    "§3 torchcodec",
    Form(
        "torchcodec_unavailable",
        "torchcodec is unavailable; video audio-track detection and audio decoding via AudioDecoder are "
        "disabled: {e}",
        _rx(r"""torchcodec\ is\ unavailable;\ video\ audio-track\ detection\ and\ audio\ decoding\ via
                 \ AudioDecoder\ are\ disabled:\ .+"""),
        first=(0, 5, 12),
    ),
)
rule(
    "kill_process_tree",
    r"kill_process_tree called",
    "§7",
    Form(
        "kill_process_tree",
        "kill_process_tree called: parent_pid=…, include_parent=…, pid=…",
        _rx(rf"kill_process_tree\ called:\ parent_pid=\d+,\ include_parent={BOOL},\ pid=\d+"),
        first=(0, 5, 12),
    ),
)

# ---- scheduler ranks: dist init, §2.1 row 3, §2.2, §2.3 ---------------------------------------------

rule(
    "dist_init",
    r"Init (torch distributed|parallel)",
    "§2.1 row 3, §2.2, §2.3",
    Form(
        "dist_begin",
        "Init torch distributed begin.",
        _rx(r"Init\ torch\ distributed\ begin\."),
        last=(0, 5, 21),
        scope=Scope.RANK,
        stage=Stage.DIST,
    ),
    Form(
        "dist_end",
        "Init torch distributed ends. elapsed={:.2f} s, mem usage={:.2f} GB",
        _rx(rf"Init\ torch\ distributed\ ends\.\ elapsed={F2}\ s,\ mem\ usage={F2}\ GB"),
        last=(0, 5, 21),
        scope=Scope.RANK,
        stage=Stage.DIST,
    ),
    Form(
        "dist_end",
        "Init torch distributed ends. mem usage={:.2f} GB (older, unverified)",
        _rx(rf"Init\ torch\ distributed\ ends\.\ mem\ usage={F2}\ GB"),
        last=(0, 5, 10),
        scope=Scope.RANK,
        stage=Stage.DIST,
    ),
    Form(
        "dist_begin",
        "Init parallel begin.",
        _rx(r"Init\ parallel\ begin\."),
        first=(0, 5, 21),
        scope=Scope.RANK,
        stage=Stage.DIST,
    ),
    Form(
        "dist_end",
        "Init parallel ends. elapsed={:.2f} s",
        _rx(rf"Init\ parallel\ ends\.\ elapsed={F2}\ s"),
        first=(0, 5, 21),
        scope=Scope.RANK,
        stage=Stage.DIST,
    ),
)
rule(
    "memory_baseline",
    r"Memory baseline taken",
    "§2.2",
    Form(
        "memory_baseline",
        "Memory baseline taken. mem usage={:.2f} GB",
        _rx(rf"Memory\ baseline\ taken\.\ mem\ usage={F2}\ GB"),
        first=(0, 5, 21),
        scope=Scope.RANK,
        stage=Stage.DIST,
    ),
)
rule(
    "comm_warmup",
    r"(NCCL|RCCL|HCCL)\S* warmup completed",
    "§2.2",
    # FACTS writes `NCCL/RCCL/HCCL warmup completed in {:.3f}s …`: either the literal or one backend name.
    Form(
        "comm_warmup",
        "NCCL/RCCL/HCCL warmup completed in {:.3f}s (tp_size=…, pp_size=…, ep_size=…)",
        _rx(rf"""(?:NCCL/RCCL/HCCL|NCCL|RCCL|HCCL)\ warmup\ completed\ in\ {F3}s
                  \ \(tp_size=\d+,\ pp_size=\d+,\ ep_size=\d+\)"""),
        first=(0, 5, 21),
        scope=Scope.RANK,
        stage=Stage.DIST,
    ),
)
rule(
    "nccl_version",
    r"sglang is using nccl",
    "§2.1 row 3",
    Form(
        "nccl_version",
        "sglang is using nccl==2.x.y",
        _rx(r"sglang\ is\ using\ nccl==\d+\.\d+\.\d+"),
        scope=Scope.ANY,
        stage=Stage.DIST,
    ),
)

# ---- weights, §2.1 row 4, §2.3 -----------------------------------------------------------------------

QUANT = r"quant=[^,]+(?:,\ (?:bits|quant_algo|fmt)=[^,]+)*,\ "  # get_quantization_config_log_str()

rule(
    "load_weight",
    r"Load weights? (begin|end)",
    "§2.1 row 4, §2.3",
    Form(
        "load_begin",
        "Load weight begin. avail mem={:.2f} GB",
        _rx(rf"Load\ weight\ begin\.\ avail\ mem={F2}\ GB"),
        scope=Scope.RANK,
        stage=Stage.LOAD_BEGIN,
        max_per_rank=2,
    ),
    Form(
        "load_end",
        "Load weight end. type={Cls}, dtype={dtype}, avail mem={:.2f} GB, mem usage={:.2f} GB.",
        _rx(rf"""Load\ weight\ end\.\ type=(?P<cls>{CLS}),\ dtype={DTYPE},
                  \ avail\ mem={F2}\ GB,\ mem\ usage={F2}\ GB\."""),
        last=(0, 5, 10),
        scope=Scope.RANK,
        stage=Stage.LOAD_END,
        max_per_rank=2,
    ),
    Form(
        "load_end",
        "Load weight end. elapsed={:.2f} s, type={Cls}, dtype={dtype}, avail mem={:.2f} GB, "
        "mem usage={:.2f} GB. (0.5.9/0.5.10, unverified)",
        _rx(rf"""Load\ weight\ end\.\ elapsed={F2}\ s,\ type=(?P<cls>{CLS}),\ dtype={DTYPE},
                  \ avail\ mem={F2}\ GB,\ mem\ usage={F2}\ GB\."""),
        first=(0, 5, 9),
        last=(0, 5, 10),
        scope=Scope.RANK,
        stage=Stage.LOAD_END,
        max_per_rank=2,
    ),
    Form(
        "load_end",
        "Load weight end. elapsed={:.2f} s, type={Cls}, [quant=…, ]avail mem={:.2f} GB, mem usage={:.2f} GB.",
        _rx(rf"""Load\ weight\ end\.\ elapsed={F2}\ s,\ type=(?P<cls>{CLS}),\ (?:{QUANT})?
                  avail\ mem={F2}\ GB,\ mem\ usage={F2}\ GB\."""),
        first=(0, 5, 9),
        scope=Scope.RANK,
        stage=Stage.LOAD_END,
        max_per_rank=2,
    ),
)

# ---- pools, §2.1 row 5, §2.2, §2.3 -------------------------------------------------------------------

KV_SIZES = rf"(?:K\ size:\ {F2}\ GB,\ V\ size:\ {F2}\ GB|KV\ size:\ {F2}\ GB)"  # MHA | MLA

rule(
    "kv_dtype",
    r"Using KV cache dtype",
    "§2.1 row 5, §1.3",
    Form(
        "kv_dtype",
        "Using KV cache dtype: {dtype}",
        _rx(rf"Using\ KV\ cache\ dtype:\ {DTYPE}"),
        scope=Scope.RANK0,
        stage=Stage.POOL,
    ),
)
rule(
    "mamba_cache",
    r"Mamba Cache is allocated",
    "§2.1 row 5 (trailing space), §2.2",
    Form(
        "mamba_alloc",
        "Mamba Cache is allocated. max_mamba_cache_size: {n}, conv_state size: {:.2f}GB, "
        "ssm_state size: {:.2f}GB [intermediate_ssm_state_cache size: {:.2f}GB "
        "intermediate_conv_window_cache size: {:.2f}GB ]",
        _rx(rf"""Mamba\ Cache\ is\ allocated\.\ max_mamba_cache_size:\ \d+,
                  \ conv_state\ size:\ {F2}GB,\ ssm_state\ size:\ {F2}GB\            # trailing space
                  (?:intermediate_ssm_state_cache\ size:\ {F2}GB
                   \ intermediate_conv_window_cache\ size:\ {F2}GB\ )?              # with spec"""),
        scope=Scope.RANK,
        stage=Stage.POOL,
        max_per_rank=2,
    ),
)
rule(
    "replayssm",
    r"GDN ReplaySSM ring buffers allocated",
    "§2.2",
    Form(
        "replayssm",
        "GDN ReplaySSM ring buffers allocated (…)",
        _rx(r"GDN\ ReplaySSM\ ring\ buffers\ allocated\ \(.*\)"),
        first=(0, 5, 12),
        scope=Scope.RANK,
        stage=Stage.POOL,
        max_per_rank=2,
    ),
)
rule(
    "kv_cache",
    r"(\S+ )?KV Cache is allocated",
    "§2.1 row 5, §2.2, §2.3",
    Form(
        "kv_alloc",
        "KV Cache is allocated. #tokens: {n}, K size: {:.2f} GB, V size: {:.2f} GB",
        _rx(rf"KV\ Cache\ is\ allocated\.\ \#tokens:\ \d+,\ {KV_SIZES}"),
        last=(0, 5, 13),
        scope=Scope.RANK,
        stage=Stage.POOL,
        max_per_rank=2,
    ),
    Form(
        "kv_alloc",
        "[{label} ]KV Cache is allocated. dtype: {dtype}, #tokens: {n}, K size: {:.2f} GB, V size: {:.2f} GB",
        _rx(rf"(?:\S+\ )?KV\ Cache\ is\ allocated\.\ dtype:\ {DTYPE},\ \#tokens:\ \d+,\ {KV_SIZES}"),
        first=(0, 5, 13),
        scope=Scope.RANK,
        stage=Stage.POOL,
        max_per_rank=2,
    ),
    Form(
        "kv_alloc_va",
        "… VA upper bound. … (0.5.23 post-capture sizing; wording not in FACTS)",
        _rx(r".*KV\ Cache\ is\ allocated.*VA\ upper\ bound\..*"),
        first=(0, 5, 13),
        scope=Scope.RANK,
        stage=None,
        max_per_rank=2,
    ),
)
rule(
    "pool_end",
    r"Memory pool end",
    "§2.1 row 5, §2.2",
    Form(
        "pool_end",
        "Memory pool end. avail mem={:.2f} GB",
        _rx(rf"Memory\ pool\ end\.\ avail\ mem={F2}\ GB"),
        scope=Scope.RANK,
        stage=Stage.POOL,
        max_per_rank=2,
    ),
)

# ---- attention backends, §2.1 row 6, §2.2 -------------------------------------------------------------

rule(
    "linear_attn_backend",
    r"Linear attention kernel backend",
    "§2.1 row 6, §2.2, §1.3",
    Form(
        "linear_attn_backend",
        "Linear attention kernel backend: decode={x}, prefill={y}",
        _rx(r"Linear\ attention\ kernel\ backend:\ decode=\w+,\ prefill=\w+"),
        last=(0, 5, 22),
        scope=Scope.RANK0,
        stage=Stage.ATTN,
    ),
    Form(
        "linear_attn_backend",
        "Linear attention kernel backend: decode={x}, prefill={y}, verify={z}",
        _rx(r"Linear\ attention\ kernel\ backend:\ decode=\w+,\ prefill=\w+,\ verify=\w+"),
        first=(0, 5, 12),
        scope=Scope.RANK0,
        stage=Stage.ATTN,
    ),
)
rule(
    "hybrid_linear_backend",
    r"Using hybrid linear attention backend",
    "§2.1 row 6",
    Form(
        "hybrid_linear_backend",
        "Using hybrid linear attention backend for hybrid GDN models.",
        _rx(r"Using\ hybrid\ linear\ attention\ backend\ for\ hybrid\ GDN\ models\."),
        scope=Scope.RANK,
        stage=Stage.ATTN,
        max_per_rank=2,
    ),
)
rule(
    "gdn_dispatcher",
    r"GDN kernel dispatcher",
    "§2.1 row 6, §1.3",
    # Note: no comma before packed_decode (gdn_backend.py:119).
    Form(
        "gdn_dispatcher",
        "GDN kernel dispatcher: decode={Cls}, extend={Cls}, verify={Cls} packed_decode={bool}",
        _rx(rf"GDN\ kernel\ dispatcher:\ decode={CLS},\ extend={CLS},\ verify={CLS}\ packed_decode={BOOL}"),
        scope=Scope.RANK0,
        stage=Stage.ATTN,
    ),
)

# ---- CUDA graphs, §2.1 row 7, §2.2, §2.3 ---------------------------------------------------------------

GRAPH_523 = r"(?P<role>target|draft)\ (?P<phase>decode|verify|prefill|extend)\ CUDA\ graph"
KEYVALS = r"(?:\w+=(?:\[[^\]]*\]|\{[^}]*\}|[^,\s]+),\ )*"  # `backend=full, num_tokens_per_req=1, ` …

rule(
    "capture_graph",
    r"Capture\b.*\b(cuda|cpu|npu|musa) graph",
    "§2.1 row 7, §2.2, §2.3",
    # ≤0.5.12 wording (0.5.13 not checked: accepted in both dialects).
    Form(
        "{draft}graph_begin",
        "Capture [draft [extend] ]cuda graph begin. This can take up to several minutes. avail mem={:.2f} GB",
        _rx(rf"""Capture\ (?P<draft>(?:draft\ (?:extend\ )?)?){GRAPH_LABEL}\ begin\.
                  \ This\ can\ take\ up\ to\ several\ minutes\.\ avail\ mem={F2}\ GB"""),
        last=(0, 5, 13),
        scope=Scope.RANK,
        stage=Stage.GRAPH,
    ),
    Form(
        "graph_begin",
        "Capture cuda graph begin. This can take up to several minutes. (older, no avail mem)",
        _rx(rf"Capture\ {GRAPH_LABEL}\ begin\.\ This\ can\ take\ up\ to\ several\ minutes\."),
        last=(0, 5, 10),
        scope=Scope.RANK,
        stage=Stage.GRAPH,
    ),
    Form(
        "graph_bs",
        "Capture cuda graph bs [1, 2, 4, …]",
        _rx(rf"Capture\ cuda\ graph\ bs\ {INT_LIST}"),
        last=(0, 5, 13),
        scope=Scope.RANK0,
        stage=Stage.GRAPH,
    ),
    Form(
        "{draft}graph_end",
        "Capture [draft [extend] ]cuda graph end. Time elapsed: {:.2f} s. mem usage={:.2f} GB. "
        "avail mem={:.2f} GB.",
        _rx(rf"""Capture\ (?P<draft>(?:draft\ (?:extend\ )?)?){GRAPH_LABEL}\ end\.\ Time\ elapsed:\ {F2}\ s\.
                  \ mem\ usage={F2}\ GB\.\ avail\ mem={F2}\ GB\."""),
        last=(0, 5, 13),
        scope=Scope.RANK,
        stage=Stage.GRAPH,
    ),
    # Piecewise graphs (not in the §2.3 table: accepted in every version).
    Form(
        "piecewise_graph_begin",
        "Capture piecewise CUDA graph begin. avail mem={:.2f} GB",
        _rx(rf"Capture\ piecewise\ CUDA\ graph\ begin\.\ avail\ mem={F2}\ GB"),
        scope=Scope.RANK,
        stage=Stage.GRAPH,
    ),
    Form(
        "piecewise_graph_end",
        "Capture piecewise CUDA graph end. Time elapsed: {:.2f} s. …",
        _rx(rf"Capture\ piecewise\ CUDA\ graph\ end\.\ Time\ elapsed:\ {F2}\ s\..*"),
        scope=Scope.RANK,
        stage=Stage.GRAPH,
    ),
    # Piecewise batch sizes: seen only in real excerpt 04 (rank 0), not in FACTS.
    Form(
        "graph_num_tokens",
        "Capture cuda graph num tokens [4, 8, …]",
        _rx(rf"Capture\ cuda\ graph\ num\ tokens\ {INT_LIST}"),
        scope=Scope.ANY,
        stage=Stage.GRAPH,
    ),
    # 0.5.14+ wording. Target graphs are logged by every rank (cuda_graph_setup.py:684-696, 758, 787 in
    # 0.5.23); draft graphs only by rank 0 (eagle_worker_v2.py:513-654 use log_info_on_rank0).
    *(
        form
        for role, scope in (("target", Scope.RANK), ("draft", Scope.RANK0))
        for form in (
            Form(
                f"{role}_{{phase}}_graph_begin",
                f"Capture {role} {{decode/verify/prefill/extend}} CUDA graph begin. backend=…, …,"
                " avail mem={:.2f} GB",
                _rx(
                    rf"Capture\ {GRAPH_523.replace('target|draft', role)}\ begin\.\ backend=[^,\s]+,\ {KEYVALS}avail\ mem={F2}\ GB"
                ),
                first=(0, 5, 13),
                scope=scope,
                stage=Stage.GRAPH,
            ),
            Form(
                f"{role}_{{phase}}_graph_end",
                f"Capture {role} {{…}} CUDA graph end. [bs=[…], ]elapsed={{:.2f}} s, mem usage={{:.2f}} GB, "
                "avail mem={:.2f} GB.",
                _rx(
                    rf"""Capture\ {GRAPH_523.replace("target|draft", role)}\ end\.\ {KEYVALS}elapsed={F2}\ s,
                         \ mem\ usage={F2}\ GB,\ avail\ mem={F2}\ GB\."""
                ),
                first=(0, 5, 13),
                scope=scope,
                stage=Stage.GRAPH,
            ),
        )
    ),
)
# ---- scheduler ready, §2.1 row 8 ---------------------------------------------------------------------

SCHED_READY = rf"""max_total_num_tokens=\d+,\ chunked_prefill_size=-?\d+,\ max_prefill_tokens=\d+,
                   \ max_running_requests=\d+,\ context_len=\d+,\ available_(?:gpu|cpu)_mem={F2}\ GB"""
rule(
    "sched_ready",
    r"max_total_num_tokens=",
    "§2.1 row 8",
    # FACTS says "per rank", but it is printed under `if tp_rank == 0` (0.5.11 scheduler.py:762,
    # 0.5.23 scheduler.py:1267).
    Form(
        "sched_ready",
        "max_total_num_tokens={n}, chunked_prefill_size={n}, max_prefill_tokens={n}, "
        "max_running_requests={n}, context_len={n}, available_gpu_mem={:.2f} GB",
        _rx(SCHED_READY),
        scope=Scope.RANK0,
        stage=Stage.READY,
    ),
    Form(
        "sched_ready",
        "max_total_num_tokens={n}, …, context_len={n} (older, unverified)",
        _rx(r"""max_total_num_tokens=\d+,\ chunked_prefill_size=-?\d+,\ max_prefill_tokens=\d+,
                 \ max_running_requests=\d+,\ context_len=\d+"""),
        last=(0, 5, 10),
        scope=Scope.RANK0,
        stage=Stage.READY,
    ),
)

# ---- runtime batch lines, §2.4, §2.3 -----------------------------------------------------------------

DECODE_USAGE = rf"""(?:
      \#token:\ \d+,\ token\ usage:\ {F2}                                              # plain
    | \#full\ token:\ \d+,\ full\ token\ usage:\ {F2},\ mamba\ num:\ \d+,\ mamba\ usage:\ {F2}  # SSM
    | \#full\ token:\ \d+,\ full\ token\ usage:\ {F2},\ \#swa\ token:\ \d+,\ swa\ token\ usage:\ {F2}  # SWA
)"""
PREFILL_USAGE = rf"""(?:
      token\ usage:\ {F2}
    | full\ token\ usage:\ {F2},\ mamba\ usage:\ {F2}
    | full\ token\ usage:\ {F2},\ swa\ token\ usage:\ {F2}
)"""
# PD-disaggregation fields are not spelled out in FACTS: allow `key: value, ` pairs whose key is not a
# known field (so a known field out of place still fails).
KNOWN_KEYS = r"(?:\#running-req|\#queue-req|\#token|token\ usage|accept|cap\ len|block\ accept|cuda\ graph|gen\ throughput|input\ throughput|\#new|\#cached|\#pending|\#replay|\#full|full\ token|mamba|\#swa|swa)"
PD_FIELDS = rf"(?:(?!{KNOWN_KEYS})[^,:]+:\ [^,]+,\ )*"

DECODE_0511 = rf"""
    Decode\ batch(?:\ \[\d+\])?,\                   # [iter] only with SGLANG_LOG_FORWARD_ITERS
    \#running-req:\ \d+,[ ]
    {DECODE_USAGE},[ ]
    (?:accept\ len:\ {F2},\ accept\ rate:\ {F2},\    # speculative decoding only
       (?:cap\ len:\ [^,]+,\ )?(?:block\ accept\ len:\ [^,]+,\ )?)?
    {PD_FIELDS}
    {GRAPH_LABEL}:\ {BOOL},[ ]
    gen\ throughput\ \(token/s\):\ {F2},[ ]
    \#queue-req:\ \d+
    (?:,\ est\.\ decode\ TFLOPS/s.*)?
"""
PREFILL_0511 = rf"""
    Prefill\ batch(?:\ \[\d+\])?,[ ]
    \#new-seq:\ \d+,\ \#new-token:\ \d+,\ \#cached-token:\ \d+,[ ]
    {PREFILL_USAGE},[ ]
    \#running-req:\ \d+,\ \#queue-req:\ \d+,\ \#pending-token:\ \d+,[ ]
    (?:\#replay-token:\ \d+,\ )?
    {PD_FIELDS}
    {GRAPH_LABEL}:\ {BOOL},[ ]
    input\ throughput\ \(token/s\):\ {F2}
    (?:,\ est\.\ prefill\ TFLOPS/s\ \(per\ GPU\):\ .*)?
"""


OLD_PREFILL_FIELDS = [
    r"\#new-seq:\ \d+",
    r"\#new-token:\ \d+",
    r"\#cached-token:\ \d+",
    rf"cache\ hit\ rate:\ {F2}%",
    PREFILL_USAGE,
    r"\#running-req:\ \d+",
    r"\#queue-req:\ \d+",
    r"\#pending-token:\ \d+",
    rf"{GRAPH_LABEL}:\ {BOOL}",
    rf"input\ throughput\ \(token/s\):\ {F2}",
]
OLD_DECODE_FIELDS = [
    r"\#running-req:\ \d+",
    DECODE_USAGE,
    rf"accept\ len:\ {F2}",
    rf"accept\ rate:\ {F2}",
    rf"{GRAPH_LABEL}:\ {BOOL}",
    rf"gen\ throughput\ \(token/s\):\ {F2}",
    r"\#queue-req:\ \d+",
]


def _batch_forms(kind: str, strict: str, fields: list[str], stage_event: str) -> tuple[Form, ...]:
    """Period form ≤0.5.3, `[N],` form 0.5.4, comma 0.5.5+ (§2.3); exact 0.5.11+ fields (§2.4)."""
    # Scope ANY (not counted per rank): FACTS does not say which ranks print batch lines.
    common = functools.partial(Form, scope=Scope.ANY, stage=Stage.SERVING)
    return (
        common(
            stage_event,
            f"{kind} batch. #… (≤0.5.3, period)",
            _rx(rf"{kind}\ batch\.\ " + _opt_seq(fields)),
            last=(0, 5, 3),
        ),
        common(
            stage_event,
            f"{kind} batch [N], #… (0.5.4, counter always shown)",
            _rx(rf"{kind}\ batch\ \[\d+\],\ " + _opt_seq(fields)),
            first=(0, 5, 4),
            last=(0, 5, 4),
        ),
        common(
            stage_event,
            f"{kind} batch[ [N]], #… (0.5.5–0.5.10; fields not verified)",
            _rx(rf"{kind}\ batch(?:\ \[\d+\])?,\ " + _opt_seq(fields)),
            first=(0, 5, 5),
            last=(0, 5, 10),
        ),
        common(
            stage_event,
            f"{kind} batch[ [iter]], … (exact §2.4 field order)",
            _rx(strict),
            first=(0, 5, 11),
        ),
    )


def _opt_seq(fields: list[str]) -> str:
    """Ordered, each optional, separated by `, `, with an optional trailing `, ` (excerpt 12)."""
    alternatives = []
    for i, first in enumerate(fields):
        rest = "".join(f"(?:,\\ (?:{f}))?" for f in fields[i + 1 :])
        alternatives.append(f"(?:{first}){rest}")
    return "(?:" + "|".join(alternatives) + r")(?:,\ )?"


rule(
    "prefill_batch",
    r"Prefill batch\b",
    "§2.4, §2.3",
    *_batch_forms("Prefill", PREFILL_0511, OLD_PREFILL_FIELDS, "prefill_batch"),
)
rule(
    "decode_batch",
    r"Decode batch\b",
    "§2.4, §2.3",
    *_batch_forms("Decode", DECODE_0511, OLD_DECODE_FIELDS, "decode_batch"),
)


# ---- uvicorn, §1.1, §2.1 rows 9–10 -------------------------------------------------------------------

# levelprefix = "LEVEL:" padded to 9 characters, then the format's own space: message at column 10.
UVICORN_RE = re.compile(
    r"(?P<level>INFO|WARNING|ERROR|DEBUG|CRITICAL|TRACE):(?P<pad>\ +)(?P<rest>.*)", re.DOTALL
)
UVICORN_LOOKALIKE_RE = re.compile(r"(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b\s*[:\-|]?\s")
ACCESS_RE = re.compile(
    r"""
    (?P<client>\S+:\d+)\ -[ ]
    "(?P<method>[A-Z]+)\ (?P<path>\S+)\ HTTP/(?:1\.0|1\.1|2)"[ ]
    (?P<status>\d{3})\ (?P<phrase>[A-Za-z][\w\ '-]*)
    """,
    re.VERBOSE,
)
UVICORN_MESSAGES = {
    # trigger → exact form
    "Started server process": re.compile(r"Started server process \[\d+\]"),
    "Waiting for application startup": re.compile(r"Waiting for application startup\."),
    "Application startup complete": re.compile(r"Application startup complete\."),
    "Uvicorn running on": re.compile(r"Uvicorn running on https?://\S+:\d+ \(Press CTRL\+C to quit\)"),
    "Shutting down": re.compile(r"Shutting down"),
    "Waiting for application shutdown": re.compile(r"Waiting for application shutdown\."),
    "Application shutdown complete": re.compile(r"Application shutdown complete\."),
    "Finished server process": re.compile(r"Finished server process \[\d+\]"),
}
UVICORN_EVENTS = {
    "Started server process": "uvicorn_started",
    "Waiting for application startup": "uvicorn_waiting",
    "Application startup complete": "uvicorn_startup_complete",
    "Uvicorn running on": "uvicorn_running",
}


# --------------------------------------------------------------------------------------------------
# Unframed lines (§1.1 notes, §3)
# --------------------------------------------------------------------------------------------------

# tqdm: `{desc}: {pct:3.0f}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate}]` (weight_utils _BAR_FORMAT
# is `{l_bar}{bar}| …`, the same shape).
TQDM_RE = re.compile(
    r"""
    (?P<desc>Loading\ safetensors\ checkpoint\ shards|Multi-thread\ loading\ shards
       |Capturing\ batches\ \((?P<capture>[^)]*)\)):
    \ +(?P<pct>\d{1,3})%
    (?:\|(?P<bar>[^|]*)\|\ |\ Completed\ \|\ )   # l_bar/bar, or utils BAR_FORMAT `% Completed | `
    (?P<n>\d+)/(?P<total>\d+)
    \ \[(?P<elapsed>[\d:]+)<(?P<remaining>[\d:]+|\?),\ +(?P<rate>(?:[\d.]+|\?)(?:it/s|s/it))\]
    """,
    re.VERBOSE,
)
CAPTURE_DESC_RE = re.compile(rf"bs=\d+ avail_mem={F2} GB")  # f"Capturing batches ({bs=} {avail_mem=:.2f} GB)"

TRACEBACK_LINE_RES = [
    re.compile(r"Traceback \(most recent call last\):"),
    re.compile(r"The above exception was the direct cause of the following exception:"),
    re.compile(r"During handling of the above exception, another exception occurred:"),
    re.compile(r"\s+\S.*"),  # `  File "…", line N, in f`, code lines, `^^^^` markers, indented message lines
    # torch's CUDA error message continues on unindented lines (c10/cuda/CUDAException.cpp).
    re.compile(
        r"CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace"
        r" below might be incorrect\."
    ),
    re.compile(r"For debugging consider passing CUDA_LAUNCH_BLOCKING=1"),
    re.compile(r"Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions\."),
]
EXCEPTION_NAME = r"(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Warning|Interrupt|Exit)|Exception)"
EXCEPTION_RE = re.compile(rf"(?P<name>{EXCEPTION_NAME})(?::\ (?P<message>.*))?", re.VERBOSE)

# §3: exception lines whose text FACTS gives exactly.
EXCEPTION_RULES: list[Rule] = [
    Rule(
        "scheduler_died",
        _trigger(r"RuntimeError: Rank \d+ scheduler died"),
        (
            Form(
                "scheduler_died",
                "RuntimeError: Rank {i} scheduler died during initialization (exit code: {code}). …",
                _rx(r"""RuntimeError:\ Rank\ \d+\ scheduler\ died\ during\ initialization
                     \ \(exit\ code:\ -?\d+\)\.
                     \ If\ exit\ code\ is\ -9\ \(SIGKILL\),\ a\ common\ cause\ is\ the\ OS\ OOM\ killer\.
                     \ Run\ `dmesg\ -T\ \|\ grep\ -i\ oom`\ to\ check\."""),
                scope=Scope.MAIN,
            ),
        ),
        "§3",
    ),
    Rule(
        "not_enough_memory",
        _trigger(r"RuntimeError: Not enough memory"),
        (
            Form(
                "not_enough_memory",
                "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
                _rx(
                    r"""RuntimeError:\ Not\ enough\ memory\.
                        \ Please\ try\ to\ increase\ --mem-fraction-static\."""
                ),
                last=(0, 5, 22),
            ),
            Form(
                "not_enough_memory",
                "… --mem-fraction-static. Current value: mem_fraction_static={x}",
                _rx(r"""RuntimeError:\ Not\ enough\ memory\.
                     \ Please\ try\ to\ increase\ --mem-fraction-static\.
                     \ Current\ value:\ mem_fraction_static=[\d.]+"""),
                first=(0, 5, 12),
            ),
        ),
        "§3",
    ),
    Rule(
        "capture_failed",
        _trigger(r"Exception: Capture cuda graph failed"),
        (
            Form(
                "capture_failed",
                "Exception: Capture cuda graph failed: {e}",
                _rx(r"Exception:\ Capture\ cuda\ graph\ failed:\ .+"),
            ),
        ),
        "§3",
    ),
]
# The hint block printed after `Capture cuda graph failed` (§3), unindented message lines.
CAPTURE_HINTS_0511 = [
    "Possible solutions:",
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
    "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
    "3. disable torch compile by not using --enable-torch-compile",
    "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)",
    "Open an issue on GitHub ",
]
CAPTURE_HINTS_0523 = [
    "Possible solutions:",
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
    "2. set --cuda-graph-max-bs-decode ",
    "3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled.",
    "4. ",  # not given in FACTS
    "Open an issue on GitHub ",
]
HINT_TRIGGER_RE = re.compile(r"(?:Possible solutions:|[1-9]\. (?:set|disable)|Open an issue on GitHub)")

PY_WARNING_RE = re.compile(r"(?P<path>\S+\.py):(?P<lineno>\d+): (?P<category>\w*Warning): (?P<message>.*)")
NCCL_RE = re.compile(r"\S+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|ERROR|TRACE|version)\b.*")
FLASHINFER_RE = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2}) (?P<time>\d{2}:\d{2}:\d{2}),\d{3} - (?:DEBUG|INFO|WARNING|ERROR|CRITICAL)"
    r" - flashinfer(?:\.\w+)*: .*"
)
TRANSFORMERS_RE = re.compile(r"\[transformers\] .*")
TORCHCODEC_END = "[end of libtorchcodec loading traceback]."
# torchcodec's loader (torchcodec/_internally_replaced_utils.py:106-110 in 0.11.1) frames one traceback
# per FFmpeg version it tried between these markers.
TORCHCODEC_START = "[start of libtorchcodec loading traceback]"
TORCHCODEC_VERSION_RE = re.compile(r"FFmpeg version \d+:")
RAY_RE = re.compile(r"\((?P<actor>\w+) pid=\d+(?:, ip=[\d.]+)?\) (?P<rest>.*)", re.DOTALL)  # §1.2, unverified


# --------------------------------------------------------------------------------------------------
# Parsing one line
# --------------------------------------------------------------------------------------------------


@dataclass
class ParsedLine:
    kind: LineKind
    line: str
    timestamp: datetime | None = None
    prefix: str = ""  # "DP0 TP1" (the stream key)
    ranks: dict[str, int] = field(default_factory=dict)
    message: str = ""
    rule: str | None = None  # known message rule name
    event: str | None = None  # e.g. "load_end", "target_decode_graph_begin", "uvicorn_running"
    scope: Scope = Scope.ANY
    stage: Stage | None = None
    max_per_rank: int = 1
    glued: ParsedLine | None = None  # a log line glued after a tqdm bar


def check_line(line: str, version: str | None = "0.5.11") -> LineKind:
    """Classify one log line (without its newline) or raise :class:`FormatError`."""
    return parse_line(line, version).kind


def parse_line(line: str, version: str | None = "0.5.11") -> ParsedLine:
    """Like :func:`check_line`, with the details check_log needs."""
    return _parse(line, parse_version(version))


def _parse(line: str, version: Version | None) -> ParsedLine:
    if "\n" in line:
        raise FormatError(line, "check_line takes one line (no newline)")
    if line.strip() == "":
        return ParsedLine(LineKind.BLANK, line)
    if "\r" in line or TQDM_RE.match(line):
        return _parse_tqdm(line, version)
    if FRAME_START_RE.match(line):
        return _parse_framed(line, version)
    if ray := RAY_RE.fullmatch(line):
        inner = _parse(ray["rest"], version)
        inner.line = line
        return inner
    return _parse_unframed(line, version)


def _parse_framed(line: str, version: Version | None) -> ParsedLine:
    frame = FRAME_RE.fullmatch(line)
    if frame is None:
        raise FormatError(line, "not `[%Y-%m-%d %H:%M:%S(.mmm)?( PREFIX)?] message` (§1.1)")
    stamp = _parse_timestamp(frame["date"], frame["time"], frame["ms"], line)
    ranks = _parse_prefix(frame["prefix"], version, line)
    message = frame["message"]
    parsed = ParsedLine(
        LineKind.RANKED if ranks else LineKind.MAIN, line, stamp, frame["prefix"].strip(), ranks, message
    )
    if UVICORN_RE.match(message) or UVICORN_LOOKALIKE_RE.match(message):
        return _parse_uvicorn(parsed, has_ms=frame["ms"] is not None)
    _check_message(parsed, version)
    if parsed.event == "cli_warning" and frame["ms"] is None and not ranks:
        parsed.kind = LineKind.PRE_LOGGER
    return parsed


def _parse_uvicorn(parsed: ParsedLine, has_ms: bool) -> ParsedLine:
    """§1.1: `[%(asctime)s] %(levelprefix)s %(message)s` and the access format; main process only."""
    line, message = parsed.line, parsed.message
    match = UVICORN_RE.match(message)
    if match is None:
        raise FormatError(
            line, "uvicorn level prefix must be `INFO:     ` / `WARNING:  ` / `ERROR:    ` (§1.1)"
        )
    width = len(match["level"]) + 1 + len(match["pad"])
    if width != 10:
        expected = match["level"] + ":" + " " * (9 - len(match["level"]))
        raise FormatError(
            line,
            f"uvicorn levelprefix padding: expected {expected!r} (padded to 9 + one space), "
            f"got {message[:width]!r} (§1.1)",
        )
    if parsed.ranks:
        raise FormatError(line, "uvicorn lines come from the main process and carry no rank prefix (§1.1)")
    if has_ms:
        raise FormatError(line, "uvicorn's formatter has no milliseconds: `[%Y-%m-%d %H:%M:%S]` (§1.1)")
    rest = match["rest"]
    if access := ACCESS_RE.fullmatch(rest):
        parsed.kind = LineKind.UVICORN_ACCESS
        parsed.event = f"access {access['method']} {access['path']}"
        return parsed
    if rest.startswith('"') or re.match(r"\S+:\d+ - ", rest):
        raise FormatError(
            line, 'uvicorn access line must be `client:port - "METHOD /path HTTP/1.1" 200 OK` (§1.1)'
        )
    for trigger, exact in UVICORN_MESSAGES.items():
        if rest.lower().startswith(trigger.lower()):
            if not exact.fullmatch(rest):
                raise FormatError(line, f"uvicorn message does not match {exact.pattern!r} (§2.1 row 9)")
            parsed.event = UVICORN_EVENTS.get(trigger)
    parsed.kind = LineKind.UVICORN
    parsed.scope = Scope.MAIN
    return parsed


def _check_message(parsed: ParsedLine, version: Version | None) -> None:
    """If the message starts like a known one, it must be exactly one of its forms for the version."""
    for known in RULES:
        if known.trigger.match(parsed.message):
            form, match = _match_rule(known, parsed.message, parsed.line, version)
            _apply_form(parsed, known, form, match)
            return


def _match_rule(known: Rule, text: str, line: str, version: Version | None) -> tuple[Form, re.Match[str]]:
    elsewhere: list[Form] = []
    for form in known.forms:
        match = form.regex.fullmatch(text)
        if match is None:
            continue
        if _in_range(version, form.first, form.last):
            return form, match
        elsewhere.append(form)
    vname = "any version" if version is None else ".".join(map(str, version))
    if not known.forms:
        raise FormatError(
            line, f"{known.name}: this text is never printed by the SGLang LLM server ({known.source})"
        )
    if elsewhere:
        other = elsewhere[0]
        raise FormatError(
            line,
            f"{known.name}: this is the {_vtext(other.first, other.last)} wording, not {vname}'s "
            f"({known.source})",
        )
    expected = [f.template for f in known.forms if _in_range(version, f.first, f.last)]
    if not expected:
        raise FormatError(line, f"{known.name}: no such message in version {vname} ({known.source})")
    raise FormatError(
        line,
        f"{known.name}: does not match the {vname} format ({known.source}); expected one of:\n      "
        + "\n      ".join(expected),
    )


def _apply_form(parsed: ParsedLine, known: Rule, form: Form, match: re.Match[str]) -> None:
    parsed.rule = known.name
    parsed.event = form.event.format(**{k: (v or "").replace(" ", "_") for k, v in match.groupdict().items()})
    parsed.scope, parsed.stage, parsed.max_per_rank = form.scope, form.stage, form.max_per_rank
    if form.scope is Scope.MAIN and parsed.ranks:
        raise FormatError(parsed.line, f"{known.name}: a main-process message never has a rank prefix (§1.3)")
    if form.scope is Scope.RANK0 and parsed.ranks.get("TP", 0) != 0:
        raise FormatError(
            parsed.line,
            f"{known.name}: printed by TP rank 0 only, cannot carry TP{parsed.ranks['TP']} (§1.3)",
        )


def _parse_tqdm(line: str, version: Version | None) -> ParsedLine:
    """One or more `\\r`-separated bar states; the last may have a log line glued after its `]` (§1.1)."""
    segments = line.split("\r")
    parsed = ParsedLine(LineKind.TQDM, line)
    for i, segment in enumerate(segments):
        if segment == "":
            continue
        bar = TQDM_RE.match(segment)
        if bar is None:
            raise FormatError(line, f"segment {i} is not a tqdm bar: {segment[:80]!r} (§1.1)")
        if bar["capture"] is not None and not CAPTURE_DESC_RE.fullmatch(bar["capture"]):
            raise FormatError(
                line, f"`Capturing batches ({bar['capture']})`: expected `bs=N avail_mem=X.XX GB`"
            )
        rest = segment[bar.end() :]
        if rest and i == len(segments) - 1:
            if not FRAME_START_RE.match(rest):
                raise FormatError(line, f"text after the last tqdm bar is not a log line: {rest[:80]!r}")
            parsed.glued = _parse_framed(rest, version)
        elif rest:
            raise FormatError(line, f"text after tqdm bar {i}: {rest[:80]!r}")
    return parsed


def _parse_unframed(line: str, version: Version | None) -> ParsedLine:
    for kind, regex in (
        (LineKind.PYTHON_WARNING, PY_WARNING_RE),
        (LineKind.NCCL, NCCL_RE),
        (LineKind.TRANSFORMERS, TRANSFORMERS_RE),
    ):
        if regex.fullmatch(line):
            return ParsedLine(kind, line)
    if flashinfer := FLASHINFER_RE.fullmatch(line):
        _parse_timestamp(flashinfer["date"], flashinfer["time"], None, line)
        return ParsedLine(LineKind.FLASHINFER, line)
    if line in (TORCHCODEC_START, TORCHCODEC_END) or TORCHCODEC_VERSION_RE.fullmatch(line):
        return ParsedLine(LineKind.TORCHCODEC, line)
    if any(regex.fullmatch(line) for regex in TRACEBACK_LINE_RES):
        return ParsedLine(LineKind.TRACEBACK, line)
    if HINT_TRIGGER_RE.match(line):
        return _parse_capture_hint(line, version)
    if EXCEPTION_RE.fullmatch(line):
        parsed = ParsedLine(LineKind.TRACEBACK, line, message=line)
        for known in EXCEPTION_RULES:
            if known.trigger.match(line):
                form, _ = _match_rule(known, line, line, version)
                parsed.rule, parsed.event = known.name, form.event
        return parsed
    raise FormatError(
        line,
        "unframed line that is no tqdm bar, traceback, Python warning, NCCL/flashinfer/transformers line",
    )


def _parse_capture_hint(line: str, version: Version | None) -> ParsedLine:
    """§3: the `Capture cuda graph failed` hint block differs between 0.5.11 and 0.5.23."""
    dialects = []
    if _in_range(version, None, (0, 5, 22)):
        dialects.append(CAPTURE_HINTS_0511)
    if _in_range(version, (0, 5, 12), None):
        dialects.append(CAPTURE_HINTS_0523)
    for hints in dialects:
        for hint in hints:
            if line == hint or (hint.endswith(" ") and line.startswith(hint)):
                return ParsedLine(LineKind.TRACEBACK, line)
    raise FormatError(line, "not a line of the `Capture cuda graph failed` hint block of this version (§3)")


# --------------------------------------------------------------------------------------------------
# Whole logs
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    lineno: int  # 1-based
    rule: str  # "format", "time_backwards", "per_rank_count", "stage_order", "main_order"
    message: str
    line: str = ""

    def __str__(self) -> str:
        shown = self.line if len(self.line) <= 200 else self.line[:200] + "…"
        return f"line {self.lineno} [{self.rule}] {self.message}" + (f"\n    {shown!r}" if shown else "")


def format_findings(findings: Iterable[Finding]) -> str:
    return "\n".join(str(f) for f in findings)


def split_lines(text: str) -> list[str]:
    """Split on `\\n` only: `\\r` belongs to tqdm bars (str.splitlines would cut them)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


# Main-process order (§2.1 rows 9–11): uvicorn lifespan, then warmup, then the ready line.
MAIN_ORDER = ["uvicorn_started", "uvicorn_waiting", "uvicorn_startup_complete", "uvicorn_running", "ready"]
WARMUP_PATHS = ("/model_info", "/get_model_info")


def check_log(text: str, version: str | None = "0.5.11", *, complete: bool = True) -> list[Finding]:
    """Check every line and the cross-line facts; ``complete=False`` for excerpts (partial logs).

    With ``complete=True`` the log is taken to be a whole run: once-per-rank messages must then appear
    the same number of times on every rank.
    """
    parsed_version = parse_version(version)
    findings: list[Finding] = []
    entries: list[tuple[int, ParsedLine]] = []
    for lineno, line in enumerate(split_lines(text), start=1):
        try:
            parsed = _parse(line, parsed_version)
        except FormatError as exc:
            findings.append(Finding(lineno, "format", exc.why, line))
            continue
        entries.append((lineno, parsed))
        if parsed.glued is not None:
            entries.append((lineno, parsed.glued))
    framed = [(n, p) for n, p in entries if p.timestamp is not None]
    findings += _check_time(framed)
    findings += _check_rank_stages(framed)
    findings += _check_main_order(framed)
    if complete:
        findings += _check_per_rank_counts(framed)
    else:
        findings += _check_per_rank_counts(framed, equal=False)
    return sorted(findings, key=lambda f: f.lineno)


def _check_time(framed: list[tuple[int, ParsedLine]]) -> list[Finding]:
    """Within one process stream (rank prefix), time never goes back by more than a second."""
    findings = []
    latest: dict[str, datetime] = {}
    for lineno, p in framed:
        assert p.timestamp is not None
        stream = p.prefix
        if stream in latest and (latest[stream] - p.timestamp).total_seconds() > 1.0:
            findings.append(
                Finding(
                    lineno,
                    "time_backwards",
                    f"stream {stream or '(no prefix)'!r} goes back from {latest[stream]}",
                    p.line,
                )
            )
        latest[stream] = max(latest.get(stream, p.timestamp), p.timestamp)
    return findings


def _check_rank_stages(framed: list[tuple[int, ParsedLine]]) -> list[Finding]:
    """Per rank: dist → load begin → load end → [draft load] → pools → attention → graphs → ready
    (§2.1, §2.2). The draft model's load may also start once after the target's pools/graphs: 0.5.11
    builds the draft ModelRunner after the target's has finished (see the report on FACTS §2.1)."""
    findings = []
    stage: dict[str, Stage] = {}
    loads: Counter[str] = Counter()
    for lineno, p in framed:
        if p.stage is None or p.scope is Scope.MAIN:
            continue
        stream, current = p.prefix, stage.get(p.prefix)
        where = stream or "the unprefixed scheduler"
        problem = None
        if p.stage is Stage.LOAD_BEGIN:
            loads[stream] += 1
            draft_restart = loads[stream] == 2 and current is not None and Stage.POOL <= current < Stage.READY
            if current not in (None, Stage.DIST, Stage.LOAD_END) and not draft_restart:
                problem = f"Load weight begin after {current.name if current else '?'}"
        elif p.stage is Stage.LOAD_END:
            if current not in (None, Stage.LOAD_BEGIN):
                problem = (
                    f"Load weight end without a Load weight begin (after {current.name if current else '?'})"
                )
        elif current is Stage.LOAD_BEGIN:
            problem = f"{p.event} between Load weight begin and end"
        elif current is not None and p.stage < current:
            problem = f"{p.event} ({p.stage.name}) after {current.name}"
        if problem:
            findings.append(Finding(lineno, "stage_order", f"{problem} on {where}", p.line))
        elif p.stage in (Stage.LOAD_BEGIN, Stage.LOAD_END) or current is None or p.stage > current:
            stage[stream] = p.stage
    return findings


def _check_main_order(framed: list[tuple[int, ParsedLine]]) -> list[Finding]:
    """Main process: schedulers ready → uvicorn lifespan → warmup access lines → ready (§2.1 rows 8–11)."""
    findings = []
    seen: dict[str, int] = {}
    ready_seen = False
    first_access: str | None = None
    for lineno, p in framed:
        event = p.event
        if event is None:
            continue
        if event in MAIN_ORDER:
            later = [e for e in MAIN_ORDER[MAIN_ORDER.index(event) + 1 :] if e in seen]
            if later:
                findings.append(Finding(lineno, "main_order", f"{event} after {later[0]}", p.line))
            if event in seen and event in ("ready", "uvicorn_running", "uvicorn_started"):
                findings.append(Finding(lineno, "main_order", f"{event} twice", p.line))
            seen.setdefault(event, lineno)
            ready_seen = ready_seen or event == "ready"
        elif event == "sched_ready" and "uvicorn_started" in seen:
            findings.append(Finding(lineno, "main_order", "scheduler ready after uvicorn started", p.line))
        elif p.kind is LineKind.UVICORN_ACCESS and not ready_seen:
            if "uvicorn_startup_complete" not in seen and seen:
                findings.append(
                    Finding(lineno, "main_order", "access line before application startup", p.line)
                )
            if first_access is None:
                first_access = event
                if not event.endswith(WARMUP_PATHS) and "POST /freeze_gc" not in event:
                    findings.append(
                        Finding(
                            lineno,
                            "main_order",
                            "the first warmup request is GET /model_info (§2.1 row 10)",
                            p.line,
                        )
                    )
    return findings


def _check_per_rank_counts(framed: list[tuple[int, ParsedLine]], *, equal: bool = True) -> list[Finding]:
    """Plain logger.info messages are printed once per rank (§1.3); a draft model doubles some."""
    findings = []
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    last_line: dict[tuple[str, str], tuple[int, str]] = {}
    streams: set[str] = set()
    for lineno, p in framed:
        if p.ranks:
            streams.add(p.prefix)
        if p.scope is not Scope.RANK or p.event is None:
            continue
        counts[p.event][p.prefix] += 1
        last_line[(p.event, p.prefix)] = (lineno, p.line)
        if counts[p.event][p.prefix] == p.max_per_rank + 1:
            findings.append(
                Finding(
                    lineno,
                    "per_rank_count",
                    f"{p.event} more than {p.max_per_rank}× on {p.prefix or 'one rank'}",
                    p.line,
                )
            )
    if not equal or len(streams) < 2:
        return findings
    for event, per_stream in counts.items():
        if not per_stream.keys() <= streams or all(per_stream.get(s, 0) == 0 for s in streams):
            continue
        values = {s: per_stream.get(s, 0) for s in sorted(streams)}
        if len(set(values.values())) > 1:
            lineno, line = max(last_line[(event, s)] for s in per_stream)
            findings.append(
                Finding(lineno, "per_rank_count", f"{event} is printed per rank, counts {values}", line)
            )
    return findings
