"""The demo tether's watcher, piece by piece: it stops a server only while the pid is still the process
that started then (never a reuse of its number), the whole process group, and it reads nothing hostile
(a damaged line from the pipe, a FIFO or a link at the pid file) as a server."""

from __future__ import annotations

import io
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gdnconsole.demo import tether
from gdnconsole.demo.tether import Server

WAIT_S = 30.0


def start_of(pid: int) -> float:
    """The process's start in epoch seconds, as the agent records it."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return round(tether._boot_time() + int(fields[19]) / os.sysconf("SC_CLK_TCK"), 2)


@pytest.fixture
def group() -> Iterator[subprocess.Popen[bytes]]:
    """A leader in a session of its own with a child in its group (as a server and its ranks)."""
    proc = subprocess.Popen(["sh", "-c", "sleep 300 & wait"], start_new_session=True)
    deadline = time.monotonic() + WAIT_S
    while not members(proc.pid)[1:]:
        assert time.monotonic() < deadline, "the child did not start"
        time.sleep(0.01)
    yield proc
    if tether.group_alive(proc.pid):
        os.killpg(proc.pid, 9)
    proc.wait()


def members(pgid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = tether._stat(int(entry.name))
            if fields and fields[2] == str(pgid) and fields[0] not in "ZX":
                found.append(int(entry.name))
    return sorted(found)


def test_a_pid_that_started_at_another_time_is_never_signalled(group: subprocess.Popen[bytes]) -> None:
    reused = Server(group.pid, group.pid, start_of(group.pid) - 5.0)
    assert tether.stop(reused, grace=0.5) is False
    assert group.poll() is None and len(members(group.pid)) == 2


def test_the_server_and_its_whole_group_are_stopped(group: subprocess.Popen[bytes]) -> None:
    ours = Server(group.pid, group.pid, start_of(group.pid))
    # SIGTERM ends the shell, not its child: the group's SIGKILL after the grace does
    assert tether.stop(ours, grace=0.2) is True
    assert not tether.group_alive(group.pid)


def test_a_closed_pipe_stops_what_the_console_said_and_the_pid_files_last_word(
    group: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    said = Server(group.pid, group.pid, start_of(group.pid))
    pidfile = tmp_path / "pid.json"
    pidfile.write_text(json.dumps({"pid": said.pid, "pgid": said.pgid, "start_time": said.start_time}))
    assert tether.read_pidfile(pidfile) == said
    stopped = tether.watch(io.BytesIO(b"garbage\n" + said.line() + b"server 1 1 0\n"), pidfile, grace=0.2)
    assert stopped == [said] and not tether.group_alive(group.pid)


@pytest.mark.parametrize(
    "line",
    [b"", b"server\n", b"server x 1 1.0\n", b"server 1 1 1.0\n", b"server 5 0 1.0\n", b"server 5 6 nan x\n"],
)
def test_a_damaged_line_names_no_server(line: bytes) -> None:
    assert Server.parse_line(line) is None


def test_a_pid_file_that_is_not_a_record_names_no_server(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert tether.read_pidfile(fifo) is None  # and returns at once: nobody writes to it
    real = tmp_path / "real.json"
    real.write_text(json.dumps({"pid": 4242, "pgid": 4242, "start_time": 1.5}))
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert tether.read_pidfile(link) is None and tether.read_pidfile(real) == Server(4242, 4242, 1.5)
    for body in ("[]", '{"pid": true, "start_time": 1}', '{"pid": 7, "pgid": "7", "start_time": 1}', "\xff"):
        real.write_text(body)
        assert tether.read_pidfile(real) is None, body
