"""One physical line of an SGLang log, taken apart: wrappers, timestamp, rank prefix, message (FACTS §1).

SGLang writes ``[%Y-%m-%d %H:%M:%S{.ms}{ prefix}] message`` from every process after its logger is set
up; the prefix names the rank (`` TP0``, `` DP1 TP1``, `` PP1 TP0``, `` TP3 EP3``…) and is absent on the
main process and when tp = 1. Around those lines sit others that bypass logging: uvicorn's (with a level
prefix), tqdm bars, Python warnings, traceback continuations, NCCL / flashinfer / transformers lines.
Logs pasted from elsewhere may be wrapped by docker compose (``name  | …``), by an outer timestamp
(``[2025-…Z] […] …``), by Ray (``(SchedulerActor pid=…) …``) or by torch's ``[rank0]:``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from functools import lru_cache


class Kind(Enum):
    FRAMED = "framed"  # [ts( rank)] message — SGLang's own logger (also pre-logger `[ts] msg` lines)
    UVICORN = "uvicorn"  # [ts] INFO:     message
    ACCESS = "access"  # [ts] INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK
    TQDM = "tqdm"  # a progress bar (possibly several \r-separated states)
    TRACEBACK = "traceback"  # Traceback (most recent call last):
    EXCEPTION = "exception"  # ValueError: …  (the line that names the error)
    PY_WARNING = "py_warning"  # /path/x.py:12: UserWarning: …
    LIBRARY = "library"  # NCCL, flashinfer, [transformers] … lines with their own format
    BLANK = "blank"
    OTHER = "other"  # unframed text: traceback frames, continuation of a multi-line message


@dataclass(frozen=True, slots=True)
class LogLine:
    text: str  # the line without wrappers (what SGLang itself wrote)
    kind: Kind
    message: str  # after the frame; for unframed lines, the text
    stamp: str | None = None  # "2025-11-30 11:18:01" as printed (ms not included)
    ms: int | None = None
    rank: str | None = None  # the prefix as printed: "TP0", "DP1 TP1", "gpu_id=0"; None on main
    level: str | None = None  # uvicorn / flashinfer level: INFO, WARNING, ERROR
    source: str | None = None  # docker compose service or Ray actor that wrapped the line

    @property
    def framed(self) -> bool:
        return self.stamp is not None

    @property
    def time(self) -> float | None:
        """Seconds since the epoch (the log's local time read as UTC: only differences matter)."""
        if self.stamp is None:
            return None
        return _epoch(self.stamp) + (self.ms or 0) / 1000.0


def tp_index(rank: str) -> int | None:
    """The tensor-parallel index a rank prefix names: "DP1 TP0" → 0, "TP3 EP3" → 3; None without one."""
    for token in rank.split():
        if token.startswith("TP") and token[2:].isdigit():
            return int(token[2:])
    return None


_RANK_TOKENS = r"(?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d+"
# The stamp: full (FACTS §1.1), the diffusion runtime's "MM-DD HH:MM:SS", or the time alone (2024 builds:
# "[16:43:29 TP0]"). A paste can lose the opening bracket of a full stamp ("2025-08-15 14:25:48] …").
_STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|\d\d-\d\d \d\d:\d\d:\d\d|\d\d:\d\d:\d\d"
_FRAME = re.compile(rf"\[(?P<stamp>{_STAMP})(?:\.(?P<ms>\d{{3}}))?(?P<rank>(?: {_RANK_TOKENS})*)\] ?")
_FRAME_NO_BRACKET = re.compile(
    rf"(?P<stamp>\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(?P<ms>\d{{3}}))?(?P<rank>(?: {_RANK_TOKENS})*)\] "
)
_GPU_ID = re.compile(r"\[gpu_id=(?P<gpu>\d+)\] ?")
_UVICORN = re.compile(r"(?P<level>INFO|WARNING|ERROR|CRITICAL|DEBUG|TRACE):(?P<pad> +)")
_ACCESS = re.compile(r'\S+:\d+ - "[A-Z]+ \S* HTTP/[\d.]+" \d{3}')

_COMPOSE = re.compile(r"(?P<svc>[A-Za-z0-9][\w.-]*)\s+\| ?")
# Kubernetes / docker --timestamps put an RFC 3339 stamp in front; containerd's CRI format adds the stream
# and a full/partial flag ("2025-07-25T07:53:08.217487+08:00 stdout F ").
_OUTER_TS = re.compile(
    r"\[?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)\]? (?:std(?:out|err) [FP] )?"
)
_INDENTED_FRAME = re.compile(r"\s+(?=\[\d)")  # a pasted log indented as a whole: "  [2025-09-04 …] …"
_RAY = re.compile(r"\((?:(?P<actor>\w+) )?pid=\d+(?:, ip=[\d.:a-fA-F]+)?\) ")
# `kubectl logs --prefix`: "[pod/NAME/CONTAINER] "; journald (SGLang as a systemd unit):
# "Dec 01 10:00:00 HOST UNIT[PID]: "
_KUBECTL = re.compile(r"\[pod/[^/\]\s]+/(?P<container>[^\]\s]+)\] ")
_JOURNAL = re.compile(r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ (?P<unit>[^\s:\[]+)(?:\[\d+\])?: ")
_TORCH_RANK = re.compile(r"\[rank(?P<rank>\d+)\]: ?")

_TQDM = re.compile(r"\d+%\||\d+/\d+ \[\d|it/s\]|s/it\]|% Completed \|")
_GLUED = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
_EXCEPTION = re.compile(
    r"(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Exit|Interrupt|Failure|Warning|Fault)(?::|$)"
)
PY_WARNING_RE = re.compile(r"\S+\.py:\d+: \w*Warning: ")
_FLASHINFER = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - (?P<level>[A-Z]+) - ")
_LIBRARY_PREFIXES = ("[transformers]", "[Gloo]", "[W ", "[E ", "[I ")


@lru_cache(maxsize=4096)
def _epoch(stamp: str) -> float:
    if len(stamp) == 14:  # "12-16 14:27:08": the diffusion runtime's format has no year
        stamp = "2000-" + stamp
    elif len(stamp) == 8:  # "16:43:29": 2024 builds printed the time alone
        stamp = "2000-01-01 " + stamp
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()


def split_glued(line: str) -> list[str]:
    """A tqdm bar written with ``\\r`` may have log lines glued to its states (a line written while the bar
    was drawn): return the bar, then each glued line, apart."""
    if "[" not in line or not _TQDM.search(line):
        return [line]
    m = _GLUED.search(line, 1)
    if m is None:
        return [line]
    if "\r" not in line[m.start() :]:
        return [line[: m.start()], line[m.start() :]]
    out = [line[: m.start()]]
    for state in line[m.start() :].split("\r"):
        g = _GLUED.search(state)
        if g is not None:
            out.append(state[g.start() :])
    return out


def parse(line: str) -> LogLine:
    """Take one physical line apart (no trailing newline expected)."""
    text, source, torch_rank = _unwrap(line.rstrip("\r\n"))
    if not text.strip():
        return LogLine(text=text, kind=Kind.BLANK, message=text, source=source)
    if text[0] == "[":
        framed = _parse_framed(text, source)
        if framed is not None:
            return framed
    elif text[0].isdigit() and (m := _FRAME_NO_BRACKET.match(text)) is not None:
        return _framed(text, m, source)
    return _parse_unframed(text, source, torch_rank)


def _unwrap(text: str) -> tuple[str, str | None, str | None]:
    """Strip the wrappers other tools put around SGLang's lines."""
    source: str | None = None
    torch_rank: str | None = None
    m = _OUTER_TS.match(text)
    if m:
        text = text[m.end() :]
    if text[:5] == "[pod/" and (m := _KUBECTL.match(text)) is not None:
        source = m["container"]
        text = text[m.end() :]
    elif text[:1].isupper() and (m := _JOURNAL.match(text)) is not None:
        source = m["unit"]
        text = text[m.end() :]
    m = _COMPOSE.match(text)
    if m and (
        m["svc"][-1].isdigit()
        or text[m.end() : m.end() + 1] in ("[", " ", "T")
        or _EXCEPTION.match(text, m.end())  # a traceback's last line: "sglang  | RuntimeError: …"
    ):
        source = m["svc"]
        text = text[m.end() :]
    m = _RAY.match(text)
    if m:
        source = m["actor"] or "ray"
        text = text[m.end() :]
    m = _TORCH_RANK.match(text)
    if m:
        torch_rank = f"TP{m['rank']}"
        text = text[m.end() :]
    if text[:1].isspace() and (m := _INDENTED_FRAME.match(text)) is not None and _FRAME.match(text, m.end()):
        text = text[m.end() :]
    return text, source, torch_rank


def _parse_framed(text: str, source: str | None) -> LogLine | None:
    m = _FRAME.match(text)
    if m is None:
        g = _GPU_ID.match(text)
        if g is None:
            return None
        return LogLine(
            text=text, kind=Kind.FRAMED, message=text[g.end() :], rank=f"gpu_id={g['gpu']}", source=source
        )
    return _framed(text, m, source)


def _framed(text: str, m: re.Match[str], source: str | None) -> LogLine:
    message = text[m.end() :]
    rank = m["rank"].strip() or None
    ms = int(m["ms"]) if m["ms"] else None
    u = _UVICORN.match(message)
    if u is not None and rank is None:
        body = message[u.end() :]
        kind = Kind.ACCESS if _ACCESS.match(body) else Kind.UVICORN
        return LogLine(
            text=text, kind=kind, message=body, stamp=m["stamp"], ms=ms, level=u["level"], source=source
        )
    return LogLine(
        text=text, kind=Kind.FRAMED, message=message, stamp=m["stamp"], ms=ms, rank=rank, source=source
    )


def _parse_unframed(text: str, source: str | None, rank: str | None) -> LogLine:
    u = _UVICORN.match(text)
    if u is not None and u.end() == 10:
        # uvicorn's own format, without SGLang's log config (2024 builds): the level padded to 10 columns
        body = text[u.end() :]
        kind = Kind.ACCESS if _ACCESS.match(body) else Kind.UVICORN
        return LogLine(text=text, kind=kind, message=body, level=u["level"], source=source)
    stripped = text.lstrip()
    indented = stripped is not text and len(stripped) != len(text)
    kind = Kind.OTHER
    level: str | None = None
    if stripped.startswith("Traceback (most recent call last)"):
        kind = Kind.TRACEBACK
    elif (not indented or len(text) - len(stripped) <= 2) and _EXCEPTION.match(stripped):
        # (a code line of a traceback is indented by four; a paste indented as a whole, by one or two)
        kind = Kind.EXCEPTION
    elif _TQDM.search(text):
        kind = Kind.TQDM
    elif PY_WARNING_RE.match(text):
        kind = Kind.PY_WARNING
    elif (f := _FLASHINFER.match(text)) is not None:
        kind, level = Kind.LIBRARY, f["level"]
    elif " NCCL " in text or text.startswith(_LIBRARY_PREFIXES):
        kind = Kind.LIBRARY
    return LogLine(text=text, kind=kind, message=text, rank=rank, level=level, source=source)
