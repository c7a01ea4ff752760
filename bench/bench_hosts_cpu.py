"""The console's CPU with N hosts open: the real `gdnconsole H1 … HN` (this checkout's code) in tmux, on N
local simulated hosts with quiet logs and no server (GPU samples and process scans every second, as on
idle boxes). Target: 40 hosts under 15% of a core.

For each N the console starts in a detached tmux window (160x64: the overview has a row per host); once
its N agents run and a settling time has passed, the console process's user+sys time (/proc/PID/stat,
all its threads) is read over a fixed window. The agents' own time is printed apart, for scale: they are
other processes (on a real fleet, other machines). Prints figures; asserts nothing.

    python bench/bench_hosts_cpu.py [--hosts 1,10,20,40] [--seconds 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostsfile import console_argv, console_env, write_hosts
from tmuxterm import Tmux, available

SIZE = (160, 64)
TICKS = os.sysconf("SC_CLK_TCK")
STARTUP_S = 180.0  # for N agents to start on a small machine
SETTLE_S = 5.0  # links up, first samples and the first paints behind us


def cpu_ticks(pid: int) -> int:
    """utime + stime of a process (every thread, the ended ones included), in clock ticks."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rfind(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(raw[raw.rfind(")") + 2 :].split()[1]) == pid:
            out.append(int(entry))
    return out


def wait_for_agents(pid: int, count: int) -> list[int]:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            raise RuntimeError("the console ended before its agents started")
        agents = children(pid)
        if len(agents) >= count:
            return agents
        time.sleep(0.5)
    raise RuntimeError(f"{count} agents did not start within {STARTUP_S:.0f} s")


def measure(tmux: Tmux, folder: Path, count: int, seconds: float) -> tuple[float, float]:
    """(console, agents) CPU in % of one core over ``seconds``, with ``count`` hosts open."""
    names = [f"h{i:02d}" for i in range(1, count + 1)]
    base = folder / f"n{count}"
    hosts = write_hosts(base, names)
    session = f"n{count}"
    pid = tmux.detached(session, SIZE, tmux.command_line(console_argv(names), console_env(base, hosts)))
    try:
        agents = wait_for_agents(pid, count)
        time.sleep(SETTLE_S)
        start = time.monotonic()
        console0 = cpu_ticks(pid)
        agents0 = sum(cpu_ticks(a) for a in agents)
        time.sleep(seconds)
        console1 = cpu_ticks(pid)
        agents1 = sum(cpu_ticks(a) for a in agents)
        wall = time.monotonic() - start
    finally:
        tmux.run("kill-session", "-t", session, check=False)
    return (console1 - console0) / TICKS / wall * 100, (agents1 - agents0) / TICKS / wall * 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", default="1,10,20,40", help="comma-separated host counts")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    if not available():
        print("tmux is not installed: skipped")
        return
    counts = [int(n) for n in args.hosts.split(",")]
    window = f"{args.seconds:.0f} s after {SETTLE_S:.0f} s settling"
    print(f"console CPU with N simulated hosts open (tmux {SIZE[0]}x{SIZE[1]}, quiet logs, no server), "
          f"{window}; target: 40 hosts < 15% of a core")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="gdn-bench-hosts-") as tmp:
        tmux = Tmux("gdnhosts")
        try:
            for count in counts:
                console, agents = measure(tmux, Path(tmp), count, args.seconds)
                print(f"  {count:3d} hosts: console {console:5.1f}% of a core"
                      f"   (its {count} agents: {agents:5.1f}% in all)")  # fmt: skip
        finally:
            tmux.close()


if __name__ == "__main__":
    main()
