"""The host agent, run as a real subprocess exactly as the console starts it, on a simulated GPU host.

Every agent is started with ``agent.BOOTSTRAP_ARGS`` and gets ``agent.bootstrap_payload()`` on stdin, then
JSON lines. Waits read the agent's messages with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import platform
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from gdnconsole.host import agent
from gdnconsole.host.simhome import SIM_DIR
from tests.sshhosts import free_loopback_port as free_port

if TYPE_CHECKING:
    from tests.conftest import SimHost, SimHostFactory

Message = dict[str, Any]
BASELINE = 4  # MiB an idle simulated GPU shows used
TIMEOUT = 15.0
PY38 = Path("/root/.pyenv/versions/3.8.18/bin/python3.8")
CT129_TP2 = ["--model-path", "Qwen/Qwen3.6-27B", "--tp", "2"]


class Agent:
    """One agent process: send requests, wait for messages (a reader thread queues them)."""

    def __init__(self, env: dict[str, str], python: str = sys.executable) -> None:
        self.proc = subprocess.Popen(
            [python, *agent.BOOTSTRAP_ARGS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(agent.bootstrap_payload())
        self.proc.stdin.flush()
        self.inbox: queue.Queue[Message | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.inbox.put(json.loads(line))
        self.inbox.put(None)

    def send(self, **request: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def next(
        self, kind: str, where: Callable[[Message], bool] = lambda m: True, timeout: float = TIMEOUT
    ) -> Message:
        """The next message of type ``kind`` for which ``where`` holds; others are dropped."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                message = self.inbox.get(timeout=max(left, 0.001))
            except queue.Empty:
                raise AssertionError(f"no {kind!r} message within {timeout} s") from None
            if message is None:
                raise AssertionError(f"agent exited before a {kind!r} message: {self.stderr()}")
            if message["type"] == kind and where(message):
                return message

    def request(self, kind: str, **request: object) -> Message:
        self.send(**request)
        return self.next(kind)

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return "(running)"
        return self.proc.stderr.read().decode(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def start_agent() -> Iterator[Callable[..., Agent]]:
    started: list[Agent] = []

    def start(host: SimHost, python: str = sys.executable) -> Agent:
        started.append(Agent(host.env, python))
        return started[-1]

    yield start
    for a in started:
        a.kill()


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Start a process in its own session; its whole process group is killed at teardown."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], env: dict[str, str], **kwargs: Any) -> subprocess.Popen[bytes]:
        kwargs.setdefault("stdout", subprocess.DEVNULL)
        kwargs.setdefault("stderr", subprocess.STDOUT)
        procs.append(
            subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, start_new_session=True, **kwargs)
        )
        return procs[-1]

    yield start
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def hold(spawn: Callable[..., subprocess.Popen[bytes]], host: SimHost, *args: str) -> subprocess.Popen[bytes]:
    """``python -m gdnsim.hold ARGS``, once it holds its memory."""
    proc = spawn([sys.executable, "-m", "gdnsim.hold", *args], host.env, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"
    return proc


def gpu(message: Message, index: int) -> Message:
    return next(g for g in message["gpus"] if g["index"] == index)


def wait_gone(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    proc.kill()
    proc.wait(timeout)


# --- hello and GPUs -----------------------------------------------------------------------------------


def test_hello_describes_the_host(sim_host: SimHostFactory, start_agent: Callable[..., Agent]) -> None:
    host = sim_host(sglang="0.5.23", gpus=2, gpu_mib=49140)
    a = start_agent(host)

    hello = a.request("hello", op="hello")

    assert hello["agent"] == agent.VERSION
    assert hello["hostname"] == socket.gethostname()
    assert hello["python"] == platform.python_version()
    assert hello["pid"] == a.proc.pid
    assert hello["sglang"] == "0.5.23"
    assert hello["nvml"] == {"source": "pynvml", "reason": None}
    assert [g["index"] for g in hello["gpus"]] == [0, 1]
    first = hello["gpus"][0]
    assert set(first) == {"index", "uuid", "name", "compute_capability", "total_mib"}
    assert first["uuid"].startswith("GPU-") and first["uuid"] != hello["gpus"][1]["uuid"]
    assert (first["name"], first["compute_capability"], first["total_mib"]) == (
        "NVIDIA RTX A6000",
        "8.6",
        49140,
    )
    assert hello["boot_time"] > 1e9 and hello["clock_ticks"] > 0


def test_samples_follow_a_process_holding_memory(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], spawn: Callable[..., subprocess.Popen[bytes]]
) -> None:
    host = sim_host(gpus=2, gpu_mib=49140)
    a = start_agent(host)
    a.send(op="sample", interval=0.05)
    idle = a.next("gpus")
    assert [(g["used_mib"], g["free_mib"], g["util_pct"]) for g in idle["gpus"]] == [(BASELINE, 49136, 0)] * 2

    holder = hold(spawn, host, "--gpu", "1", "--mib", "5000", "--util", "40")
    busy = a.next("gpus", lambda m: gpu(m, 1)["used_mib"] == BASELINE + 5000)

    one = gpu(busy, 1)
    assert (one["free_mib"], one["util_pct"], one["errors"]) == (49140 - BASELINE - 5000, 40, {})
    [proc] = one["processes"]
    assert (proc["pid"], proc["used_mib"], proc["name"]) == (holder.pid, 5000, sys.executable)
    assert proc["pgid"] == os.getpgid(holder.pid)  # a server's ranks are known by their group
    assert gpu(busy, 0)["used_mib"] == BASELINE and gpu(busy, 0)["processes"] == []

    wait_gone(holder)
    freed = a.next("gpus", lambda m: gpu(m, 1)["used_mib"] == BASELINE)
    assert gpu(freed, 1)["processes"] == []


def test_without_pynvml_nvidia_smi_answers(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], spawn: Callable[..., subprocess.Popen[bytes]]
) -> None:
    host = sim_host(nvml="absent")
    a = start_agent(host)
    hello = a.request("hello", op="hello")
    assert hello["nvml"]["source"] == "nvidia-smi"
    assert "pynvml" in hello["nvml"]["reason"]
    assert [(g["index"], g["compute_capability"], g["total_mib"]) for g in hello["gpus"]] == [
        (0, "8.6", 49140),
        (1, "8.6", 49140),
    ]

    holder = hold(spawn, host, "--gpu", "0", "--mib", "1234")
    a.send(op="sample", interval=0.05)
    sample = a.next("gpus", lambda m: gpu(m, 0)["used_mib"] == BASELINE + 1234)
    assert sample["nvml"]["source"] == "nvidia-smi"
    assert gpu(sample, 0)["processes"] == [
        {"pid": holder.pid, "used_mib": 1234, "name": sys.executable, "pgid": os.getpgid(holder.pid)}
    ]
    assert gpu(sample, 0)["errors"] == {}


def test_without_pynvml_and_nvidia_smi_there_is_no_source(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent]
) -> None:
    a = start_agent(sim_host(nvml="absent", nvidia_smi=False))
    hello = a.request("hello", op="hello")
    assert hello["nvml"]["source"] == "none"
    assert "pynvml: not installed" in hello["nvml"]["reason"]
    assert "nvidia-smi: exited 9" in hello["nvml"]["reason"]
    assert hello["gpus"] == []
    a.send(op="sample", interval=0.05)
    assert a.next("gpus")["gpus"] == []


def test_nvidia_smi_missing_from_path_is_a_reason(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent]
) -> None:
    host = sim_host(nvml="absent")
    host.env["PATH"] = os.pathsep.join(
        p for p in host.env["PATH"].split(os.pathsep) if p != str(SIM_DIR / "bin")
    )
    if shutil.which("nvidia-smi", path=host.env["PATH"]):
        pytest.skip("this machine has a real nvidia-smi")
    hello = start_agent(host).request("hello", op="hello")
    assert hello["nvml"]["source"] == "none"
    assert "nvidia-smi: not found on PATH" in hello["nvml"]["reason"]


def test_without_a_driver_neither_source_answers(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent]
) -> None:
    hello = start_agent(sim_host(nvml="no-driver")).request("hello", op="hello")
    assert hello["nvml"]["source"] == "none"
    assert "pynvml: NVML init: NVML Shared Library Not Found" in hello["nvml"]["reason"]
    assert "couldn't communicate with the NVIDIA driver" in hello["nvml"]["reason"]


# --- processes ----------------------------------------------------------------------------------------


def start_server(
    spawn: Callable[..., subprocess.Popen[bytes]], host: SimHost, tmp: Path, port: int, entry: str = "module"
) -> subprocess.Popen[bytes]:
    env = {
        **host.env,
        "CUDA_VISIBLE_DEVICES": "0,1",
        "SGLANG_ENABLE_TORCH_COMPILE": "0",
        "SGLANG_API_KEY": "x",
    }
    args = [*CT129_TP2, "--port", str(port)]
    if entry == "module":
        argv = [sys.executable, "-m", "sglang.launch_server", *args]
    else:
        argv = [str(SIM_DIR / "bin" / "sglang"), "serve", *args]
    with (tmp / f"server-{port}.log").open("wb") as log:  # the child has its own copy of the descriptor
        return spawn(argv, env, stdout=log, cwd=tmp)


def find_server(a: Agent, pid: int, children: int) -> Message:
    """The server entry for ``pid`` once it has ``children`` children (asks for a scan until then)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        message = a.request("processes", op="processes")
        for server in message["servers"]:
            if server["pid"] == pid and len(server["children"]) >= children:
                found: Message = server
                return found
    raise AssertionError(f"server {pid} with {children} children not found")


def test_a_server_is_found_with_its_children(
    sim_host: SimHostFactory,
    start_agent: Callable[..., Agent],
    spawn: Callable[..., subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    host = sim_host()
    port = free_port()
    server = start_server(spawn, host, tmp_path, port)
    a = start_agent(host)

    found = find_server(a, server.pid, children=3)

    assert (found["pgid"], found["sid"], found["port"], found["host"]) == (
        server.pid,
        server.pid,
        port,
        "127.0.0.1",
    )
    assert found["ppid"] == os.getpid()
    assert found["cmdline"][1:3] == ["-m", "sglang.launch_server"]
    assert found["cwd"] == str(tmp_path)
    assert found["env"] == {"CUDA_VISIBLE_DEVICES": "0,1", "SGLANG_ENABLE_TORCH_COMPILE": "0"}  # no API key
    assert abs(found["start_time"] - time.time()) < 60
    titles = sorted((c["title"], c["rank"]) for c in found["children"])
    assert titles == [
        ("sglang::detokenizer", None),
        ("sglang::scheduler_TP0", "TP0"),
        ("sglang::scheduler_TP1", "TP1"),
    ]
    for child in found["children"]:
        assert (child["ppid"], child["pgid"]) == (server.pid, server.pid)
        assert child["cmdline"][0] == child["title"]
        assert child["start_time"] >= found["start_time"]


def test_sglang_serve_is_a_server_too(
    sim_host: SimHostFactory,
    start_agent: Callable[..., Agent],
    spawn: Callable[..., subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    host = sim_host()
    port = free_port()
    server = start_server(spawn, host, tmp_path, port, entry="serve")
    found = find_server(start_agent(host), server.pid, children=3)
    assert found["port"] == port
    assert "serve" in found["cmdline"]


def test_decoys_are_not_servers_and_a_stray_rank_is_an_orphan(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], spawn: Callable[..., subprocess.Popen[bytes]]
) -> None:
    host = sim_host()
    grep = spawn(["python3", "-c", "import time;time.sleep(30)", "grep", "sglang.launch_server"], host.env)
    script = spawn(
        [sys.executable, "-c", "import time;time.sleep(30)", "-m", "sglang.launch_server"], host.env
    )
    stray = hold(spawn, host, "--gpu", "0", "--mib", "10", "--title", "sglang::scheduler_TP0")
    a = start_agent(host)

    message = a.request("processes", op="processes")

    server_pids = {s["pid"] for s in message["servers"]}
    assert grep.pid not in server_pids and script.pid not in server_pids and stray.pid not in server_pids
    [orphan] = [o for o in message["orphans"] if o["pid"] == stray.pid]
    assert (orphan["title"], orphan["rank"], orphan["ppid"]) == ("sglang::scheduler_TP0", "TP0", os.getpid())


def test_samples_carry_processes(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], spawn: Callable[..., subprocess.Popen[bytes]]
) -> None:
    host = sim_host()
    stray = hold(spawn, host, "--gpu", "0", "--mib", "10", "--title", "sglang::detokenizer")
    a = start_agent(host)
    a.send(op="sample", interval=0.05)
    a.next("processes", lambda m: any(o["pid"] == stray.pid for o in m["orphans"]))
    wait_gone(stray)
    a.next("processes", lambda m: all(o["pid"] != stray.pid for o in m["orphans"]))


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["python", "-m", "sglang.launch_server", "--model-path", "m"], True),
        (["/opt/conda/bin/python3.10", "-u", "-msglang.launch_server"], True),
        (["python3", "-X", "dev", "-m", "sglang.launch_server"], True),
        (["python3", "/src/sglang/python/sglang/launch_server.py", "--port", "1"], True),
        (["/usr/bin/python3", "/usr/local/bin/sglang", "serve", "--model-path", "m"], True),
        (["sglang", "serve", "--model-path", "m"], True),
        (["python3", "-m", "sglang.bench_serving"], False),
        (["/usr/bin/python3", "/usr/local/bin/sglang", "version"], False),
        (["python3", "-c", "import sglang.launch_server"], False),
        (["grep", "sglang.launch_server"], False),
        (["vim", "sglang/launch_server.py"], False),
        (["sglang::scheduler_TP0"], False),
        (["bash", "-c", "python -m sglang.launch_server"], False),
        ([], False),
    ],
)
def test_what_counts_as_a_server(argv: list[str], expected: bool) -> None:
    assert agent.is_server(argv) is expected


@pytest.mark.parametrize(
    ("argv", "title", "rank"),
    [
        (["sglang::scheduler_TP0", "-c", "x"], "sglang::scheduler_TP0", "TP0"),
        (["sglang::scheduler_DP0_TP1_EP1"], "sglang::scheduler_DP0_TP1_EP1", "DP0_TP1_EP1"),
        (["sglang::scheduler_PP1_TP0      "], "sglang::scheduler_PP1_TP0", "PP1_TP0"),
        (["sglang::scheduler"], "sglang::scheduler", None),
        (["sglang::detokenizer"], "sglang::detokenizer", None),
        (["python", "sglang::scheduler_TP0"], None, None),
    ],
)
def test_titles_and_ranks(argv: list[str], title: str | None, rank: str | None) -> None:
    assert agent.title_of(argv) == title
    assert (agent.rank_of(title) if title else None) == rank


def test_port_and_host_from_the_command_line() -> None:
    assert agent.server_port(["python", "-m", "sglang.launch_server"]) == 30000
    assert agent.server_port(["x", "--port", "8000", "--port=8001"]) == 8001
    assert agent.server_port(["x", "--port", "nope"]) is None
    assert agent.option_value(["x", "--host", "0.0.0.0"], "--host") == "0.0.0.0"


def test_the_process_table_rereads_only_young_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    reads: list[int] = []
    argvs = {1: ["init"], 2: ["python", "-c", "spawn_main"]}
    monkeypatch.setattr(agent, "list_pids", lambda: list(argvs))

    def read_argv(pid: int) -> list[str]:
        reads.append(pid)
        return list(argvs[pid])

    monkeypatch.setattr(agent, "read_argv", read_argv)
    table = agent.ProcessTable(clock=lambda: now[0])

    assert table.scan() == argvs and sorted(reads) == [1, 2]
    now[0] += agent.PROC_YOUNG_S  # both are old now; the last full rescan is long past
    reads.clear()
    table.scan()
    assert sorted(reads) == [1, 2]
    now[0] += 1
    reads.clear()
    argvs[2] = ["sglang::scheduler_TP0"]  # a late title: seen at the next full rescan
    argvs[3] = ["new"]
    assert table.scan()[2] == ["python", "-c", "spawn_main"]
    assert reads == [3]
    now[0] += agent.PROC_FULL_RESCAN_S
    assert table.scan()[2] == ["sglang::scheduler_TP0"]


# --- following a log ----------------------------------------------------------------------------------


def lines(start: int, stop: int) -> bytes:
    return b"".join(b"line %06d\n" % i for i in range(start, stop))


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def collect(a: Agent, path: Path, end: int, timeout: float = TIMEOUT) -> tuple[bytes, list[Message]]:
    """Log data until byte ``end`` of the file; every message must start where the last one ended."""
    messages: list[Message] = []
    data = b""
    while not messages or messages[-1]["end"] < end:
        message = a.next("log", timeout=timeout)
        assert message["path"] == str(path)
        if messages:
            assert message["offset"] == messages[-1]["end"]
        messages.append(message)
        data += message["data"].encode()
    return data, messages


def following(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path, count: int
) -> tuple[Agent, Path]:
    """An agent following a log of ``count`` lines, all of them read already."""
    log = tmp_path / "serve.log"
    log.write_bytes(lines(0, count))
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=0, inode=None)
    collect(a, log, len(lines(0, count)))
    return a, log


def test_following_from_an_offset_sends_each_line_once_in_order(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(lines(0, 10))
    offset = len(lines(0, 3))
    a = start_agent(sim_host())

    a.send(op="follow", path=str(log), offset=offset, inode=log.stat().st_ino)
    data, messages = collect(a, log, len(lines(0, 10)))
    assert messages[0]["offset"] == offset
    assert messages[0]["inode"] == log.stat().st_ino
    assert data == lines(3, 10)

    for start in range(10, 400, 30):
        append(log, lines(start, start + 30))
    data, _ = collect(a, log, len(lines(0, 400)))
    assert data == lines(10, 400)


def test_a_partial_line_waits_for_its_newline(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(b"first\nsec")
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=0, inode=None)

    message = a.next("log")
    assert (message["data"], message["offset"], message["end"], message["size"]) == ("first\n", 0, 6, 9)
    append(log, b"ond\nthi")
    message = a.next("log")
    assert (message["data"], message["offset"], message["end"]) == ("second\n", 6, 13)


def test_a_line_over_a_mebibyte_is_sent_without_its_newline(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    long_line = "é" * (agent.LOG_LINE_MAX // 2 + 10)  # two bytes each: the cut must not split one
    log.write_bytes(long_line.encode())
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=0, inode=None)
    head, _ = collect(a, log, agent.LOG_LINE_MAX)
    assert len(head) == agent.LOG_LINE_MAX  # an even cut: no "é" split

    append(log, b"\n")  # the rest of the line was held for its newline
    tail, _ = collect(a, log, len(long_line.encode()) + 1)
    assert (head + tail).decode() == long_line + "\n"


def test_truncation_is_reported_and_followed_from_zero(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    a, log = following(sim_host, start_agent, tmp_path, 50)

    with log.open("r+b") as fh:
        fh.truncate(0)
        fh.write(b"after truncate\n")
    reset = a.next("log_reset")
    assert (reset["reason"], reset["inode"], reset["path"]) == ("truncated", log.stat().st_ino, str(log))
    message = a.next("log")
    assert (message["offset"], message["data"]) == (0, "after truncate\n")


def test_a_replaced_file_is_reported_and_followed_from_zero(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    a, log = following(sim_host, start_agent, tmp_path, 5)

    fresh = tmp_path / "fresh.log"
    fresh.write_bytes(lines(0, 100))  # longer than the old file: only the inode tells
    os.replace(fresh, log)
    reset = a.next("log_reset")
    assert (reset["reason"], reset["inode"]) == ("replaced", log.stat().st_ino)
    data, messages = collect(a, log, len(lines(0, 100)))
    assert messages[0]["offset"] == 0 and data == lines(0, 100)


def test_a_missing_file_is_reported_and_followed_when_it_appears(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    log = tmp_path / "later.log"
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=0, inode=None)
    missing = a.next("log_reset")
    assert (missing["reason"], missing["inode"]) == ("missing", None)

    log.write_bytes(b"hello\n")
    appeared = a.next("log_reset")
    assert (appeared["reason"], appeared["inode"]) == ("appeared", log.stat().st_ino)
    assert a.next("log")["data"] == "hello\n"

    with log.open("ab") as writer:  # deleted while its writer writes on: what it writes is still read
        log.unlink()
        writer.write(b"after the delete\n")
    assert a.next("log")["data"] == "after the delete\n"
    log.write_bytes(b"recreated\n")
    replaced = a.next("log_reset")
    assert (replaced["reason"], replaced["inode"]) == ("replaced", log.stat().st_ino)
    assert a.next("log")["data"] == "recreated\n"


def test_copytruncate_then_more_than_the_old_file_held_loses_no_line(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    a, log = following(sim_host, start_agent, tmp_path, 14)

    with log.open("r+b") as fh:  # within one poll: truncated, then more bytes than the old file held
        fh.truncate(0)
        fh.write(lines(14, 40))
    assert a.next("log_reset")["reason"] == "truncated"
    data, messages = collect(a, log, len(lines(14, 40)))
    assert messages[0]["offset"] == 0 and data == lines(14, 40)


def test_a_renamed_log_is_finished_and_followed_while_the_new_one_is_empty(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    a, log = following(sim_host, start_agent, tmp_path, 5)

    with log.open("ab") as server:  # its stdout: it keeps writing to the file it opened
        log.rename(tmp_path / "serve.log.1")
        log.write_bytes(b"")  # logrotate's `create`
        server.write(lines(5, 9))
        server.flush()
        data, _ = collect(a, log, len(lines(0, 9)))
        assert data == lines(5, 9)
        server.write(b"unfinished")
        server.flush()
        log.write_bytes(b"new file\n")  # a writer uses the new file now: the old one is finished first
        last = a.next("log")
        assert (last["data"], last["offset"]) == ("unfinished", len(lines(0, 9)))
    reset = a.next("log_reset")
    assert (reset["reason"], reset["inode"]) == ("replaced", log.stat().st_ino)
    assert a.next("log")["data"] == "new file\n"


def test_the_nul_hole_of_a_copytruncate_is_skipped(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    a, log = following(sim_host, start_agent, tmp_path, 100)

    held = len(lines(0, 100))
    with log.open("r+b") as fh:  # copytruncate, and a writer without O_APPEND writes at its own offset
        fh.truncate(0)
        fh.seek(held + 10)
        fh.write(b"after the hole\n")
    assert a.next("log_reset")["reason"] == "truncated"
    message = a.next("log")
    assert (message["data"], message["offset"], message["end"]) == ("after the hole\n", 0, held + 25)


def test_a_new_agent_resumes_exactly_where_the_last_one_stopped(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    host = sim_host()
    log = tmp_path / "serve.log"
    log.write_bytes(lines(0, 20))
    first = start_agent(host)
    first.send(op="follow", path=str(log), offset=0, inode=None)
    seen, messages = collect(first, log, len(lines(0, 20)))
    end, inode = messages[-1]["end"], messages[-1]["inode"]
    first.proc.stdin.close()  # type: ignore[union-attr]
    first.proc.wait(10)

    append(log, lines(20, 70))
    second = start_agent(host)
    second.send(op="follow", path=str(log), offset=end, inode=inode)
    rest, messages = collect(second, log, len(lines(0, 70)))
    assert messages[0]["offset"] == end
    assert seen + rest == log.read_bytes()


def test_resuming_with_another_inode_starts_from_zero(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(lines(0, 20))
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=len(lines(0, 10)), inode=log.stat().st_ino + 1)
    assert a.next("log_reset")["reason"] == "replaced"
    data, _ = collect(a, log, len(lines(0, 20)))
    assert data == lines(0, 20)


def test_an_offset_past_the_end_means_truncated(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(lines(0, 2))
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=10_000, inode=log.stat().st_ino)
    assert a.next("log_reset")["reason"] == "truncated"
    assert a.next("log")["data"].encode() == lines(0, 2)


def test_invalid_utf8_is_replaced(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(b"ok \xff\xfe bad\n\xe2\x82\n")
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=0, inode=None)
    message = a.next("log")
    assert message["data"] == "ok \ufffd\ufffd bad\n\ufffd\n"
    assert message["end"] == 13
    assert a.request("pong", op="ping", id=1)["id"] == 1


def test_a_burst_arrives_complete_in_batches(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(b"")
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=0, inode=None)
    burst = lines(0, 5_000_000 // 12)
    append(log, burst)

    data, messages = collect(a, log, len(burst))

    assert data == burst
    assert len(messages) >= len(burst) // agent.LOG_READ_MAX
    assert max(len(m["data"]) for m in messages) <= agent.LOG_READ_MAX


def test_unfollow_stops_and_another_follow_switches_files(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    one, two = tmp_path / "one.log", tmp_path / "two.log"
    one.write_bytes(b"one\n")
    two.write_bytes(b"two\n")
    a = start_agent(sim_host())
    a.send(op="follow", path=str(one), offset=0, inode=None)
    assert a.next("log")["data"] == "one\n"
    a.send(op="follow", path=str(two), offset=0, inode=None)
    assert a.next("log")["data"] == "two\n"
    a.send(op="unfollow")
    append(two, b"more\n")
    a.send(op="follow", path=str(one), offset=4, inode=None)
    append(one, b"again\n")
    message = a.next("log")
    assert (message["path"], message["data"]) == (str(one), "again\n")  # nothing more from two


class Captured(agent.Writer):
    """The agent's writer, keeping each message (its raw bytes under "payload") instead of writing it."""

    def __init__(self) -> None:
        self.messages: queue.Queue[Message] = queue.Queue()

    def send(self, message: dict[str, Any], payload: bytes = b"") -> None:
        self.messages.put({**message, "payload": payload})

    def next_log(self) -> Message:
        while True:
            message = self.messages.get(timeout=TIMEOUT)
            if message["type"] == "log":
                return message


def test_a_write_wakes_the_follower_where_no_poll_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Linux a write to the followed file wakes the agent (inotify): here no poll comes after the first
    look, so only the wake can bring the second line. The agent runs in this process, its loop in a thread."""
    monkeypatch.setattr(agent, "LOG_POLL_S", 3600.0)
    monkeypatch.setattr(agent, "LOG_POLL_IDLE_S", 3600.0)
    log = tmp_path / "serve.log"
    log.write_bytes(b"first\n")
    writer, inbox = Captured(), queue.Queue[bytes]()
    waker = agent.Waker(inbox)
    a = agent.Agent(writer, waker.wake)
    if a.growth is None or a.growth.fd < 0:
        pytest.skip("no inotify on this system: the agent polls alone")
    loop = threading.Thread(target=agent.serve, args=(a, inbox, waker), daemon=True)
    loop.start()
    try:
        inbox.put(json.dumps({"op": "follow", "path": str(log), "offset": 0, "raw": True}).encode() + b"\n")
        assert writer.next_log()["payload"] == b"first\n"
        append(log, b"second\n")
        woken = writer.next_log()
        assert (woken["offset"], woken["payload"]) == (6, b"second\n")
    finally:
        inbox.put(agent.EOF)
        loop.join(TIMEOUT)
        a.close()


@pytest.mark.parametrize(
    ("data", "end", "cut"),
    [
        (b"ab", 2, 2),
        ("aé".encode(), 2, 1),
        ("a€".encode(), 3, 1),
        ("a€".encode(), 4, 4),
        ("😀".encode(), 3, 0),
    ],
)
def test_utf8_cut(data: bytes, end: int, cut: int) -> None:
    assert agent.utf8_cut(data, end) == cut


# --- requests, errors, exit ---------------------------------------------------------------------------


def test_ping_pong_and_errors(sim_host: SimHostFactory, start_agent: Callable[..., Agent]) -> None:
    a = start_agent(sim_host())
    pong = a.request("pong", op="ping", id=7)
    assert pong["id"] == 7 and abs(pong["t"] - time.time()) < 60

    error = a.request("error", op="reboot")
    assert (error["op"], error["message"]) == ("reboot", "unknown op 'reboot'")
    a.send_raw(b"not json\n")
    assert a.next("error")["op"] is None
    a.send_raw(b"[1, 2]\n")
    assert "JSON object" in a.next("error")["message"]
    assert a.request("error", op="sample", interval="fast")["op"] == "sample"
    assert a.request("error", op="follow", path="")["op"] == "follow"
    assert a.request("error", op="follow", path="/x", offset=-1)["op"] == "follow"
    assert a.request("pong", op="ping", id=8)["id"] == 8  # still alive


def test_sampling_stops_at_interval_zero(sim_host: SimHostFactory, start_agent: Callable[..., Agent]) -> None:
    a = start_agent(sim_host())
    a.send(op="sample", interval=0.02)
    a.next("gpus")
    a.send(op="sample", interval=0)
    a.send(op="ping", id="after")
    a.next("pong")
    a.send(op="ping", id="later")
    while True:  # whatever was queued before the pong, nothing after it
        message = a.next("pong")
        if message["id"] == "later":
            break
    with pytest.raises(queue.Empty):
        while True:
            left = a.inbox.get(timeout=0.3)
            assert left is not None and left["type"] != "gpus"


def test_eof_ends_the_agent_while_it_follows_and_samples(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(lines(0, 10))
    a = start_agent(sim_host())
    a.send(op="sample", interval=0.05)
    a.send(op="follow", path=str(log), offset=0, inode=None)
    a.next("log")
    a.next("gpus")

    a.proc.stdin.close()  # type: ignore[union-attr]
    assert a.proc.wait(5) == 0


def test_eof_ends_an_idle_agent(sim_host: SimHostFactory, start_agent: Callable[..., Agent]) -> None:
    a = start_agent(sim_host())
    a.request("pong", op="ping", id=1)
    a.proc.stdin.close()  # type: ignore[union-attr]
    assert a.proc.wait(5) == 0


# --- the file itself ----------------------------------------------------------------------------------


def test_the_agent_imports_only_the_standard_library() -> None:
    tree = ast.parse(Path(agent.__file__).read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    assert names - sys.stdlib_module_names == {"pynvml"}  # optional, imported where present


def test_the_payload_is_length_and_source() -> None:
    payload = agent.bootstrap_payload()
    length, _, source = payload.partition(b"\n")
    assert int(length) == len(source)
    assert source == Path(agent.__file__).read_bytes()


@pytest.mark.skipif(not PY38.exists(), reason="no Python 3.8 here")
def test_the_agent_runs_on_python_38(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    # The simulator's pynvml needs 3.11, so under 3.8 it fails to import and nvidia-smi answers.
    a = start_agent(sim_host(sglang="0.5.23"), python=str(PY38))
    hello = a.request("hello", op="hello")
    assert (hello["python"][:4], hello["sglang"], hello["nvml"]["source"]) == ("3.8.", "0.5.23", "nvidia-smi")
    log = tmp_path / "serve.log"
    log.write_bytes(b"a\n")
    a.send(op="follow", path=str(log), offset=0, inode=None)
    assert a.next("log")["data"] == "a\n"
    a.request("processes", op="processes")
    a.proc.stdin.close()  # type: ignore[union-attr]
    assert a.proc.wait(5) == 0


def test_the_sglang_version_from_a_dist_info_name(tmp_path: Path) -> None:
    (tmp_path / "sglang_router-0.2.0.dist-info").mkdir()
    (tmp_path / "sglang-0.5.11.dist-info").mkdir()
    assert agent.sglang_version_from_path([str(tmp_path / "none"), str(tmp_path)]) == "0.5.11"
    assert agent.sglang_version_from_path([str(tmp_path / "none")]) is None


# --- NVML failures, in-process with a stand-in module ---------------------------------------------------


class FakeNvml:
    """Enough of pynvml for NvmlSource: two GPUs; ``broken`` names calls that raise."""

    def __init__(self) -> None:
        self.broken: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)

    def _call(self, name: str, value: Any) -> Any:
        if name in self.broken:
            raise RuntimeError(f"{name} failed")
        return value

    def nvmlInit(self) -> None:
        pass

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetUUID(self, h: int) -> bytes:
        return f"GPU-{h}".encode()  # older bindings answer bytes

    def nvmlDeviceGetName(self, h: int) -> Any:
        return self._call("name", "H200")

    def nvmlDeviceGetCudaComputeCapability(self, h: int) -> tuple[int, int]:
        return (9, 0)

    def nvmlDeviceGetMemoryInfo(self, h: int) -> Any:
        return self._call(
            "memory",
            type("M", (), {"total": 1000 * agent.MIB, "used": 10 * agent.MIB, "free": 990 * agent.MIB}),
        )

    def nvmlDeviceGetUtilizationRates(self, h: int) -> Any:
        return self._call("util", type("U", (), {"gpu": 5}))

    def nvmlDeviceGetComputeRunningProcesses(self, h: int) -> Any:
        return self._call("procs", [type("P", (), {"pid": os.getpid(), "usedGpuMemory": None})])


@pytest.fixture
def fake_nvml(monkeypatch: pytest.MonkeyPatch) -> FakeNvml:
    fake = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    return fake


def test_a_failing_nvml_field_is_null_with_its_error(fake_nvml: FakeNvml) -> None:
    gpus = agent.Gpus()
    fake_nvml.broken = {"util", "procs"}
    [first, _] = gpus.sample()
    assert (first["uuid"], first["name"], first["compute_capability"]) == ("GPU-0", "H200", "9.0")
    assert (first["used_mib"], first["free_mib"], first["util_pct"], first["processes"]) == (
        10,
        990,
        None,
        [],
    )
    assert first["errors"] == {"util_pct": "util failed", "processes": "procs failed"}
    fake_nvml.broken = set()
    [first, _] = gpus.sample()
    assert first["processes"] == [
        {"pid": os.getpid(), "used_mib": None, "name": agent.process_name(os.getpid()), "pgid": os.getpgid(0)}
    ]


def test_nvml_that_stops_answering_falls_back_to_nvidia_smi(
    fake_nvml: FakeNvml, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no nvidia-smi either: the end of the line is "none"
    gpus = agent.Gpus()
    assert gpus.describe() == {"source": "pynvml", "reason": None}
    fake_nvml.broken = {"memory", "util"}
    assert gpus.sample() == []
    described = gpus.describe()
    assert described["source"] == "none"
    assert "pynvml: NVML stopped answering" in described["reason"]
    assert "nvidia-smi: not found on PATH" in described["reason"]


def test_a_fifo_is_not_followed(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    fifo = tmp_path / "serve.log"
    os.mkfifo(fifo)
    a = start_agent(sim_host())
    a.send(op="follow", path=str(fifo), offset=0, inode=None)
    reset = a.next("log_reset")
    assert (reset["reason"], reset["message"]) == ("missing", "not a regular file")
    assert a.request("pong", op="ping", id=2)["id"] == 2  # not blocked in open()
