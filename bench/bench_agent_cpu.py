"""CPU use of the host agent at 1 s sampling while it follows a server log, on a simulated ct129-like host.

Starts the simulated SGLang server (tp 2, two GPUs, speed 1: its log grows as a real start's does), runs
the agent exactly as the console does (bootstrap command, payload on stdin), asks for 1 s samples and
follows the server's log, and reads the agent's user+sys time from /proc/PID/stat after ``--seconds``.
Prints figures; asserts nothing.

Two caveats for reading the figures: with pynvml the simulator's stand-in runs inside the agent (reading
its ledger files), which a real NVML does in C; with nvidia-smi the tool runs as a child, whose time is
printed separately (the stand-in is a Python script, far slower to start than the real binary).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from gdnconsole.host import agent
from gdnconsole.host.simhome import prepare_home

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(CPU time of the process, of its reaped children). The process's own time comes from schedstat,
    in nanoseconds over all its threads: user+sys in /proc/PID/stat counts 10 ms ticks, too coarse here."""
    own = sum(
        int((task / "schedstat").read_text().split()[0]) for task in Path(f"/proc/{pid}/task").iterdir()
    )
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rfind(")") + 2 :].split()
    return own / 1e9, (int(fields[13]) + int(fields[14])) / TICKS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", "--tp", "2"]
    with log.open("wb") as out:
        return subprocess.Popen(
            [*argv, "--port", str(free_port())],
            env={**env, "CUDA_VISIBLE_DEVICES": "0,1"},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def count_messages(stdout: object, counts: dict[str, int]) -> None:
    for line in stdout:  # type: ignore[attr-defined]
        kind = json.loads(line)["type"]
        counts[kind] = counts.get(kind, 0) + 1


def measure(label: str, simulate: dict[str, object], seconds: float, home: Path) -> None:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(prepare_home(home, {"gpus": 2, "gpu_mib": 49140, "speed": 1.0, **simulate}))
    log = home / "sglang_serve.log"
    server = start_server(env, log)
    proc = subprocess.Popen(
        [sys.executable, *agent.BOOTSTRAP_ARGS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert proc.stdin is not None
    counts: dict[str, int] = {}
    reader = threading.Thread(target=count_messages, args=(proc.stdout, counts), daemon=True)
    reader.start()
    try:
        proc.stdin.write(agent.bootstrap_payload())
        for request in ({"op": "hello"}, {"op": "sample", "interval": 1.0}):
            proc.stdin.write((json.dumps(request) + "\n").encode())
        proc.stdin.write(
            (json.dumps({"op": "follow", "path": str(log), "offset": 0, "inode": None}) + "\n").encode()
        )
        proc.stdin.flush()
        time.sleep(2.0)  # start-up (imports, first hello, first samples) is not what is measured
        own0, kids0 = cpu_seconds(proc.pid)
        start = time.monotonic()
        time.sleep(seconds)
        own1, kids1 = cpu_seconds(proc.pid)
        wall = time.monotonic() - start
    finally:
        proc.stdin.close()
        proc.wait(10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)
    own = (own1 - own0) / wall * 100
    kids = (kids1 - kids0) / wall * 100
    print(f"{label:<10}  wall {wall:5.1f} s  agent {own:5.2f}% of a core  children {kids:5.2f}%  "
          f"log bytes {log.stat().st_size}  messages {dict(sorted(counts.items()))}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    print(f"processes on this machine: {sum(1 for n in os.listdir('/proc') if n.isdigit())}")
    with tempfile.TemporaryDirectory(prefix="gdn-bench-agent-") as tmp:
        measure("pynvml", {}, args.seconds, Path(tmp) / "nvml")  # the simulator's, in the agent
        measure("nvidia-smi", {"nvml": "absent"}, args.seconds, Path(tmp) / "smi")  # as children
        # No GPU source: what the agent itself costs (process scans, log polls, messages).
        measure("none", {"nvml": "absent", "nvidia_smi": False}, args.seconds, Path(tmp) / "none")


if __name__ == "__main__":
    main()
