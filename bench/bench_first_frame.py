"""Time to first frame: from starting `gdnconsole HOST` in a real terminal (tmux, 120x36) to the
dashboard's first paint, while the host's SSH server has not answered yet (it accepts the TCP connection
and says nothing: connections come up in the background and must not hold the screen). Target: < 0.5 s.

The figure includes Python's start and every import the first frame needs; it is the median of RUNS.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 7
SIZE = ("120", "36")
FRAME_TEXT = "connecting"  # the dashboard's status bar while the link comes up


def silent_listener() -> socket.socket:
    """A loopback port that accepts connections and never sends a byte (an SSH server that hangs)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock


def hosts_file(directory: Path, port: int) -> Path:
    path = directory / "hosts.toml"
    path.write_text(
        f'[hosts.slowbox]\nssh = "root@127.0.0.1:{port}"\n\n'
        '[hosts.slowbox.profiles.p]\nmodel = "Qwen/Qwen3.6-27B"\n'
    )
    return path


SOCKET = f"gdnbench-{os.getpid()}"  # a tmux server of our own, kept alive by a keeper session


def tmux(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=check)


def capture(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session, check=False).stdout


def one_run(config: Path, index: int) -> float:
    session = f"run{index + 1}"
    env = f"GDNCONSOLE_CONFIG={config} TERM=xterm-256color"
    command = f"env {env} {sys.executable} -m gdnconsole.cli slowbox"
    started = time.monotonic()
    tmux("new-session", "-d", "-s", session, "-x", SIZE[0], "-y", SIZE[1], command)
    try:
        while FRAME_TEXT not in capture(session):
            if time.monotonic() - started > 20:
                raise RuntimeError(f"no frame after 20 s:\n{capture(session)}")
            time.sleep(0.005)
        return time.monotonic() - started
    finally:
        tmux("kill-session", "-t", session, check=False)


def main() -> None:
    if shutil.which("tmux") is None:
        print("tmux is not installed: skipped")
        return
    listener = silent_listener()
    tmux("new-session", "-d", "-s", "keeper", "sleep 600")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = hosts_file(Path(tmp), listener.getsockname()[1])
            one_run(config, -1)  # warm the page cache and .pyc files
            times = [one_run(config, i) for i in range(RUNS)]
    finally:
        tmux("kill-server", check=False)
        listener.close()
    print(
        f"first frame (tmux 120x36, SSH not answering): median {statistics.median(times) * 1000:.0f} ms, "
        f"min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms over {RUNS} runs (target < 500 ms)"
    )


if __name__ == "__main__":
    main()
