"""HostSession against real links: a local agent, an in-process asyncssh server, OpenSSH's sshd, and an
sshd in a network namespace whose link is cut. The simulated GPU host stands behind every one of them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gdnconsole.chat.model import Health
from gdnconsole.cli.status import session_json
from gdnconsole.config.hosts import Host, Profile, Simulate
from gdnconsole.config.hosts import SshTarget as ConfigSshTarget
from gdnconsole.host import launcher, serving, simulated
from gdnconsole.host import session as session_module
from gdnconsole.host.link import LinkState, LocalAgent, SshTarget
from gdnconsole.host.serving import ProbeTiming
from gdnconsole.host.session import HostSession
from tests.sshhosts import AsyncsshHost, NetnsHost, SshdHost
from tests.sshhosts import free_loopback_port as free_port

FAST_BACKOFF = (0.05, 0.1, 0.2)
CT129_ARGS = [
    "--model-path", "Qwen/Qwen3.6-27B", "--tp", "2", "--speculative-algorithm", "NEXTN",
    "--speculative-num-steps", "1", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2",
    "--mamba-scheduler-strategy", "extra_buffer",
]  # fmt: skip


def sim_host(
    tmp_path: Path, ssh: SshdHost | None = None, python: str = sys.executable, **table: object
) -> Host:
    """A simulated GPU host whose files live in tmp_path, reached locally or over ``ssh``."""
    sim: dict[str, object] = {"speed": 50.0, "release_lag_s": 0.0, "home": str(tmp_path / "simhome"), **table}
    port = free_port()
    return Host(
        name="simbox",
        ssh=ConfigSshTarget(
            alias=f"{ssh.user}@{ssh.host}:{ssh.port}", user=ssh.user, hostname=ssh.host, port=ssh.port
        )
        if ssh
        else None,
        local=ssh is None,
        python=python,
        log="sglang_serve.log",
        profiles={"p": Profile(name="p", model="Qwen/Qwen3.6-27B", tp=2, port=port)},
        simulate=Simulate(
            gpus=2,
            gpu_name="NVIDIA RTX A6000",
            gpu_mib=49140,
            sglang=str(sim.get("sglang", "0.5.11")),
            speed=50.0,
            ffmpeg=True,
            scenario="ok",
            table=sim,
        ),
    )


def target(ssh: SshdHost, **overrides: object) -> SshTarget:
    options: dict[str, object] = {
        "host": ssh.host,
        "port": ssh.port,
        "user": ssh.user,
        "known_hosts": ssh.known_hosts,
        "client_keys": (ssh.client_key,),
        "ssh_config": ssh.ssh_config,
    }
    options.update(overrides)
    return SshTarget(**options)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def running(session: HostSession):
    task = asyncio.create_task(session.run())
    try:
        yield session
    finally:
        await session.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@pytest.fixture
def sim_server() -> Iterator:
    """Start the simulated SGLang server on a host (in its workdir, log redirected as an operator does)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(host: Host) -> subprocess.Popen[bytes]:
        env = {**os.environ, **simulated.environment(host)}
        workdir = simulated.workdir(host)
        profile = host.profile
        assert profile is not None
        with (workdir / host.log).open("wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "sglang.launch_server", *CT129_ARGS, "--port", str(profile.port)],
                env=env,
                cwd=workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


async def test_local_host_sees_gpus_server_ranks_and_stages(tmp_path: Path, sim_server) -> None:
    host = sim_host(tmp_path)
    session = HostSession(host, sample_interval=0.1, backoff=FAST_BACKOFF)
    async with running(session):
        assert await session.wait_until(lambda: session.gpus_seen, 20)
        assert session.link is LinkState.CONNECTED and session.hello is not None
        assert session.hello.sglang == "0.5.11" and session.nvml_source == "pynvml"
        assert [g.name for g in session.gpus] == ["NVIDIA RTX A6000"] * 2
        server = sim_server(host)

        def ready() -> bool:
            startup = session.log.tracker.current
            return bool(
                startup
                and startup.ready
                and session.server
                and session.placements()
                and all(p.evidence == "nvml" for p in session.placements())
            )

        assert await session.wait_until(ready, 30)
        status = session_json(session)
        assert status["server"]["pid"] == server.pid and status["server"]["stage"] in ("ready", "serving")
        assert {g["rank"] for g in status["gpus"]} == {"TP0", "TP1"}
        assert all(g["used_mib"] > 20_000 for g in status["gpus"])


async def test_a_server_healthy_before_its_log_says_ready_is_verified_when_it_does(
    tmp_path: Path, sim_server
) -> None:
    # The ready line comes 3 s after /health answers 200 (room for a busy machine to see the 200 first);
    # a healthy server is polled every 10 minutes here: the verification must go out when the line
    # arrives, not at the next healthy poll.
    host = sim_host(tmp_path, ready_log_lag_s=3.0)
    probe = ProbeTiming(backoff=FAST_BACKOFF, healthy_every=600.0, health_timeout=5.0)
    session = HostSession(host, sample_interval=0.1, backoff=FAST_BACKOFF, probe=probe)
    async with running(session):
        assert await session.wait_until(lambda: session.link is LinkState.CONNECTED, 20)
        sim_server(host)
        assert await session.wait_until(lambda: session.serving.health is Health.OK, 30)
        startup = session.log.tracker.current
        assert startup is None or not startup.ready  # healthy, and not ready as far as the log says
        assert await session.wait_until(lambda: session.serving.verified is True, 30), session.serving


async def test_simulated_hosts_on_one_machine_see_only_their_own_servers(tmp_path: Path, sim_server) -> None:
    ours = sim_host(tmp_path / "a")
    theirs = sim_host(tmp_path / "b")
    server = sim_server(theirs)
    session = HostSession(ours, sample_interval=0.1, backoff=FAST_BACKOFF)
    other = HostSession(theirs, sample_interval=0.1, backoff=FAST_BACKOFF)
    async with running(session), running(other):
        assert await other.wait_until(lambda: bool(other.server and other.server.pid == server.pid), 30)
        assert await session.wait_until(lambda: session.processes_seen, 10)
        assert session.server is None and session.orphans == ()


async def test_over_real_sshd(tmp_path: Path, sshd: SshdHost) -> None:
    host = sim_host(tmp_path, ssh=sshd)
    session = HostSession(host, ssh=target(sshd), sample_interval=0.1, backoff=FAST_BACKOFF)
    async with running(session):
        assert await session.wait_until(lambda: session.complete, 20), session.link_message
        status = session_json(session)
        assert status["link"] == "connected" and status["sglang_version"] == "0.5.11"
        assert len(status["gpus"]) == 2
        assert await session.wait_until(lambda: session.rtt_ms is not None, 10)


async def test_unknown_host_is_not_connected_until_accepted(tmp_path: Path, sshd: SshdHost) -> None:
    known = tmp_path / "known_hosts"
    host = sim_host(tmp_path, ssh=sshd)
    session = HostSession(host, ssh=target(sshd, known_hosts=known), backoff=FAST_BACKOFF)
    async with running(session):
        assert await session.wait_until(lambda: session.link is LinkState.UNKNOWN_HOST, 10)
    assert session.hello is None and not known.exists()
    assert session.fingerprint and session.fingerprint.startswith("SHA256:")
    assert session.fingerprint in (session.link_message or "")
    with pytest.raises(ValueError):
        session.accept_host_key("SHA256:not-the-offered-key")
    session.accept_host_key(session.fingerprint)
    assert known.read_text().startswith(f"[{sshd.host}]:{sshd.port} ssh-ed25519 ")
    async with running(session):
        assert await session.wait_until(lambda: session.link is LinkState.CONNECTED, 10), session.link_message


async def test_run_ends_at_once_when_the_link_needs_the_user(tmp_path: Path, sshd: SshdHost) -> None:
    """An unknown host key ends run() (with its prober) at once: the dashboard asks, then runs it again."""
    known = tmp_path / "known_hosts"
    session = HostSession(
        sim_host(tmp_path, ssh=sshd), ssh=target(sshd, known_hosts=known), backoff=FAST_BACKOFF
    )
    await asyncio.wait_for(session.run(), 10)
    assert session.link is LinkState.UNKNOWN_HOST


async def test_changed_host_key_is_refused(tmp_path: Path, asyncssh_host: AsyncsshHost) -> None:
    await asyncssh_host.restart(new_host_key=True)  # known_hosts still holds the first key
    before = asyncssh_host.known_hosts.read_text()
    session = HostSession(
        sim_host(tmp_path, ssh=asyncssh_host), ssh=target(asyncssh_host), backoff=FAST_BACKOFF
    )
    async with running(session):
        assert await session.wait_until(lambda: session.link is LinkState.HOST_KEY_REFUSED, 10)
    assert "CHANGED" in (session.link_message or "") and session.hello is None
    assert asyncssh_host.known_hosts.read_text() == before


async def test_wrong_key_is_auth_failed(tmp_path: Path, sshd: SshdHost) -> None:
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    session = HostSession(
        sim_host(tmp_path, ssh=sshd), ssh=target(sshd, client_keys=(other,)), backoff=FAST_BACKOFF
    )
    async with running(session):
        assert await session.wait_until(lambda: session.link is LinkState.AUTH_FAILED, 10)
    assert session_json(session)["link"] == "auth-failed"


async def test_host_without_python_says_so(tmp_path: Path, sshd: SshdHost) -> None:
    host = sim_host(tmp_path, ssh=sshd, python="/nonexistent/python3")
    session = HostSession(host, ssh=target(sshd), backoff=FAST_BACKOFF)
    async with running(session):
        assert await session.wait_until(lambda: session.link is LinkState.NO_AGENT, 10)
    message = session.link_message or ""
    assert "/nonexistent/python3" in message and "exit status 127" in message
    assert session_json(session)["link"] == "down"


async def test_a_local_python_that_exits_at_once_says_so(tmp_path: Path) -> None:
    # /bin/true takes the agent's arguments and exits without reading its code: the session task died
    # of "Connection lost" while the status bar said "connecting…" for ever.
    session = HostSession(sim_host(tmp_path, python="/bin/true"), backoff=FAST_BACKOFF)
    async with running(session):
        assert await session.wait_until(lambda: session.link is LinkState.NO_AGENT, 10), session.link
    message = session.link_message or ""
    assert "the agent did not start on simbox (exit status " in message and "'/bin/true'" in message


@pytest.mark.parametrize(
    ("table", "source"),
    [({"nvml": "absent"}, "nvidia-smi"), ({"nvml": "absent", "nvidia_smi": False}, "none")],
)
async def test_without_nvml(tmp_path: Path, table: dict[str, object], source: str) -> None:
    session = HostSession(sim_host(tmp_path, **table), sample_interval=0.1, backoff=FAST_BACKOFF)
    async with running(session):
        assert await session.wait_until(lambda: session.complete, 20)
    assert session.nvml_source == source
    if source == "none":
        assert session.gpus == () and session.hello is not None and session.hello.nvml.reason
    else:
        assert len(session.gpus) == 2


async def test_log_resumes_at_the_exact_byte_across_twenty_drops(
    tmp_path: Path, asyncssh_host: AsyncsshHost
) -> None:
    host = sim_host(tmp_path, ssh=asyncssh_host)
    workdir = simulated.workdir(host)
    simulated.environment(host)
    log = workdir / host.log
    log.write_text("")
    mirror = tmp_path / "mirror.log"
    session = HostSession(
        host, ssh=target(asyncssh_host), sample_interval=0.2, backoff=FAST_BACKOFF, mirror=mirror
    )
    written = 0
    async with running(session):
        assert await session.wait_until(lambda: session.link is LinkState.CONNECTED, 10)
        for drop in range(20):
            with log.open("a") as fh:
                for _ in range(50):
                    written += 1
                    fh.write(f"[2026-11-30 10:00:00 TP0] seq {written:06d} " + "x" * (written % 97) + "\n")
            if drop % 2:
                await session.wait_until(lambda n=written: session.log.lines >= n - 25, 10)
            connects = session.connects
            asyncssh_host.drop_connections()
            assert await session.wait_until(
                lambda c=connects: session.connects > c and session.link is LinkState.CONNECTED, 15
            ), session.link_message
        assert await session.wait_until(lambda: session.log.lines == written, 15)
    numbers = [int(line.split("seq ")[1][:6]) for line in session.log.recent(100_000)]
    assert numbers == list(range(1, written + 1))
    assert session.log.offset == log.stat().st_size and session.connects >= 21
    assert mirror.read_bytes() == log.read_bytes()  # the local copy the dashboard pages through


async def test_a_cut_link_is_noticed_while_it_is_down_and_the_session_reconnects_after(
    tmp_path: Path, netns_host: NetnsHost
) -> None:
    """Only keepalive can notice a silent cut (TCP alone waits minutes), so the session must say the link
    is down before it comes back; then it reconnects and gets the line written meanwhile. How long the
    notice takes is measured by bench/bench_keepalive.py, not asserted here."""
    host = sim_host(tmp_path, ssh=netns_host, python="python3")
    simulated.environment(host)
    log = simulated.workdir(host) / host.log
    log.write_text("[2026-11-30 10:00:00] before\n")
    ssh = target(netns_host, keepalive_interval=0.5, keepalive_count_max=2)
    session = HostSession(host, ssh=ssh, sample_interval=0.2, backoff=FAST_BACKOFF)
    events: list[str] = []
    session.subscribe(lambda topic: topic == "link" and events.append(f"link {session.link.value}"))
    async with running(session):
        assert await session.wait_until(
            lambda: session.link is LinkState.CONNECTED and session.log.lines == 1, 15
        )
        events.append("cut")
        netns_host.link_down()
        try:
            assert await session.wait_until(lambda: session.link is not LinkState.CONNECTED, 30)
            with log.open("a") as fh:
                fh.write("[2026-11-30 10:00:01] while down\n")
        finally:
            events.append("restored")
            netns_host.link_up()
        assert await session.wait_until(
            lambda: session.link is LinkState.CONNECTED and session.log.lines == 2, 30
        ), session.link_message
    connected = f"link {LinkState.CONNECTED.value}"
    while_down = events[events.index("cut") + 1 : events.index("restored")]
    assert [e for e in while_down if e != connected], events  # noticed before the link came back
    assert events[-1] == connected, events  # and connected again after it
    assert session.log.recent()[-1].endswith("while down")


async def test_a_busy_log_arrives_whole_over_a_local_link(tmp_path: Path) -> None:
    """Agent messages carry up to 256 KiB of log text: far past asyncio's default 64 KiB line limit."""
    host = sim_host(tmp_path)
    simulated.environment(host)
    log = simulated.workdir(host) / host.log
    line = "[2026-11-30 10:00:00 TP0] Decode batch, #running-req: 1, #token: 9, token usage: 0.00, cuda graph: True, gen throughput (token/s): 9.00, #queue-req: 0\n"
    log.write_text(line * 40_000)  # ~6 MB
    mirror = tmp_path / "mirror.log"
    session = HostSession(host, sample_interval=0.5, backoff=FAST_BACKOFF, mirror=mirror)
    async with running(session):
        assert await session.wait_until(lambda: session.log.offset == log.stat().st_size, 30)
    assert session.log.lines == 40_000 and mirror.stat().st_size == log.stat().st_size
    assert session.log.tracker.current is not None and session.log.tracker.current.gen_throughput == 9.0


async def test_twenty_link_cuts_lose_and_repeat_no_line(tmp_path: Path, netns_host: NetnsHost) -> None:
    """The link really goes down (veth down), twenty times, while the host keeps writing numbered lines."""
    host = sim_host(tmp_path, ssh=netns_host, python="python3")
    simulated.environment(host)
    log = simulated.workdir(host) / host.log
    log.write_text("")
    ssh = target(netns_host, keepalive_interval=0.2, keepalive_count_max=2)
    session = HostSession(host, ssh=ssh, sample_interval=0.5, backoff=FAST_BACKOFF)
    written = 0
    async with running(session):
        assert await session.wait_until(lambda: session.link is LinkState.CONNECTED, 15)
        for _ in range(20):
            connects = session.connects
            netns_host.link_down()
            try:
                assert await session.wait_until(lambda: session.link is not LinkState.CONNECTED, 5)
                with log.open("a") as fh:  # written while the console cannot see the host
                    for _ in range(25):
                        written += 1
                        fh.write(f"[2026-11-30 10:00:00] seq {written:06d}\n")
            finally:
                netns_host.link_up()
            assert await session.wait_until(
                lambda c=connects: session.connects > c and session.link is LinkState.CONNECTED, 20
            ), session.link_message
        assert await session.wait_until(lambda: session.log.lines == written, 15)
    numbers = [int(line.split("seq ")[1]) for line in session.log.recent(10_000)]
    assert numbers == list(range(1, written + 1))


def test_a_listener_can_unsubscribe_even_while_it_is_told(tmp_path: Path) -> None:
    session = HostSession(sim_host(tmp_path))
    heard: list[str] = []

    def once(topic: str) -> None:
        heard.append(topic)
        session.unsubscribe(once)

    session.subscribe(once)
    session.subscribe(heard.append)
    session.notify("log")
    session.notify("gpus")
    session.unsubscribe(once)  # not subscribed any more: ignored
    assert heard == ["log", "log", "gpus"]


def test_a_server_that_exited_is_not_the_server_before_the_next_scan(tmp_path: Path) -> None:
    """The agent's exit report comes before its next process scan: until that scan, L said "a server
    runs" and R offered to stop a process that was gone (a demo story stalled on that dialog)."""
    session = HostSession(sim_host(tmp_path), mirror=tmp_path / "mirror.log")
    server = {
        "pid": 4242,
        "port": 30000,
        "start_time": 1.0,
        "cmdline": ["python3", "-m", "sglang.launch_server"],
    }
    other = {**server, "pid": 5151, "port": 30001}
    session.handle({"type": "processes", "servers": [server, other], "orphans": []})
    assert session.server is not None
    session.handle({"type": "server_exit", "pid": 4242, "pgid": 4242, "returncode": -6, "t": 0.0})
    assert [s.pid for s in session.servers] == [5151]
    assert 4242 in session.exits


def test_the_ranks_of_a_crashed_server_are_its_leftovers_while_they_die(tmp_path: Path) -> None:
    """A crashed server's ranks hold their GPU memory until they are gone, and a dying process is no
    longer listed by a process scan: a launch then refused because "other processes" (those ranks) held
    the memory, instead of waiting for them (a demo story stalled on that refusal under load)."""
    session = HostSession(sim_host(tmp_path), mirror=tmp_path / "mirror.log")
    rank = {"pid": 4243, "ppid": 4242, "pgid": 4242, "title": "sglang::scheduler_TP1", "rank": "TP1"}
    server = {"pid": 4242, "pgid": 4242, "port": 30000, "cmdline": ["python3", "-m", "sglang.launch_server"]}
    stray = {"pid": 7001, "ppid": 1, "pgid": 7000, "title": "sglang::scheduler_TP0", "rank": "TP0"}
    session.handle({"type": "processes", "servers": [{**server, "children": [rank]}], "orphans": [stray]})
    session.handle({"type": "launched", "server": {"pid": 4242, "pgid": 4242, "argv": []}})
    assert launcher._crashed_leftovers(session) == set()  # it runs: nothing is left over
    session.handle({"type": "server_exit", "pid": 4242, "pgid": 4242, "returncode": -6, "t": 0.0})
    assert launcher._crashed_leftovers(session) == {4243}  # the crashed server's, not the stray
    session.handle({"type": "processes", "servers": [], "orphans": [stray]})  # the rank is dying: unlisted
    assert launcher._crashed_leftovers(session) == {4243}


def test_ranks_no_scan_listed_are_known_by_their_process_group_on_the_gpus(tmp_path: Path) -> None:
    """Scans come every few seconds: a rank started after the last one (and a server that crashed soon
    after) held memory the launch took for another process's. The GPU sample names each holder's
    process group, and the launched server's group is its own."""
    session = HostSession(sim_host(tmp_path), mirror=tmp_path / "mirror.log")
    server = {"pid": 4242, "pgid": 4242, "port": 30000, "cmdline": ["python3", "-m", "sglang.launch_server"]}
    session.handle({"type": "processes", "servers": [{**server, "children": []}], "orphans": []})
    session.handle({"type": "launched", "server": {"pid": 4242, "pgid": 4242, "argv": []}})
    holders = [
        {"pid": 4243, "used_mib": 30000, "name": "sglang::scheduler_TP1", "pgid": 4242},  # unscanned rank
        {"pid": 9000, "used_mib": 2000, "name": "python3", "pgid": 9000},  # someone else's
        {"pid": 4244, "used_mib": 1000, "name": None, "pgid": None},  # gone: its memory not released yet
    ]
    session.handle({"type": "gpus", "t": 0.0, "gpus": [{"index": 1, "processes": holders}]})
    assert launcher._server_pids(session, 4242) == {4242, 4243}  # a relaunch stops it with the server
    assert launcher._server_pids(session, 5000) == {5000}  # another server's pids: its group is not 5000's
    session.handle({"type": "server_exit", "pid": 4242, "pgid": 4242, "returncode": -6, "t": 0.0})
    assert launcher._crashed_leftovers(session) == {4243}  # waited for, not refused


async def test_a_close_cancelled_while_the_agent_exits_sees_it_out() -> None:
    """The console's exit cancels the session while it closes its agent: close() still waits for the
    exit. Cancelled at once, it left asyncio a process transport that closes only after the exit, and a
    loop closed before then handed it to the garbage collector (a warning under some later test)."""
    channel = await LocalAgent.start(sys.executable, {}, None)
    closing = asyncio.create_task(channel.close())
    await asyncio.sleep(0)  # close() runs up to its wait: the agent's stdin is closed, it is exiting
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert channel.proc.returncode == 0  # exited by itself, and seen to


async def test_a_stop_while_the_link_comes_up_ends_the_session_and_its_agent(tmp_path: Path) -> None:
    """stop() closes the channel it finds; one still being opened was served after the stop, until the
    run task was cancelled (at the app's exit, with the agent's process left to the garbage collector)."""
    session = HostSession(sim_host(tmp_path), mirror=tmp_path / "mirror.log", backoff=FAST_BACKOFF)
    task = asyncio.create_task(session.run())
    await asyncio.sleep(0)  # the task runs up to its first wait: starting the agent's process
    await session.stop()
    await asyncio.wait_for(task, 20)  # ends by itself: nothing cancels it
    assert session.connects == 0 and session.hellos == 0


@pytest.mark.parametrize("where", ["message", "prober"])
async def test_a_bug_in_the_session_ends_it_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _console_log: Path, where: str
) -> None:
    """Not a session that silently stops hearing its host: the link says "crashed" with one line that
    names the bug and the log file, which keeps the traceback, and run() ends by itself."""

    def broken(*args: object) -> None:
        raise ZeroDivisionError("a bug of ours")

    async def broken_prober(self: object) -> None:
        broken()

    if where == "message":
        monkeypatch.setitem(session_module._HANDLERS, "gpus", broken)
    else:
        monkeypatch.setattr(serving.Prober, "run", broken_prober)
    session = HostSession(sim_host(tmp_path), sample_interval=0.1, backoff=FAST_BACKOFF)
    task = asyncio.create_task(session.run())
    assert await session.wait_until(lambda: session.link is LinkState.CRASHED, 20), session.link
    await asyncio.wait_for(task, 10)  # ended on its own, no exception left in the task
    message = session.link_message or ""
    what = "the link" if where == "message" else "the server's health checks"
    assert f"simbox: {what} failed unexpectedly: ZeroDivisionError: a bug of ours" in message
    assert str(_console_log) in message
    logged = _console_log.read_text()
    assert "Traceback" in logged and "in broken" in logged
    assert session_json(session)["link"] == "crashed"


async def test_down_since_is_the_first_failure_and_the_next_retry_is_known(tmp_path: Path) -> None:
    """Retries pass through connecting and fail again: "down since" stays the first failure's time (it
    reset at every retry), and the session knows when it tries next."""
    port = free_port()  # nothing listens there: each attempt is refused at once
    session = HostSession(sim_host(tmp_path), ssh=SshTarget(host="127.0.0.1", port=port), backoff=(0.05, 0.2))
    downs: list[tuple[float | None, float | None]] = []

    def heard(topic: str) -> None:
        if topic == "link" and session.link is LinkState.DOWN:
            downs.append((session.down_since, session.retry_at))

    session.subscribe(heard)
    async with running(session):
        assert await session.wait_until(lambda: session.connects == 0 and len(downs) >= 6, 20), downs
    firsts = {since for since, _ in downs}
    assert len(firsts) == 1 and None not in firsts, downs  # one first failure, kept through the retries
    assert any(retry is not None and retry > (since or 0) for since, retry in downs)


async def test_a_banner_without_a_newline_before_the_agent_is_not_a_lost_hello(tmp_path: Path) -> None:
    """A login shell that prints a banner with no newline glued it to the agent's first line, which was
    then dropped: the link waited for a hello that never came, and blamed the interpreter."""
    python = tmp_path / "python-with-banner"
    python.write_text(
        f"#!/bin/sh\nprintf 'Welcome to ct129! Last login: today'\nexec {sys.executable} \"$@\"\n"
    )
    python.chmod(0o755)
    session = HostSession(sim_host(tmp_path, python=str(python)), sample_interval=0.1, backoff=FAST_BACKOFF)
    async with running(session):
        assert await session.wait_until(lambda: session.link is LinkState.CONNECTED, 20), session.link_message
        assert session.hello is not None and session.hello.sglang == "0.5.11"
