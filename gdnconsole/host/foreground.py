"""Run a server in the foreground on this machine and show its log as it grows.

Used by `gdnconsole demo` to start the simulated server that its dashboard then watches (and by
`--plain`). The server runs in its own session and process group with its output going to the log file,
as the console will launch it on a real host; Ctrl-C stops it the way SGLang expects (SIGTERM, then
SIGKILL to that process group only).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO

from gdnconsole.errors import ConsoleError
from gdnconsole.logs.textsafe import last_carriage_state, visible, without_secrets
from gdnconsole.sglang.launch import LaunchSpec

POLL_S = 0.1  # how often the log is read: the demo is watched by a person, not timed
STOP_GRACE_S = 30.0
PR_SET_PDEATHSIG = 1  # SIGTERM lets SGLang drain; after this the process group is killed


class LogFollower:
    """Reads complete lines appended to a file, from a byte offset."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self._partial = b""

    def read_lines(self) -> list[str]:
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        return [line.decode("utf-8", errors="replace") for line in lines]

    def rest(self) -> list[str]:
        """What is left after the writer is gone, including a last line without a newline."""
        lines = self.read_lines()
        if self._partial:
            lines.append(self._partial.decode("utf-8", errors="replace"))
            self._partial = b""
        return lines


def start(spec: LaunchSpec, *, env: Mapping[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    """Start ``spec`` in its own session and process group, stdout+stderr to ``log`` (truncated).

    The server gets SIGTERM if this process dies, however it dies (a closed terminal sends SIGHUP, which
    skips ``finally`` blocks): a demo must not leave a server behind.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(open_log(log), "ab") as log_fh:
        return subprocess.Popen(
            list(spec.argv),
            stdin=subprocess.DEVNULL,
            stdout=log_fh,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env, **spec.env},
            cwd=cwd,
            start_new_session=True,
            preexec_fn=terminate_with_parent,
        )


class LogRefused(ConsoleError):
    """The log path holds a link, a FIFO or another user's file: nothing was started."""


def open_log(log: Path) -> int:
    """``log`` emptied for the new server, as the agent opens a launch's log: never through a link, never
    a FIFO, never someone else's file, created 0600 (host/agent.py ``open_log`` says why)."""
    from gdnconsole.host import agent  # stdlib only, and the one place that rule is written

    try:
        return agent.open_log(str(log), truncate=True)
    except agent.BadRequest as exc:
        raise LogRefused(str(exc)) from None


def terminate_with_parent() -> None:
    """In the child, before exec: ask Linux for SIGTERM when the parent dies (prctl PR_SET_PDEATHSIG)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def stop(proc: subprocess.Popen[bytes], grace: float = STOP_GRACE_S) -> str:
    """SIGTERM (SGLang drains), then SIGKILL to the process group we started after ``grace`` seconds.

    Returns how it ended, in words. SGLang ends its own shutdown by SIGKILLing itself
    (``kill_process_tree(include_parent=True)``, FACTS §7), so SIGKILL after our SIGTERM is normal.
    """
    if proc.poll() is not None:
        _kill_group(proc)
        return describe_exit(proc.returncode)
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return f"did not stop within {grace:.0f} s of SIGTERM: killed its process group"
    _kill_group(proc)  # children that outlived their parent belong to the group we started
    return "stopped (SIGTERM, drained)"


def stop_group(pgid: int, grace: float = STOP_GRACE_S) -> str:
    """Stop a server this console started that is not its child (the agent launched it): SIGTERM to its
    main process, the group's leader (SGLang drains), then SIGKILL to the process group ``pgid`` once it
    has ended or after ``grace`` seconds. Returns how it ended, in words."""
    try:
        os.kill(pgid, signal.SIGTERM)
    except ProcessLookupError:  # the leader is gone: nothing is left to drain
        alive = group_alive(pgid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        return "killed what was left of its process group" if alive else "had ended"
    deadline = time.monotonic() + grace
    while group_alive(pgid):
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            return f"did not stop within {grace:g} s of SIGTERM: killed its process group"
        time.sleep(POLL_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)  # members that outlived the leader (zombies aside, none)
    return "stopped (SIGTERM, drained)"


def group_alive(pgid: int) -> bool:
    """Whether a live process (not a zombie) belongs to process group ``pgid`` (Linux /proc)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After the command's closing parenthesis: state, ppid, pgrp.
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def describe_exit(code: int) -> str:
    if code < 0:
        return f"ended by {signal.Signals(-code).name}"
    return f"exited with code {code}"


def run(
    spec: LaunchSpec,
    *,
    env: Mapping[str, str],
    cwd: Path,
    log: Path,
    out: TextIO,
    on_start: Callable[[int], None] | None = None,
) -> int:
    """Start ``spec`` with output to ``log``, echo the log to ``out`` until it exits; Ctrl-C stops it."""
    proc = start(spec, env=env, cwd=cwd, log=log)
    if on_start:
        on_start(proc.pid)
    follower = LogFollower(log)
    stop_deadline: float | None = None
    while True:
        try:
            _echo(follower.read_lines(), out)
            if proc.poll() is not None:
                break
            if stop_deadline is not None and time.monotonic() > stop_deadline:
                _kill_group(proc)
            time.sleep(POLL_S)
        except KeyboardInterrupt:
            if stop_deadline is None:
                out.write(f"-- stopping the server (SIGTERM to pid {proc.pid}; Ctrl-C again kills it)\n")
                proc.send_signal(signal.SIGTERM)
                stop_deadline = time.monotonic() + STOP_GRACE_S
            else:
                _kill_group(proc)
    _echo(follower.rest(), out)
    _kill_group(proc)  # children that outlived their parent belong to the group we started
    return proc.returncode


def _echo(lines: list[str], out: TextIO) -> None:
    for line in lines:
        out.write(visible(without_secrets(last_carriage_state(line))) + "\n")
    out.flush()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group this module started (its id is the server's pid), and nothing else."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
