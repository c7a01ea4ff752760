"""Time to first frame: from starting `gdnconsole HOST` in a real terminal (tmux, 120x36) to the
dashboard's first paint, while the host's SSH server has not answered yet (it accepts the TCP connection
and says nothing: connections come up in the background and must not hold the screen). Target: < 0.5 s.

The figure includes Python's start and every import the first frame needs; it is the median of RUNS.
The bench reads tmux's control-mode stream, so it wakes on the frame's own bytes rather than polling the
screen. A Textual app of one line and a footer, timed the same way in turns with the console, gives the
floor for scale: this machine's speed varies from minute to minute, and the two move together.
"""

from __future__ import annotations

import os
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tmuxterm import unescaped

RUNS = 11
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


def wait_for_output(client: subprocess.Popen[bytes], text: bytes, deadline: float) -> None:
    """Read the control client's notifications until a pane's output holds ``text``: tmux hands us each
    write as it happens, so the bench wakes on the frame itself instead of polling the screen (a poll
    loop of capture-pane processes took CPU from the console it was timing on a 2-core machine)."""
    assert client.stdout is not None
    fd = client.stdout.fileno()
    pending = b""
    seen = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise RuntimeError(f"no {text.decode()!r} in the output after 20 s")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise RuntimeError("tmux's control client ended before the frame")
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        for line in lines:
            if line.startswith(b"%output "):
                payload = unescaped(line.split(b" ", 2)[2])
                seen = seen[-len(text) :] + payload  # the text may straddle two writes
                if text in seen:
                    return


# The floor for scale, run the same way: a Textual app with one line and a footer, nothing else.
HELLO = (
    "from textual.app import App\n"
    "from textual.widgets import Footer, Static\n"
    "class Hello(App):\n"
    "    BINDINGS = [('q', 'quit', 'Quit')]\n"
    "    def compose(self):\n"
    "        yield Static('slowbox connecting')\n"
    "        yield Footer()\n"
    "Hello().run()\n"
)


def one_run(config: Path, program: str, index: int) -> float:
    """Seconds from asking tmux for a new 120x36 window running ``program`` (a Python script, run by this
    Python, with its arguments) to the first output that holds "connecting" (the status bar)."""
    # Bytecode caches as an installed console has them (pip compiles at install; Python writes them on
    # the first run), in a folder of the bench's own: a PYTHONDONTWRITEBYTECODE in the caller's
    # environment would otherwise make every run compile the package from source.
    cache = config.parent / "pycache"
    env = f"GDNCONSOLE_CONFIG={config} TERM=xterm-256color PYTHONPYCACHEPREFIX={cache}"
    command = f"env -u PYTHONDONTWRITEBYTECODE {env} {sys.executable} {program}"
    session = f"run{index + 1}"
    started = time.monotonic()
    client = subprocess.Popen(
        ["tmux", "-L", SOCKET, "-C", "new-session", "-s", session, "-x", SIZE[0], "-y", SIZE[1], command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        wait_for_output(client, FRAME_TEXT.encode(), started + 20)
        return time.monotonic() - started
    finally:
        tmux("kill-session", "-t", session, check=False)
        client.kill()
        client.wait()


def figures(times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    return f"median {statistics.median(ms):.0f} ms (min {ms[0]:.0f}, max {ms[-1]:.0f})"


def main() -> None:
    if shutil.which("tmux") is None:
        print("tmux is not installed: skipped")
        return
    listener = silent_listener()
    tmux("new-session", "-d", "-s", "keeper", "sleep 600")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = hosts_file(Path(tmp), listener.getsockname()[1])
            hello = Path(tmp) / "hello.py"
            hello.write_text(HELLO)
            console = f"{Path(sys.executable).with_name('gdnconsole')} slowbox"  # the installed command
            for program in (console, str(hello)):
                one_run(config, program, -1)  # warm the page cache and write the .pyc files
            # Interleaved, so that a busy spell on the machine weighs on both alike.
            times: dict[str, list[float]] = {console: [], str(hello): []}
            for i in range(RUNS):
                for program, runs in times.items():
                    runs.append(one_run(config, program, i))
    finally:
        tmux("kill-server", check=False)
        listener.close()
    shown = figures(times[console])
    print(f"first frame (tmux 120x36, SSH not answering), {RUNS} runs: {shown}; target < 500 ms")
    print(f"  for scale, a Textual app of one line and a footer: {figures(times[str(hello)])}")


if __name__ == "__main__":
    main()
