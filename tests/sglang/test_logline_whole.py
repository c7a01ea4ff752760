"""Each shape of line, taken apart whole: every field of the result, not only the one a feature reads.

A field nobody asserts can silently go wrong (the wrapper's ``source``, a ``level``, the milliseconds):
the log view shows them, and the tracker reads the rank that a torch ``[rankN]:`` wrapper gives.
"""

from __future__ import annotations

import pytest

from gdnconsole.sglang.logline import Kind, LogLine, parse, split_glued

STAMP = "2026-11-30 09:00:02"
INIT = "Init torch distributed begin."
ACCESS = '127.0.0.1:41234 - "GET /health HTTP/1.1" 200 OK'
BAR = "Capturing batches (bs=4 avail_mem=16.20 GB): 100%|██████████| 36/36 [00:10<00:00,  3.37it/s]"

WHOLE: dict[str, tuple[str, LogLine]] = {
    "an empty line is blank": ("", LogLine("", Kind.BLANK, "")),
    "a compose wrapper around nothing is a blank line of that service": (
        "sglang-1  | ",
        LogLine("", Kind.BLANK, "", source="sglang-1"),
    ),
    "only the line ending is taken off: trailing spaces stay in the message": (
        f"[{STAMP}.816 TP0] Load weight begin. avail mem=46.93 GB  \r\n",
        LogLine(
            f"[{STAMP}.816 TP0] Load weight begin. avail mem=46.93 GB  ",
            Kind.FRAMED,
            "Load weight begin. avail mem=46.93 GB  ",
            stamp=STAMP,
            ms=816,
            rank="TP0",
        ),
    ),
    "a line's last letters are its own, whatever they are": (
        "NotImplementedError: no kernel for MLX\n",
        LogLine(
            "NotImplementedError: no kernel for MLX", Kind.EXCEPTION, "NotImplementedError: no kernel for MLX"
        ),
    ),
    "a framed uvicorn line keeps its stamp, milliseconds, level and service": (
        f"sglang-1  | [{STAMP}.120] INFO:     Started server process [4242]",
        LogLine(
            f"[{STAMP}.120] INFO:     Started server process [4242]",
            Kind.UVICORN,
            "Started server process [4242]",
            stamp=STAMP,
            ms=120,
            level="INFO",
            source="sglang-1",
        ),
    ),
    "a framed access line": (
        f"sglang-1  | [{STAMP}] INFO:     {ACCESS}",
        LogLine(
            f"[{STAMP}] INFO:     {ACCESS}", Kind.ACCESS, ACCESS, stamp=STAMP, level="INFO", source="sglang-1"
        ),
    ),
    "a 2024 gpu_id frame names the GPU as the rank": (
        "sglang-1  | [gpu_id=1] Init nccl begin.",
        LogLine(
            "[gpu_id=1] Init nccl begin.", Kind.FRAMED, "Init nccl begin.", rank="gpu_id=1", source="sglang-1"
        ),
    ),
    "uvicorn's own unframed access line (2024 builds)": (
        f"sglang-1  | INFO:     {ACCESS}",
        LogLine(f"INFO:     {ACCESS}", Kind.ACCESS, ACCESS, level="INFO", source="sglang-1"),
    ),
    "uvicorn's own unframed warning": (
        "sglang-1  | WARNING:  Invalid HTTP request received.",
        LogLine(
            "WARNING:  Invalid HTTP request received.",
            Kind.UVICORN,
            "Invalid HTTP request received.",
            level="WARNING",
            source="sglang-1",
        ),
    ),
    "a frame that lost its opening bracket in a paste": (
        "sglang-1  | 2025-08-15 14:25:48 TP0] Load weight begin. avail mem=44.10 GB",
        LogLine(
            "2025-08-15 14:25:48 TP0] Load weight begin. avail mem=44.10 GB",
            Kind.FRAMED,
            "Load weight begin. avail mem=44.10 GB",
            stamp="2025-08-15 14:25:48",
            rank="TP0",
            source="sglang-1",
        ),
    ),
    "a numbered compose service wraps any text": (
        "sglang-1  | Loading model weights",
        LogLine("Loading model weights", Kind.OTHER, "Loading model weights", source="sglang-1"),
    ),
    "an unnumbered service wraps a frame": (
        f"sglang  | [{STAMP} TP1] {INIT}",
        LogLine(f"[{STAMP} TP1] {INIT}", Kind.FRAMED, INIT, stamp=STAMP, rank="TP1", source="sglang"),
    ),
    "an unnumbered service wraps an indented traceback frame": (
        'sglang  |   File "/x/sglang/srt/managers/scheduler.py", line 1, in event_loop',
        LogLine(
            '  File "/x/sglang/srt/managers/scheduler.py", line 1, in event_loop',
            Kind.OTHER,
            '  File "/x/sglang/srt/managers/scheduler.py", line 1, in event_loop',
            source="sglang",
        ),
    ),
    "an unnumbered service wraps a traceback's header": (
        "sglang  | Traceback (most recent call last):",
        LogLine(
            "Traceback (most recent call last):",
            Kind.TRACEBACK,
            "Traceback (most recent call last):",
            source="sglang",
        ),
    ),
    "an unnumbered service wraps a traceback's last line": (
        "sglang  | RuntimeError: boom",
        LogLine("RuntimeError: boom", Kind.EXCEPTION, "RuntimeError: boom", source="sglang"),
    ),
    "prose with a pipe in it is not a compose wrapper": (
        "sglang  | some text",
        LogLine("sglang  | some text", Kind.OTHER, "sglang  | some text"),
    ),
    "a Ray actor's prefix names the actor": (
        f"(SchedulerActor pid=4242) [{STAMP} TP0] {INIT}",
        LogLine(f"[{STAMP} TP0] {INIT}", Kind.FRAMED, INIT, stamp=STAMP, rank="TP0", source="SchedulerActor"),
    ),
    "a Ray prefix without an actor is Ray's": (
        "(pid=4242, ip=10.0.0.2) Loading model weights",
        LogLine("Loading model weights", Kind.OTHER, "Loading model weights", source="ray"),
    ),
    "torch's [rankN]: wrapper gives the line its rank": (
        "[rank1]: Traceback (most recent call last):",
        LogLine(
            "Traceback (most recent call last):",
            Kind.TRACEBACK,
            "Traceback (most recent call last):",
            rank="TP1",
        ),
    ),
    "torch's wrapper inside a Ray prefix keeps both": (
        '(pid=4242) [rank3]:   File "/x.py", line 3, in f',
        LogLine(
            '  File "/x.py", line 3, in f',
            Kind.OTHER,
            '  File "/x.py", line 3, in f',
            rank="TP3",
            source="ray",
        ),
    ),
    "a log indented by one space is still framed": (
        f" [{STAMP} TP0] {INIT}",
        LogLine(f"[{STAMP} TP0] {INIT}", Kind.FRAMED, INIT, stamp=STAMP, rank="TP0"),
    ),
    "an exception indented by two (a paste) names the error": (
        "  ValueError: indented by two",
        LogLine("  ValueError: indented by two", Kind.EXCEPTION, "  ValueError: indented by two"),
    ),
    "an exception indented by three is a traceback's code line, not the error": (
        "   ValueError: indented by three",
        LogLine("   ValueError: indented by three", Kind.OTHER, "   ValueError: indented by three"),
    ),
    "flashinfer's own format gives its level": (
        "2025-11-30 11:18:01,123 - INFO - flashinfer.jit: Loading JIT ops",
        LogLine(
            "2025-11-30 11:18:01,123 - INFO - flashinfer.jit: Loading JIT ops",
            Kind.LIBRARY,
            "2025-11-30 11:18:01,123 - INFO - flashinfer.jit: Loading JIT ops",
            level="INFO",
        ),
    ),
    "a Gloo line is a library's, with no level": (
        "[Gloo] Rank 0 is connected to 1 peer ranks.",
        LogLine(
            "[Gloo] Rank 0 is connected to 1 peer ranks.",
            Kind.LIBRARY,
            "[Gloo] Rank 0 is connected to 1 peer ranks.",
        ),
    ),
}


@pytest.mark.parametrize(("raw", "expected"), list(WHOLE.values()), ids=list(WHOLE))
def test_a_line_is_taken_apart_whole(raw: str, expected: LogLine) -> None:
    assert parse(raw) == expected


def test_a_line_that_quotes_a_stamp_is_not_split_without_a_bar() -> None:
    line = f"[{STAMP}] the operator wrote [{STAMP}] in a message"
    assert split_glued(line) == [line]


def test_a_framed_bar_alone_is_one_line() -> None:
    line = f"[{STAMP} TP0] {BAR}"
    assert split_glued(line) == [line]


def test_a_bar_with_a_line_glued_after_it_is_two_lines() -> None:
    glued = f"[{STAMP} TP0] Capture cuda graph end. Time elapsed: 5.91 s."
    assert split_glued(BAR + glued) == [BAR, glued]
