"""Real SSH hosts for the tests: OpenSSH's sshd on loopback, an in-process asyncssh server, and an sshd
inside a network namespace whose link the test can cut.

ARCHITECTURE.md ("Tests use real parts") asks for real SSH servers rather than mocks: the console's link code
must meet the same host key checks, auth failures, keepalive timeouts and port forwards that a GPU box
gives it. Every host here has its own host key, its own client key and its own known_hosts, so the
user's ``~/.ssh`` is never read or written, and every one of them talks only to 127.0.0.1 or to the
addresses of a namespace the fixture created.

The fixtures are registered for ``tests/host`` by ``tests/host/conftest.py``:

- ``sshd`` (session scope): :class:`SshdHost` for a real ``/usr/sbin/sshd`` on a free 127.0.0.1 port.
- ``asyncssh_host`` (function scope, async): :class:`AsyncsshHost`, an asyncssh server in this process
  whose sessions run real ``/bin/sh -c`` subprocesses; it can drop connections, stop and restart, change
  its host key and refuse auth.
- ``netns_host`` (module scope): :class:`NetnsHost`, a real sshd inside a fresh network namespace
  reached over a veth pair, with ``link_down()`` / ``link_up()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import getpass
import ipaddress
import os
import random
import shutil
import signal
import socket
import subprocess
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh
import pytest

from tests import needs

SSHD = needs.SSHD
ALIAS = "testbox"  # the Host alias every generated ssh_config defines
READY_TIMEOUT_S = 10.0  # how long sshd may take to print "Server listening on"
NETNS_SUPERNET = ipaddress.ip_network("10.213.0.0/16")

# Loopback destinations the asyncssh host forwards to; anything else is refused before any socket opens.
FORWARD_DESTINATIONS = frozenset({"127.0.0.1", "localhost"})


# ---------------------------------------------------------------------------------------------------
# What a test gets


@dataclass
class SshdHost:
    """Everything a client needs to reach one test SSH host, by asyncssh or by the OpenSSH client."""

    host: str
    port: int
    user: str
    client_key: Path  # private key file (OpenSSH format, mode 0600)
    client_key_pub: Path
    known_hosts: Path  # one line: the host's ed25519 key for [host]:port
    host_key_pub: str  # "ssh-ed25519 AAAA…" as the server presents it now
    log: Path  # the server's own log (sshd's stderr, or the asyncssh host's event log)
    ssh_config: Path  # defines Host ``testbox`` with all of the above

    def connect_options(self, **overrides: Any) -> dict[str, Any]:
        """Keyword arguments for ``asyncssh.connect`` that use only this host's files.

        ``config=[]`` and ``agent_path=None`` keep asyncssh away from ``~/.ssh/config`` and any
        ssh-agent, which it would otherwise consult by default.
        """
        options: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "username": self.user,
            "known_hosts": str(self.known_hosts),
            "client_keys": [str(self.client_key)],
            "config": [],
            "agent_path": None,
            "connect_timeout": 5,
        }
        options.update(overrides)
        return options

    def ssh_argv(self, *command: str) -> list[str]:
        """The OpenSSH client command line that runs ``command`` on this host through ``ssh_config``."""
        return ["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", ALIAS, *command]


# ---------------------------------------------------------------------------------------------------
# Keys and client files


def write_keypair(private: Path) -> asyncssh.SSHKey:
    """Generate an ed25519 key pair at ``private`` and ``private.pub``.

    Mode 0600 matters: both the OpenSSH client and sshd ignore private keys that others can read.
    """
    key = asyncssh.generate_private_key("ssh-ed25519", comment=f"gdnconsole-test {private.name}")
    key.write_private_key(private)
    private.chmod(0o600)
    key.write_public_key(private.with_name(private.name + ".pub"))
    return key


def public_line(key: asyncssh.SSHKey) -> str:
    """The ``ssh-ed25519 AAAA…`` form of a key, without comment, as known_hosts wants it."""
    algorithm, blob = key.export_public_key().decode().split()[:2]
    return f"{algorithm} {blob}"


def known_hosts_line(host: str, port: int, host_key_pub: str) -> str:
    """One known_hosts line; OpenSSH writes non-22 ports as ``[host]:port``."""
    name = host if port == 22 else f"[{host}]:{port}"
    return f"{name} {host_key_pub}\n"


def ssh_config_text(host: str, port: int, user: str, client_key: Path, known_hosts: Path) -> str:
    """An ssh_config that reaches the host as ``testbox`` and trusts nothing from ``~/.ssh``."""
    return (
        f"Host {ALIAS}\n"
        f"  HostName {host}\n"
        f"  Port {port}\n"
        f"  User {user}\n"
        f"  IdentityFile {client_key}\n"
        "  IdentitiesOnly yes\n"
        "  IdentityAgent none\n"
        f"  UserKnownHostsFile {known_hosts}\n"
        "  GlobalKnownHostsFile /dev/null\n"
        "  StrictHostKeyChecking yes\n"
        "  UpdateHostKeys no\n"
        "  BatchMode yes\n"
        "  ConnectTimeout 5\n"
        "  LogLevel ERROR\n"
    )


def make_host_record(
    directory: Path, host: str, port: int, host_key_pub: str, client_key: Path, log: Path
) -> SshdHost:
    """Write known_hosts and ssh_config for a running server and describe it."""
    known_hosts = directory / "known_hosts"
    known_hosts.write_text(known_hosts_line(host, port, host_key_pub))
    ssh_config = directory / "ssh_config"
    user = getpass.getuser()
    ssh_config.write_text(ssh_config_text(host, port, user, client_key, known_hosts))
    return SshdHost(
        host=host,
        port=port,
        user=user,
        client_key=client_key,
        client_key_pub=client_key.with_name(client_key.name + ".pub"),
        known_hosts=known_hosts,
        host_key_pub=host_key_pub,
        log=log,
        ssh_config=ssh_config,
    )


# ---------------------------------------------------------------------------------------------------
# OpenSSH sshd


def require_sshd() -> None:
    """Skip (fail under CI) when sshd is missing, saying what to install (tests/needs.py)."""
    needs.require("sshd")
    # sshd refuses to start without its privilege separation directory (ARCHITECTURE.md, sharp edges).
    Path("/run/sshd").mkdir(mode=0o755, parents=True, exist_ok=True)


def _account_locked(user: str) -> bool:
    """Whether the account's password is "!"-locked, which sshd without PAM treats as no login at all."""
    with contextlib.suppress(OSError):
        for line in Path("/etc/shadow").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name == user:
                return rest.startswith("!")
    return False


def sshd_config_text(
    *, listen: str, port: int, host_key: Path, authorized_keys: Path, pid_file: Path, penalties_off: bool
) -> str:
    """An sshd_config for a test daemon: public key auth only, local forwards only, nothing inherited.

    ``PerSourcePenalties no`` (OpenSSH ≥ 9.8) stops the wrong-key tests from getting 127.0.0.1 banned
    for the rest of the session.
    """
    use_pam = "yes" if _account_locked(getpass.getuser()) else "no"
    lines = [
        f"ListenAddress {listen}",
        f"Port {port}",
        f"HostKey {host_key}",
        f"PidFile {pid_file}",
        f"AuthorizedKeysFile {authorized_keys}",
        f"UsePAM {use_pam}",
        "StrictModes no",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password",
        "AllowTcpForwarding local",
        "AllowAgentForwarding no",
        "X11Forwarding no",
        "PermitTunnel no",
        "ClientAliveInterval 0",
        "PermitUserEnvironment no",
        "UseDNS no",
        "PrintMotd no",
        "PrintLastLog no",
        "LogLevel VERBOSE",
    ]
    if penalties_off:
        lines.append("PerSourcePenalties no")
    return "\n".join(lines) + "\n"


def _sshd_accepts(config: Path) -> tuple[bool, str]:
    """Run ``sshd -t`` on a config: catches a bad config before we wait on a daemon that never starts."""
    result = subprocess.run(
        [str(SSHD), "-t", "-f", str(config)], capture_output=True, text=True, timeout=10, check=False
    )
    return result.returncode == 0, result.stderr


def write_sshd_config(directory: Path, listen: str, port: int, host_key: Path, authorized: Path) -> Path:
    """Write a config this sshd accepts, dropping ``PerSourcePenalties`` where sshd predates it."""
    config = directory / "sshd_config"
    text = functools.partial(
        sshd_config_text,
        listen=listen,
        port=port,
        host_key=host_key,
        authorized_keys=authorized,
        pid_file=directory / "sshd.pid",
    )
    config.write_text(text(penalties_off=True))
    ok, errors = _sshd_accepts(config)
    if not ok and "PerSourcePenalties" in errors:
        config.write_text(text(penalties_off=False))
        ok, errors = _sshd_accepts(config)
    if not ok:
        pytest.fail(f"sshd rejects the test config {config}:\n{errors}", pytrace=False)
    return config


class SshdProcess:
    """One sshd started by a test, its stderr copied line by line to a log file.

    Readiness is sshd's own "Server listening on" line (it runs with ``-e``), not a sleep: a thread reads
    stderr, copies it to the log and sets an event on that line or when stderr closes.
    """

    def __init__(self, argv: list[str], log: Path) -> None:
        self.log = log
        self._ready = threading.Event()
        self.listening = False
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._pump = threading.Thread(target=self._copy_stderr, name=f"sshd-{self.proc.pid}", daemon=True)
        self._pump.start()

    def _copy_stderr(self) -> None:
        """Copy stderr to the log; mark readiness; set the event on EOF so a dying sshd is noticed."""
        assert self.proc.stderr is not None
        with self.proc.stderr, self.log.open("ab") as out:
            for line in self.proc.stderr:
                out.write(line)
                out.flush()
                if b"Server listening on" in line:
                    self.listening = True
                    self._ready.set()
        self._ready.set()

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> bool:
        """Wait for the listening line; False when sshd died or stayed silent past the deadline."""
        self._ready.wait(timeout)
        return self.listening

    def stop(self) -> None:
        """Kill the sshd we started and the per-connection processes it forked, by PID only."""
        kill_tree(self.proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._pump.join(timeout=5)


def _children_by_parent() -> dict[int, list[int]]:
    """Map each PID to its children, read from /proc (ppid is the 2nd field after the command)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    return children


def kill_tree(pid: int) -> None:
    """SIGTERM ``pid`` and SIGKILL its descendants: sshd's session processes would outlive it otherwise."""
    children = _children_by_parent()
    descendants: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        descendants.append(child)
        todo.extend(children.get(child, []))
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    for child in descendants:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


def free_loopback_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago (the caller retries if it is taken meanwhile)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class SshdFiles:
    """The key material one sshd needs, generated fresh for it."""

    directory: Path
    host_key: Path
    host_key_pub: str
    client_key: Path
    authorized_keys: Path


def make_sshd_files(directory: Path) -> SshdFiles:
    """Generate a host key and a client key, and authorise the client key (and only it)."""
    directory.mkdir(parents=True, exist_ok=True)
    host_key = directory / "ssh_host_ed25519_key"
    host_pub = public_line(write_keypair(host_key))
    client_key = directory / "id_ed25519"
    client = write_keypair(client_key)
    authorized = directory / "authorized_keys"
    authorized.write_text(public_line(client) + "\n")
    return SshdFiles(directory, host_key, host_pub, client_key, authorized)


def start_sshd(
    files: SshdFiles, listen: str, port: int, prefix: tuple[str, ...] = ()
) -> tuple[SshdProcess, SshdHost]:
    """Start ``sshd -D -e`` (optionally under ``prefix``, e.g. ``ip netns exec NS``) and wait for it."""
    config = write_sshd_config(files.directory, listen, port, files.host_key, files.authorized_keys)
    log = files.directory / "sshd.log"
    daemon = SshdProcess([*prefix, str(SSHD), "-D", "-e", "-f", str(config)], log)
    if not daemon.wait_ready():
        daemon.stop()
        raise RuntimeError(f"sshd on {listen}:{port} did not start; its log:\n{log.read_text()}")
    record = make_host_record(files.directory, listen, port, files.host_key_pub, files.client_key, log)
    return daemon, record


def start_loopback_sshd(files: SshdFiles, attempts: int = 3) -> tuple[SshdProcess, SshdHost]:
    """Start sshd on a free 127.0.0.1 port, retrying when another process grabs the port first."""
    for attempt in range(attempts):
        try:
            return start_sshd(files, "127.0.0.1", free_loopback_port())
        except RuntimeError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshdHost]:
    """A real OpenSSH sshd on 127.0.0.1, shared by the session (each start costs key generation)."""
    require_sshd()
    files = make_sshd_files(tmp_path_factory.mktemp("sshd"))
    daemon, record = start_loopback_sshd(files)
    try:
        yield record
    finally:
        daemon.stop()
        shutil.rmtree(files.directory, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------
# In-process asyncssh server


class _TestServer(asyncssh.SSHServer):
    """Public key auth against one key, direct-tcpip to loopback only, connection bookkeeping."""

    def __init__(self, host: AsyncsshHost) -> None:
        self._host = host
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn
        self._host.accepted += 1
        self._host.open_connections.add(conn)
        self._host.note(f"connection {self._host.accepted} from {conn.get_extra_info('peername')}")

    def connection_lost(self, exc: Exception | None) -> None:
        if self._conn is not None:
            self._host.open_connections.discard(self._conn)
        self._host.note(f"connection lost: {exc!r}")

    def begin_auth(self, username: str) -> bool:
        return True  # auth is always required, as on a real host

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        ok = not self._host.reject_auth and username == self._host.user
        return ok and public_line(key) == self._host.client_key_line

    def connection_requested(self, dest_host: str, dest_port: int, orig_host: str, orig_port: int) -> bool:
        """Allow local port forwards to this machine's loopback only, like the tests' sshd would need."""
        if dest_host not in FORWARD_DESTINATIONS:
            self._host.note(f"refused direct-tcpip to {dest_host}:{dest_port}")
            raise asyncssh.ChannelOpenError(
                asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED, "only loopback destinations are forwarded"
            )
        return True


async def _pump_to_subprocess(source: asyncssh.SSHReader[bytes], sink: asyncio.StreamWriter) -> None:
    """Copy the channel's stdin to the subprocess, then close its stdin (the client's EOF)."""
    try:
        while True:
            try:
                data = await source.read(65536)
            except (asyncssh.SignalReceived, asyncssh.BreakReceived, asyncssh.TerminalSizeChanged):
                continue  # OpenSSH's sshd ignores these for such sessions (ARCHITECTURE.md): so do we
            if not data:
                break
            sink.write(data)
            await sink.drain()
    except (ConnectionError, asyncssh.Error):
        pass
    finally:
        sink.close()


async def _pump_from_subprocess(source: asyncio.StreamReader, sink: asyncssh.SSHWriter[bytes]) -> None:
    """Copy one of the subprocess's outputs to the channel until the subprocess closes it."""
    while data := await source.read(65536):
        sink.write(data)
        await sink.drain()


def _exit_status(process: asyncssh.SSHServerProcess[bytes], returncode: int) -> None:
    """Report the exit like sshd: a status, or the signal that killed the command."""
    if returncode >= 0:
        process.exit(returncode)
        return
    name = signal.Signals(-returncode).name.removeprefix("SIG")
    process.exit_with_signal(name)


async def run_session(process: asyncssh.SSHServerProcess[bytes], log: Callable[[str], None]) -> None:
    """Run the session's command as ``/bin/sh -c COMMAND`` with stdio bridged to the channel.

    The subprocess gets its own process group, and the whole group is killed if the channel closes
    first (client gone, connection dropped); a command that exits on its own is left alone.
    """
    argv = ["/bin/sh", "-c", process.command] if process.command else ["/bin/sh"]
    child = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ),
        cwd=Path.home(),
        start_new_session=True,
    )
    log(f"pid {child.pid}: {argv}")
    assert child.stdin and child.stdout and child.stderr
    feeding = asyncio.create_task(_pump_to_subprocess(process.stdin, child.stdin))
    finished = asyncio.ensure_future(
        asyncio.gather(
            _pump_from_subprocess(child.stdout, process.stdout),
            _pump_from_subprocess(child.stderr, process.stderr),
            child.wait(),
        )
    )
    closed = asyncio.create_task(process.wait_closed())
    try:
        waiting: set[asyncio.Future[Any]] = {finished, closed}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if finished.done() and not finished.exception():
            assert child.returncode is not None
            log(f"pid {child.pid} exited {child.returncode}")
            _exit_status(process, child.returncode)
    finally:
        for task in (feeding, finished, closed):
            task.cancel()
        if child.returncode is None:
            log(f"channel closed: killing process group {child.pid}")
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            await child.wait()


@dataclass
class AsyncsshHost(SshdHost):
    """An asyncssh server in the test's event loop, with handles that a real sshd cannot offer.

    ``known_hosts`` is written once, for the first host key: ``restart(new_host_key=True)`` then
    presents a key the client does not know, exactly like a reinstalled box.
    """

    directory: Path = field(default_factory=Path)
    reject_auth: bool = False  # set True: every auth attempt fails, even with the right key
    accepted: int = 0  # connections accepted since the fixture started
    open_connections: set[asyncssh.SSHServerConnection] = field(default_factory=set)
    client_key_line: str = ""
    _host_key: asyncssh.SSHKey | None = None
    _acceptor: asyncssh.SSHAcceptor | None = None
    _sessions: set[asyncio.Task[None]] = field(default_factory=set)

    @classmethod
    async def create(cls, directory: Path) -> AsyncsshHost:
        """Generate keys, listen on a free 127.0.0.1 port, and write the client files."""
        directory.mkdir(parents=True, exist_ok=True)
        client_key = directory / "id_ed25519"
        client_line = public_line(write_keypair(client_key))
        host_key = asyncssh.generate_private_key("ssh-ed25519")
        log = directory / "server.log"
        log.touch()
        record = make_host_record(directory, "127.0.0.1", 0, public_line(host_key), client_key, log)
        host = cls(**vars(record), directory=directory, client_key_line=client_line, _host_key=host_key)
        await host.start()
        # The port is known only now: rewrite the client files for it.
        fresh = make_host_record(directory, "127.0.0.1", host.port, host.host_key_pub, client_key, log)
        host.known_hosts, host.ssh_config = fresh.known_hosts, fresh.ssh_config
        return host

    def note(self, message: str) -> None:
        """Append to the server log (what ``log`` points at), for reading after a failure."""
        with self.log.open("a") as out:
            out.write(message + "\n")

    async def start(self, *, new_host_key: bool = False) -> None:
        """Listen (again, on the same port once one was chosen), optionally with a fresh host key."""
        if new_host_key:
            self._host_key = asyncssh.generate_private_key("ssh-ed25519")
            self.host_key_pub = public_line(self._host_key)
        self._acceptor = await asyncssh.create_server(
            lambda: _TestServer(self),
            self.host,
            self.port,
            server_host_keys=[self._host_key],
            process_factory=self._process_factory,
            encoding=None,
            reuse_address=True,
        )
        self.port = self._acceptor.get_port()
        self.note(f"listening on {self.host}:{self.port} with {self.host_key_pub}")

    def _process_factory(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        """Start the session as a task that handles its own errors.

        An exception escaping a process_factory drops the whole connection (ARCHITECTURE.md), which would turn
        one failing command into a fake link failure.
        """
        task = asyncio.create_task(self._guarded_session(process))
        self._sessions.add(task)
        task.add_done_callback(self._sessions.discard)

    async def _guarded_session(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        try:
            await run_session(process, self.note)
        except Exception as exc:
            self.note(f"session failed: {exc!r}")
            with contextlib.suppress(Exception):
                process.stderr.write(f"test server: {exc!r}\n".encode())
                process.exit(255)

    def drop_connections(self) -> None:
        """Abort every open connection at once, without an SSH disconnect: the client sees the TCP close."""
        for conn in list(self.open_connections):
            conn.abort()

    async def stop(self) -> None:
        """Stop listening and drop every connection; ``start()`` listens again on the same port."""
        if self._acceptor is not None:
            self._acceptor.close()
            await self._acceptor.wait_closed()
            self._acceptor = None
        self.drop_connections()

    async def restart(self, *, new_host_key: bool = False) -> None:
        """Stop, then start on the same port (with a different host key if asked)."""
        await self.stop()
        await self.start(new_host_key=new_host_key)

    async def close(self) -> None:
        """Stop, let sessions kill their subprocesses, and remove the files."""
        await self.stop()
        for task in list(self._sessions):
            task.cancel()
        await asyncio.gather(*self._sessions, return_exceptions=True)
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture
async def asyncssh_host(tmp_path: Path) -> AsyncIterator[AsyncsshHost]:
    """An in-process asyncssh server on 127.0.0.1 running real subprocesses, fresh for each test."""
    host = await AsyncsshHost.create(tmp_path / "asyncssh")
    try:
        yield host
    finally:
        await host.close()


# ---------------------------------------------------------------------------------------------------
# Network namespace host


def ip(*args: str) -> str:
    """Run ``ip ARGS`` and return stdout; raise with ip's own message on failure."""
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10, check=False)
    if result.returncode != 0:
        raise subprocess.CalledProcessError(result.returncode, ["ip", *args], result.stdout, result.stderr)
    return result.stdout


def _networks_in_use() -> list[ipaddress.IPv4Network]:
    """Every IPv4 destination in every routing table of the root namespace (default routes aside)."""
    kinds = {"unicast", "local", "broadcast", "multicast", "unreachable", "blackhole", "prohibit", "throw"}
    networks = []
    for line in ip("-4", "-o", "route", "show", "table", "all").splitlines():
        words = line.split()
        if words and words[0] in kinds:
            words = words[1:]
        if not words or words[0] == "default":
            continue
        with contextlib.suppress(ValueError):
            networks.append(ipaddress.IPv4Network(words[0], strict=False))
    return networks


def pick_subnet(rng: random.Random) -> ipaddress.IPv4Network:
    """A random /30 in 10.213.0.0/16 that no route on this machine touches."""
    in_use = _networks_in_use()
    for _ in range(100):
        candidate = ipaddress.IPv4Network(
            (int(NETNS_SUPERNET.network_address) + 4 * rng.randrange(16384), 30)
        )
        if not any(candidate.overlaps(net) for net in in_use):
            return candidate
    raise RuntimeError("no free /30 in 10.213.0.0/16")


@dataclass
class NetnsHost(SshdHost):
    """A real sshd inside its own network namespace, reached over a veth pair the test can cut."""

    namespace: str = ""
    veth: str = ""  # root-namespace side: the end ``link_down``/``link_up`` switch
    host_address: str = ""  # this machine's address on the veth (the client's source address)

    def link_down(self) -> None:
        """Cut the link: packets to the namespace now fail locally (see the unreachable route)."""
        ip("link", "set", self.veth, "down")

    def link_up(self) -> None:
        """Restore the link; the connected route comes back with it."""
        ip("link", "set", self.veth, "up")


def _create_namespace(stack: contextlib.ExitStack, name: str) -> None:
    """``ip netns add``; skip (not fail) only when the sandbox forbids namespaces outright."""
    try:
        ip("netns", "add", name)
    except subprocess.CalledProcessError as exc:
        if "permission" in exc.stderr.lower() or "not permitted" in exc.stderr.lower():
            pytest.skip(f"network namespaces are forbidden here: `ip netns add` said {exc.stderr.strip()!r}")
        raise
    stack.callback(_quietly, "netns", "del", name)


def _create_link(
    stack: contextlib.ExitStack, name: str, veth: str, peer: str, net: ipaddress.IPv4Network
) -> None:
    """A veth pair: ``veth`` here with .1, ``peer`` in the namespace with .2, and ``lo`` up there.

    The unreachable route (high metric) stands in while the link is down, so that packets meant for the
    namespace fail here instead of following the default route off this machine.
    """
    near, far = (f"{net.network_address + n}/{net.prefixlen}" for n in (1, 2))
    ip("route", "add", "unreachable", str(net), "metric", "4242")
    stack.callback(_quietly, "route", "del", "unreachable", str(net), "metric", "4242")
    ip("link", "add", veth, "type", "veth", "peer", "name", peer)
    stack.callback(_quietly, "link", "del", veth)
    ip("link", "set", peer, "netns", name)
    ip("addr", "add", near, "dev", veth)
    ip("link", "set", veth, "up")
    ip("-n", name, "addr", "add", far, "dev", peer)
    ip("-n", name, "link", "set", peer, "up")
    ip("-n", name, "link", "set", "lo", "up")


def _quietly(*args: str) -> None:
    """Teardown step: warn instead of raising, so one failure does not leave the rest behind."""
    try:
        ip(*args)
    except subprocess.CalledProcessError as exc:
        warnings.warn(f"netns teardown: ip {' '.join(args)}: {exc.stderr.strip()}", stacklevel=2)


@contextlib.contextmanager
def netns_sshd(directory: Path, rng: random.Random | None = None) -> Iterator[NetnsHost]:
    """Namespace, veth pair and sshd on the namespace's address, port 22; all undone on exit."""
    needs.require("ip")
    rng = rng or random.Random()
    tag = f"{rng.getrandbits(24):06x}"
    name, veth, peer = f"gdntest-{tag}", f"gdnh{tag}", f"gdnn{tag}"
    net = pick_subnet(rng)
    with contextlib.ExitStack() as stack:
        _create_namespace(stack, name)
        _create_link(stack, name, veth, peer, net)
        files = make_sshd_files(directory)
        stack.callback(shutil.rmtree, directory, True)
        daemon, record = start_sshd(files, str(net.network_address + 2), 22, ("ip", "netns", "exec", name))
        stack.callback(daemon.stop)
        yield NetnsHost(**vars(record), namespace=name, veth=veth, host_address=str(net.network_address + 1))


@pytest.fixture(scope="module")
def netns_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetnsHost]:
    """A real sshd in a fresh network namespace; the test may ``link_down()``/``link_up()`` its veth.

    The link is brought back up between tests that share the module by the tests themselves; teardown
    removes the namespace whatever state the link is in.
    """
    require_sshd()
    with netns_sshd(tmp_path_factory.mktemp("netns")) as host:
        yield host
