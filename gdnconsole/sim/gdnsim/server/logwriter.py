"""SGLang's log line format (FACTS §1), written as whole lines with one ``os.write`` each.

Several processes share the operator's log file (``> log 2>&1``); one ``write`` per line (or per
multi-line message) keeps them from interleaving mid-line, as Python's logging does in SGLang.
"""

from __future__ import annotations

import os
import time

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
STDOUT, STDERR = 1, 2
UVICORN_PREFIX = {"info": "INFO:     ", "warning": "WARNING:  ", "error": "ERROR:    "}  # levelprefix, 9 wide


def timestamp(with_ms: bool | None = None) -> str:
    """``2026-05-28 00:11:09`` (``.816`` appended when ``SGLANG_LOG_MS=1``)."""
    now = time.time()
    text = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    if with_ms is None:
        with_ms = os.environ.get("SGLANG_LOG_MS") == "1"
    return f"{text}.{int(now * 1000) % 1000:03d}" if with_ms else text


def rank_prefix(dp_rank: int | None, tp_rank: int, tp_size: int) -> str:
    """`` DP0 TP1`` style prefix (511 scheduler.py:3845-3860): DP when set, TP only when tp > 1."""
    prefix = f" DP{dp_rank}" if dp_rank is not None else ""
    return prefix + (f" TP{tp_rank}" if tp_size > 1 else "")


def write_raw(text: str, fd: int = STDERR) -> None:
    """Bytes that bypass logging (tqdm bars, tracebacks): one write, no formatting."""
    data = text.encode()
    while data:
        written = os.write(fd, data)
        data = data[written:]


class LogWriter:
    """One process's logger: ``[ts{prefix}] message``, filtered by ``--log-level``."""

    def __init__(self, prefix: str = "", log_level: str = "info", http_level: str | None = None) -> None:
        self.prefix = prefix
        self.threshold = LEVELS.get(log_level, 20)
        self.http_threshold = LEVELS.get(http_level or log_level, 20)

    def log(self, message: str, level: str = "info") -> None:
        if LEVELS[level] >= self.threshold:
            write_raw(f"[{timestamp()}{self.prefix}] {message}\n")

    def info(self, message: str) -> None:
        self.log(message, "info")

    def warning(self, message: str) -> None:
        self.log(message, "warning")

    def error(self, message: str) -> None:
        self.log(message, "error")

    def uvicorn(self, message: str, level: str = "info") -> None:
        """uvicorn's default logger (511 srt/utils/common.py:2449-2459): ``[ts] INFO:     message``."""
        if LEVELS[level] >= self.http_threshold:
            write_raw(f"[{timestamp(False)}] {UVICORN_PREFIX[level]}{message}\n")

    def access(self, client: str, request_line: str, status: int, phrase: str) -> None:
        """uvicorn's access logger, on stdout:
        ``[ts] INFO:     127.0.0.1:53422 - "GET /health HTTP/1.1" 200 OK``."""
        if LEVELS["info"] >= self.http_threshold:
            prefix = f"[{timestamp(False)}] {UVICORN_PREFIX['info']}"
            write_raw(f'{prefix}{client} - "{request_line}" {status} {phrase}\n', STDOUT)
