"""The SSH test hosts work with real clients: OpenSSH's ``ssh`` and asyncssh, on all three kinds of host."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import asyncssh
import pytest

from tests import needs, sshhosts
from tests.sshhosts import AsyncsshHost, NetnsHost, SshdHost, known_hosts_line, public_line, write_keypair

HOST_FIXTURES = ["sshd", "asyncssh_host", "netns_host"]


@pytest.fixture(params=HOST_FIXTURES)
def any_host(request: pytest.FixtureRequest) -> SshdHost:
    """Each kind of test host in turn, so every client check runs against all three.

    A sync fixture on purpose: ``getfixturevalue`` of an async fixture fails inside a running loop.
    """
    host: SshdHost = request.getfixturevalue(request.param)
    return host


async def run_openssh(host: SshdHost, *command: str) -> tuple[int, str, str]:
    """Run the real OpenSSH client through the host's ssh_config (awaited: the asyncssh host shares our loop)."""
    proc = await asyncio.create_subprocess_exec(
        *host.ssh_argv(*command),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=15)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_openssh_client_runs_a_command(any_host: SshdHost) -> None:
    code, out, err = await run_openssh(any_host, "echo ok")
    assert (code, out) == (0, "ok\n"), err


async def test_asyncssh_client_runs_echo_and_python(any_host: SshdHost) -> None:
    async with asyncssh.connect(**any_host.connect_options()) as conn:
        echo = await conn.run("echo hello", check=True)
        major = await conn.run("python3 -c 'import sys; print(sys.version_info[0])'", check=True)
    assert echo.stdout == "hello\n"
    assert major.stdout == "3\n"


async def test_stdin_eof_and_exit_status_pass_through(any_host: SshdHost) -> None:
    """The agent talks over stdin and exits on its EOF: both directions and the status must survive."""
    async with asyncssh.connect(**any_host.connect_options()) as conn:
        echoed = await conn.run("cat; echo done >&2; exit 3", input="line one\nline two\n")
    assert echoed.stdout == "line one\nline two\n"
    assert echoed.stderr == "done\n"
    assert echoed.exit_status == 3


async def test_wrong_client_key_is_denied(any_host: SshdHost, tmp_path: Path) -> None:
    stranger = tmp_path / "stranger"
    write_keypair(stranger)
    with pytest.raises(asyncssh.PermissionDenied):
        await asyncssh.connect(**any_host.connect_options(client_keys=[str(stranger)]))


async def test_unknown_host_key_is_refused_by_sshd(sshd: SshdHost, tmp_path: Path) -> None:
    """A known_hosts entry with some other key for the same [host]:port: the client must refuse."""
    other = tmp_path / "other_host_key"
    known = tmp_path / "known_hosts"
    known.write_text(known_hosts_line(sshd.host, sshd.port, public_line(write_keypair(other))))
    with pytest.raises(asyncssh.HostKeyNotVerifiable):
        await asyncssh.connect(**sshd.connect_options(known_hosts=str(known)))


async def test_changed_host_key_is_refused(asyncssh_host: AsyncsshHost) -> None:
    old_key = asyncssh_host.host_key_pub
    await asyncssh_host.restart(new_host_key=True)
    assert asyncssh_host.host_key_pub != old_key
    with pytest.raises(asyncssh.HostKeyNotVerifiable):
        await asyncssh.connect(**asyncssh_host.connect_options())
    code, _, err = await run_openssh(asyncssh_host, "true")
    assert code == 255 and "HOST IDENTIFICATION HAS CHANGED" in err


async def test_reject_auth_mode_denies_the_right_key(asyncssh_host: AsyncsshHost) -> None:
    asyncssh_host.reject_auth = True
    with pytest.raises(asyncssh.PermissionDenied):
        await asyncssh.connect(**asyncssh_host.connect_options())


async def echo_server() -> tuple[asyncio.Server, int]:
    """A loopback TCP echo server, standing in for the SGLang HTTP port behind a forward."""

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.read(100))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.fixture(params=["sshd", "asyncssh_host"])
def forwarding_host(request: pytest.FixtureRequest) -> SshdHost:
    """The hosts whose loopback the tests reach through local port forwards (the netns one has no server)."""
    host: SshdHost = request.getfixturevalue(request.param)
    return host


async def test_local_port_forward_reaches_loopback(forwarding_host: SshdHost) -> None:
    host = forwarding_host
    server, port = await echo_server()
    async with server, asyncssh.connect(**host.connect_options()) as conn:
        reader, writer = await conn.open_connection("127.0.0.1", port)
        writer.write(b"ping")
        assert await asyncio.wait_for(reader.read(100), 5) == b"ping"
        writer.close()


async def test_asyncssh_host_forwards_to_loopback_only(asyncssh_host: AsyncsshHost) -> None:
    """0.0.0.0 is not on the allow list; if the check ever broke, Linux would still keep it local."""
    async with asyncssh.connect(**asyncssh_host.connect_options()) as conn:
        with pytest.raises(asyncssh.ChannelOpenError):
            await conn.open_connection("0.0.0.0", 9)


async def test_dropped_connections_are_noticed_and_counted(asyncssh_host: AsyncsshHost) -> None:
    conn = await asyncssh.connect(**asyncssh_host.connect_options())
    asyncssh_host.drop_connections()
    await asyncio.wait_for(conn.wait_closed(), 5)
    async with asyncssh.connect(**asyncssh_host.connect_options()) as again:
        assert (await again.run("echo back", check=True)).stdout == "back\n"
    assert asyncssh_host.accepted == 2


async def test_stopped_server_refuses_then_restarts_on_the_same_port(asyncssh_host: AsyncsshHost) -> None:
    port = asyncssh_host.port
    await asyncssh_host.stop()
    with pytest.raises(OSError):
        await asyncssh.connect(**asyncssh_host.connect_options())
    await asyncssh_host.start()
    assert asyncssh_host.port == port
    async with asyncssh.connect(**asyncssh_host.connect_options()) as conn:
        assert (await conn.run("true")).exit_status == 0


async def wait_process_gone(pid: int, timeout: float) -> None:
    """Await a process's exit through a pidfd (readable once it has exited): no polling loop."""
    fd = os.pidfd_open(pid)
    gone = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()
    loop.add_reader(fd, lambda: gone.done() or gone.set_result(None))
    try:
        await asyncio.wait_for(gone, timeout)
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def test_closing_the_channel_kills_the_command(asyncssh_host: AsyncsshHost) -> None:
    async with asyncssh.connect(**asyncssh_host.connect_options()) as conn:
        process = await conn.create_process("echo $$; exec sleep 60")
        pid = int(await asyncio.wait_for(process.stdout.readline(), 5))
        process.close()
        await wait_process_gone(pid, 5)


class _LossWatcher(asyncssh.SSHClient):
    """Hears why the connection ended (asyncssh's client callback)."""

    def __init__(self) -> None:
        self.lost: Exception | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc


async def test_keepalive_notices_a_cut_link_and_a_new_connection_works_after(netns_host: NetnsHost) -> None:
    """ARCHITECTURE.md: keepalive notices a dead link (after about interval × (count + 1): measured by
    bench/bench_keepalive.py); here the connection must end while the link is down, and say keepalive."""
    watcher = _LossWatcher()
    conn, _client = await asyncssh.create_connection(
        lambda: watcher, **netns_host.connect_options(keepalive_interval=0.5, keepalive_count_max=2)
    )
    try:
        netns_host.link_down()
        await asyncio.wait_for(conn.wait_closed(), 30)  # TCP alone would wait minutes
    finally:
        conn.abort()
        netns_host.link_up()
    assert isinstance(watcher.lost, asyncssh.ConnectionLost) and "keepalive" in str(watcher.lost)
    async with asyncssh.connect(**netns_host.connect_options()) as again:
        assert (await again.run("echo back", check=True)).stdout == "back\n"


def test_missing_sshd_skips_saying_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without sshd (and no way to install it) the SSH tests skip, naming the package; never an error."""
    monkeypatch.setattr(needs, "SSHD", tmp_path / "no-sshd")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"apt-get install openssh-server"):
        sshhosts.require_sshd()


def test_missing_sshd_fails_under_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """In CI the install must have worked: a skip there would hide that the SSH tests never ran."""
    monkeypatch.setattr(needs, "SSHD", tmp_path / "no-sshd")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"openssh-server"):
        sshhosts.require_sshd()
