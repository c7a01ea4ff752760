"""The agent's log, log_reset and pong frames, parsed into typed values at the session's edge: a damaged
or foreign frame (an agent of another version, a line cut by a bad link) is skipped, never a traceback,
and a good one applies as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gdnconsole.host.answers import Launched, Stopped, Stopping
from gdnconsole.host.session import HostSession
from gdnconsole.host.state import LogChunk, LogReset, Pong
from tests.host.test_session import sim_host


@pytest.mark.parametrize("frame", [{"offset": "x"}, {"offset": 0, "end": [1]}, {"end": 5, "size": "big"}])
def test_a_log_frame_with_a_position_that_is_no_int_is_none(frame: Any) -> None:
    assert LogChunk.parse(frame) is None


@pytest.mark.parametrize("frame", [None, 7, "log", []])
def test_a_frame_that_is_no_object_is_an_empty_chunk(frame: Any) -> None:
    assert LogChunk.parse(frame) == LogChunk(0, 0, 0)


def test_a_log_frame_is_typed() -> None:
    chunk = LogChunk.parse(
        {"type": "log", "offset": 3, "end": 9, "size": 12, "held": 2, "inode": 5, "raw": b"a\nb"}
    )
    assert chunk == LogChunk(offset=3, end=9, size=12, held=2, inode=5, names_inode=True, data=b"a\nb\n")
    text = LogChunk.parse({"offset": 0, "end": 2, "data": "é\n", "held": -1, "inode": "nope"})
    assert text == LogChunk(offset=0, end=2, size=2, data="é\n".encode())  # size defaults to the end
    assert LogChunk.parse({"offset": 0, "end": 0, "inode": None}) == LogChunk(0, 0, 0, names_inode=True)


def test_reset_and_pong_frames_are_typed_whatever_they_hold() -> None:
    assert LogReset.parse({"reason": "truncated", "inode": 4}) == LogReset("truncated", 4)
    assert LogReset.parse({"reason": None, "inode": "4"}) == LogReset("replaced", None)
    assert LogReset.parse("garbage") == LogReset()
    assert Pong.parse({"id": 7}) == Pong(7)
    assert Pong.parse({"id": "7"}) is None and Pong.parse({"id": True}) is None and Pong.parse(None) is None


def session(tmp_path: Path) -> HostSession:
    return HostSession(sim_host(tmp_path), probe=False)


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "log", "offset": "zero", "end": 5, "data": "x\n"},
        {"type": "log", "offset": 0, "end": None, "size": {"a": 1}, "data": "x\n"},
        {"type": "log_reset", "reason": ["truncated"], "inode": 3.5},
        {"type": "pong", "id": "seven"},
        {"type": "pong", "id": None},
    ],
)
def test_a_damaged_frame_never_raises_and_changes_no_offset(tmp_path: Path, frame: dict[str, Any]) -> None:
    s = session(tmp_path)
    s.handle(frame)
    assert s.log.offset == 0 and s.rtt_ms is None


def test_log_frames_apply_once_and_in_order(tmp_path: Path) -> None:
    s = session(tmp_path)
    heard: list[str] = []
    s.subscribe(heard.append)
    s.handle({"type": "log", "offset": 0, "end": 4, "size": 10, "inode": 9, "raw": b"one"})
    assert (s.log.offset, s.log.size, s.log.inode, s.log.lines) == (4, 10, 9, 1) and heard == ["log"]
    s.handle({"type": "log", "offset": 0, "end": 4, "size": 10, "raw": b"one\n"})  # a duplicate
    s.handle({"type": "log", "offset": 6, "end": 8, "size": 10, "raw": b"x\n"})  # out of order
    assert s.log.offset == 4 and s.log.lines == 1 and heard == ["log"] and s.log.inode == 9
    s.handle({"type": "log_reset", "reason": "truncated", "inode": 11})
    assert s.log.offset == 0 and s.log.inode == 11 and heard == ["log", "log"]


def test_the_launchers_answers_are_typed_and_a_damaged_one_is_none() -> None:
    launched = Launched.parse({"type": "launched", "id": 3, "server": {"pid": 41, "pgid": 41, "argv": ["x"]}})
    assert launched is not None and launched.server.pid == 41 and launched.server.argv == ("x",)
    for damaged in ({"server": {"pid": "41"}}, {"server": None}, None, {"server": [41]}):
        assert Launched.parse(damaged) is None
    stopped = Stopped.parse(
        {"type": "stopped", "pid": 4, "pgid": 4, "how": "sigterm", "elapsed": 1, "strays": 2}
    )
    assert stopped == Stopped("sigterm", 1.0, 4, 2)
    assert Stopped.parse({"how": "gone", "elapsed": 0.5}) == Stopped("gone", 0.5)
    for bad in ({"how": 3, "elapsed": 1.0}, {"how": "gone"}, {"how": "gone", "elapsed": "1"}, "stopped"):
        assert Stopped.parse(bad) is None
    assert Stopping.parse({"signal": "SIGKILL", "alive": 2, "elapsed": 30.1}) == Stopping("SIGKILL", 2, 30.1)
    assert Stopping.parse({"signal": None, "alive": "two", "elapsed": True}) == Stopping()
