"""Process plumbing shared by the main process and its children: titles, parent-death signal, the tree.

SGLang's children set their title with setproctitle and call ``prctl(PR_SET_PDEATHSIG, SIGKILL)``
(FACTS §7); they stay in the parent's process group. ``kill_process_tree`` follows SGLang's: SIGKILL to
every descendant, and to the caller itself when ``include_parent``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
COMM_MAX = 15  # the kernel keeps 15 bytes of comm


def _prctl(option: int, arg: int | bytes) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, arg, 0, 0, 0)


def set_comm(title: str) -> None:
    """``/proc/self/comm``, as setproctitle sets it alongside the command line."""
    _prctl(PR_SET_NAME, title.encode()[:COMM_MAX])


def die_with_parent(parent_pid: int) -> None:
    """SIGKILL this process when its parent dies (srt/utils/common.py `kill_itself_when_parent_died`)."""
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent_pid:  # the parent died before the prctl took effect
        os.kill(os.getpid(), signal.SIGKILL)


def own_title() -> str:
    """argv[0] as the parent set it (Python rewrites sys.argv[0] for ``-m``)."""
    try:
        return Path("/proc/self/cmdline").read_bytes().split(b"\0", 1)[0].decode()
    except OSError:
        return "python"


def spawn(
    title: str, module: str, args: list[str], pass_fds: tuple[int, ...] = ()
) -> subprocess.Popen[bytes]:
    """Start ``python -m module args`` whose command line begins with ``title`` (its process title)."""
    return subprocess.Popen(
        [title, "-m", module, "--parent-pid", str(os.getpid()), *args],
        executable=sys.executable,
        pass_fds=pass_fds,
        stdin=subprocess.DEVNULL,
    )


def children_of(pid: int) -> list[int]:
    """Direct children, found by scanning ``/proc/*/stat`` (no psutil on the simulated host)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1] == str(pid):
            found.append(int(entry.name))
    return found


def descendants_of(pid: int) -> list[int]:
    result: list[int] = []
    for child in children_of(pid):
        result.extend(descendants_of(child))
        result.append(child)
    return result


def kill_process_tree(parent_pid: int, include_parent: bool = True) -> None:
    """SIGKILL the descendants of ``parent_pid`` (and, when asked, the process itself), as SGLang does."""
    for pid in descendants_of(parent_pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if include_parent:
        os.kill(parent_pid, signal.SIGKILL)
