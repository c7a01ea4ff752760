"""Running the simulated SGLang server as a real subprocess, for the test_server_* modules.

Each server runs in its own session (so the test can kill the whole tree by process group), writes
stdout+stderr to one log file as an operator's ``> log 2>&1`` does, and listens on a free loopback port.
Waits poll the log or the process with a bounded deadline; nothing asserts on wall-clock speed.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from gdnconsole.host.simhome import SIM_DIR
from tests.sshhosts import free_loopback_port as free_port

POLL_S = 0.02
CT129 = [
    "--model-path",
    "Qwen/Qwen3.6-27B",
    "--tp",
    "2",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "1",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "2",
    "--mamba-scheduler-strategy",
    "extra_buffer",
]
READY = "The server is fired up and ready to roll!"


def wait_until(check: Callable[[], object], timeout: float = 30.0, what: str = "condition") -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(POLL_S)
    raise AssertionError(f"timed out waiting for {what}")


def children(pid: int) -> list[int]:
    """Direct children of ``pid``, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if stat[stat.rfind(")") + 2 :].split()[1] == str(pid):
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2] not in "ZX"


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    log: Path
    port: int
    home: Path

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def lines(self) -> list[str]:
        return self.text().splitlines()

    def wait_for(self, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        """The first match of ``pattern`` (a regex) in the log; fails early if the server exits without it."""
        regex = re.compile(pattern, re.M)

        def check() -> re.Match[str] | None:
            found = regex.search(self.text())
            if found is None and self.proc.poll() is not None:
                found = regex.search(self.text())
                if found is None:
                    raise AssertionError(
                        f"server exited ({self.proc.returncode}) before {pattern!r}:\n{self.text()[-3000:]}"
                    )
            return found

        result = wait_until(check, timeout, repr(pattern))
        assert isinstance(result, re.Match)
        return result

    def wait_ready(self, timeout: float = 30.0) -> None:
        self.wait_for(re.escape(READY), timeout)

    def wait_exit(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def client(self, **kwargs: object) -> httpx.Client:
        return httpx.Client(base_url=self.url(""), timeout=kwargs.pop("timeout", 30.0), **kwargs)  # type: ignore[arg-type]

    def descendants(self) -> list[int]:
        result = []
        for child in children(self.proc.pid):
            result += [child, *children(child)]
        return result


@dataclass
class Servers:
    """Starts servers on a simulated host; kills every one it started on exit (by process group)."""

    make_host: Callable[..., object]
    tmp: Path
    started: list[Server] = field(default_factory=list)

    def start(
        self,
        *args: str,
        sim: dict[str, object] | None = None,
        env: dict[str, str] | None = None,
        entry: str = "module",
        port: int | None = None,
    ) -> Server:
        host = self.make_host(**(sim or {}))
        port = port or free_port()
        log = self.tmp / f"server{len(self.started)}.log"
        full_env = {**host.env, **(env or {})}  # type: ignore[attr-defined]
        argv = [*args, "--port", str(port)]
        if entry == "module":
            command = [sys.executable, "-m", "sglang.launch_server", *argv]
        else:
            command = [str(SIM_DIR / "bin" / "sglang"), "serve", *argv]
        with log.open("wb") as out:
            proc = subprocess.Popen(
                command,
                env=full_env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        server = Server(proc, log, port, host.home)  # type: ignore[attr-defined]
        self.started.append(server)
        return server

    def close(self) -> None:
        for server in self.started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.proc.pid, signal.SIGKILL)
            for pid in server.descendants():  # children outlive a dead leader only briefly (PDEATHSIG)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            server.proc.wait(10)


def servers_fixture(sim_host: Callable[..., object], tmp_path: Path) -> Iterator[Servers]:
    servers = Servers(sim_host, tmp_path)
    try:
        yield servers
    finally:
        servers.close()


def run_args(
    sim_host: Callable[..., object], *args: str, sim: dict[str, object] | None = None, timeout: float = 30.0
) -> subprocess.CompletedProcess[str]:
    """Run the launcher for a failure that happens during argument processing (nothing is started)."""
    host = sim_host(**(sim or {}))
    return subprocess.run(
        [sys.executable, "-m", "sglang.launch_server", *args, "--port", str(free_port())],
        env=host.env,
        capture_output=True,
        text=True,
        timeout=timeout,  # type: ignore[attr-defined]
    )
