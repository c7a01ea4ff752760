"""How the console reaches a host and starts its agent there: over SSH (asyncssh) or as a local process.

A link gives one thing: a running agent speaking JSON lines. Host keys are checked against known_hosts; an
unknown host is not connected until the user accepts its fingerprint (which is then written to
known_hosts), and a changed key is refused. Every value that reaches the remote shell is quoted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import asyncssh

from gdnconsole.host import agent

KEEPALIVE_INTERVAL_S = 2.0  # a dead link is noticed after about interval x (count + 1)
KEEPALIVE_COUNT_MAX = 2
CONNECT_TIMEOUT_S = 15.0
# A log message carries up to 256 KiB of text, a cut 1 MiB line more, and JSON escaping can grow it
# several times: asyncio's default 64 KiB line limit would fail on the first busy second.
MESSAGE_LIMIT = 64 << 20
# A busy log is a bulk transfer: a wide window and large packets halve asyncssh's per-packet work, and
# AES-GCM (hardware-accelerated) costs less per byte than ChaCha20 in asyncssh (measured by
# bench/bench_ingest.py: +28% ingest).
CHANNEL_OPTIONS: dict[str, Any] = {"window": 16 << 20, "max_pktsize": 256 << 10}
ENCRYPTION_ALGS = (
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-ctr",
    "aes192-ctr",
    "aes256-ctr",
)
DEFAULT_KNOWN_HOSTS = Path("~/.ssh/known_hosts").expanduser()
DEFAULT_SSH_CONFIG = Path("~/.ssh/config").expanduser()
SSH_CONFIG_ENV = "GDNCONSOLE_SSH_CONFIG"  # another ssh_config file instead of ~/.ssh/config


class LinkState(Enum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    DOWN = "down"
    AUTH_FAILED = "auth-failed"
    HOST_KEY_REFUSED = "host-key-refused"
    UNKNOWN_HOST = "unknown-host"
    NO_AGENT = "no-agent"  # connected, but the agent could not run (no Python there)


class LinkError(Exception):
    """Why a link could not be made; ``state`` says which kind of failure it was."""

    def __init__(self, state: LinkState, message: str, fingerprint: str | None = None) -> None:
        super().__init__(message)
        self.state = state
        self.fingerprint = fingerprint

    @property
    def retryable(self) -> bool:
        """Only a plain network failure heals by itself; the others need the user."""
        return self.state is LinkState.DOWN


@dataclass(frozen=True)
class SshTarget:
    host: str  # an address, a hostname, or an alias from ~/.ssh/config
    port: int | None = None
    user: str | None = None
    known_hosts: Path | None = None  # None: UserKnownHostsFile from the ssh config, else ~/.ssh/known_hosts
    client_keys: tuple[Path, ...] | None = None  # None: the user's agent and default keys
    ssh_config: Path | None = None  # None: ~/.ssh/config when it exists
    keepalive_interval: float = KEEPALIVE_INTERVAL_S
    keepalive_count_max: int = KEEPALIVE_COUNT_MAX


class AgentChannel(ABC):
    """A running agent: send requests, read messages, close."""

    @abstractmethod
    async def send(self, request: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def messages(self) -> AsyncIterator[dict[str, Any]]: ...

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    def exit_report(self) -> str:
        """How the agent's process ended and the last thing it wrote to stderr, once it has."""


def remote_command(python: str, env: Mapping[str, str], workdir: str | None) -> str:
    """The shell command that starts the agent on the host; every value is quoted."""
    parts: list[str] = []
    if workdir:
        parts.append(f"cd {shlex.quote(workdir)} &&")
    parts.append("exec env")
    parts += [shlex.quote(f"{key}={value}") for key, value in env.items()]
    parts += [shlex.quote(python), *(shlex.quote(arg) for arg in agent.BOOTSTRAP_ARGS)]
    return " ".join(parts)


async def _send_payload(write: Any, drain: Any) -> None:
    write(agent.bootstrap_payload())
    await drain()


def _encode(request: Mapping[str, Any]) -> bytes:
    return (json.dumps(request, separators=(",", ":")) + "\n").encode()


async def _decode_lines(reader: Any) -> AsyncIterator[dict[str, Any]]:
    """JSON objects from an agent's stdout; a line that is not JSON is skipped (a stray print).

    A message with ``"bytes": N`` is followed by N raw bytes (log data sent unescaped): they are read
    and attached as ``message["raw"]``.
    """
    while True:
        line = await reader.readline()
        if not line:
            return
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        size = message.get("bytes")
        if isinstance(size, int) and size > 0:
            try:
                message["raw"] = await reader.readexactly(size)
            except asyncio.IncompleteReadError:
                return  # the stream ended inside a frame: the link is gone
        yield message


class LocalAgent(AgentChannel):
    """The agent as a subprocess on this machine (a `local = true` host)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, python: str, env: Mapping[str, str], workdir: str | None) -> LocalAgent:
        argv = [python, *agent.BOOTSTRAP_ARGS]
        cwd = os.path.expanduser(workdir) if workdir else None
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, **env},
                cwd=cwd,
                limit=MESSAGE_LIMIT,
            )
        except FileNotFoundError:
            raise LinkError(LinkState.DOWN, f"no Python interpreter {python!r} on this machine") from None
        except NotADirectoryError:
            raise LinkError(LinkState.DOWN, f"workdir {workdir!r} is not a directory") from None
        assert proc.stdin is not None
        await _send_payload(proc.stdin.write, proc.stdin.drain)
        return cls(proc)

    async def send(self, request: Mapping[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(_encode(request))
        await self.proc.stdin.drain()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        assert self.proc.stdout is not None
        async for message in _decode_lines(self.proc.stdout):
            yield message

    async def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()  # the agent exits when its stdin closes
        try:
            await asyncio.wait_for(self.proc.wait(), 5.0)
        except TimeoutError:
            self.proc.kill()  # our own child, by its handle
            await self.proc.wait()
        if self.proc.stderr is not None:
            with contextlib.suppress(Exception):
                self.stderr = (await asyncio.wait_for(self.proc.stderr.read(), 1.0)).decode(errors="replace")

    def exit_report(self) -> str:
        return _exit_report(self.proc.returncode, getattr(self, "stderr", ""))


class SshAgent(AgentChannel):
    """The agent over an SSH session channel."""

    def __init__(self, conn: asyncssh.SSHClientConnection, process: asyncssh.SSHClientProcess[bytes]) -> None:
        self.conn = conn
        self.process = process

    async def send(self, request: Mapping[str, Any]) -> None:
        self.process.stdin.write(_encode(request))
        await self.process.stdin.drain()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        async for message in _decode_lines(self.process.stdout):
            yield message

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self.process.stdin.write_eof()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.process.wait_closed(), 2.0)
            self.stderr = (await asyncio.wait_for(self.process.stderr.read(), 1.0)).decode(errors="replace")
        self.process.close()
        self.conn.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.conn.wait_closed(), 5.0)

    def exit_report(self) -> str:
        return _exit_report(self.process.exit_status, getattr(self, "stderr", ""))


class _KeyWatcher(asyncssh.SSHClient):
    """Remembers the host key a server offered when known_hosts did not trust it."""

    def __init__(self, known_hosts: Path) -> None:
        self.known_hosts = known_hosts
        self.offered: asyncssh.SSHKey | None = None
        self.changed = False
        self.where: tuple[str, str, int] | None = None

    def validate_host_public_key(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        self.offered = key
        self.where = (host, addr, port)
        if self.known_hosts.exists():
            trusted = asyncssh.match_known_hosts(str(self.known_hosts), host, addr, port)[0]
            self.changed = bool(trusted)
        return False


def known_hosts_entry(host: str, port: int, key: asyncssh.SSHKey) -> str:
    """A known_hosts line for ``key`` in OpenSSH's own form (``[host]:port`` off the default port)."""
    pattern = host if port == 22 else f"[{host}]:{port}"
    return f"{pattern} {key.export_public_key('openssh').decode().strip()}\n"


class SshLink:
    """Connects to one SSH target; remembers an unknown host's key until the user accepts it."""

    def __init__(self, target: SshTarget) -> None:
        self.target = target
        self.pending_key: tuple[str, int, asyncssh.SSHKey] | None = None
        self.known_hosts = target.known_hosts or self._configured_known_hosts()

    def _config_paths(self) -> list[str]:
        config = self.target.ssh_config
        if config is None and os.environ.get(SSH_CONFIG_ENV):
            config = Path(os.environ[SSH_CONFIG_ENV]).expanduser()
        if config is None and DEFAULT_SSH_CONFIG.exists():
            config = DEFAULT_SSH_CONFIG
        return [str(config)] if config else []

    def _configured_known_hosts(self) -> Path:
        """The known_hosts file OpenSSH would use for this host (its UserKnownHostsFile)."""
        try:
            options = asyncssh.SSHClientConnectionOptions(host=self.target.host, config=self._config_paths())
        except (OSError, asyncssh.Error, ValueError):
            return DEFAULT_KNOWN_HOSTS
        files = options.known_hosts
        if isinstance(files, list | tuple) and files and isinstance(files[0], str):
            return Path(files[0]).expanduser()
        return DEFAULT_KNOWN_HOSTS

    def _options(self) -> dict[str, Any]:
        target = self.target
        options: dict[str, Any] = {
            # Never None (that would disable checking): a missing file trusts no key at all.
            "known_hosts": str(self.known_hosts) if self.known_hosts.exists() else [],
            "keepalive_interval": target.keepalive_interval,
            "keepalive_count_max": target.keepalive_count_max,
            "connect_timeout": CONNECT_TIMEOUT_S,
            "encryption_algs": list(ENCRYPTION_ALGS),
        }
        if target.port is not None:
            options["port"] = target.port
        if target.user is not None:
            options["username"] = target.user
        if target.client_keys is not None:
            options["client_keys"] = [str(k) for k in target.client_keys]
            options["agent_path"] = None
        options["config"] = self._config_paths()
        return options

    async def connect(self) -> asyncssh.SSHClientConnection:
        watcher = _KeyWatcher(self.known_hosts)
        try:
            conn, _ = await asyncssh.create_connection(lambda: watcher, self.target.host, **self._options())
        except asyncssh.HostKeyNotVerifiable as exc:
            raise self._host_key_error(watcher, exc) from None
        except asyncssh.PermissionDenied as exc:
            raise LinkError(LinkState.AUTH_FAILED, f"authentication failed: {exc.reason}") from None
        except (OSError, asyncssh.Error, TimeoutError) as exc:
            raise LinkError(LinkState.DOWN, _network_message(exc)) from None
        return conn

    def _host_key_error(self, watcher: _KeyWatcher, exc: Exception) -> LinkError:
        key = watcher.offered
        fingerprint = key.get_fingerprint("sha256") if key else None
        if watcher.changed or key is None or watcher.where is None:
            return LinkError(
                LinkState.HOST_KEY_REFUSED,
                f"the host key of {self.target.host} has CHANGED ({fingerprint}); it does not match "
                f"{self.known_hosts}. Refusing to connect: if the host was reinstalled, remove its "
                "old line from known_hosts yourself.",
                fingerprint,
            )
        host, _addr, port = watcher.where
        self.pending_key = (host, port, key)
        return LinkError(
            LinkState.UNKNOWN_HOST,
            f"{self.target.host} is not in {self.known_hosts}; its host key fingerprint is "
            f"{fingerprint}. Accept it only if it matches the key of the real host.",
            fingerprint,
        )

    def accept_pending_key(self, fingerprint: str) -> None:
        """Trust the unknown host's key the user saw (and only that one): append it to known_hosts."""
        if self.pending_key is None:
            raise ValueError("no unknown host key is waiting for a decision")
        host, port, key = self.pending_key
        if key.get_fingerprint("sha256") != fingerprint:
            raise ValueError("the fingerprint does not match the key the host offered")
        path = self.known_hosts
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(known_hosts_entry(host, port, key))
        self.pending_key = None

    async def start_agent(
        self, conn: asyncssh.SSHClientConnection, python: str, env: Mapping[str, str], workdir: str | None
    ) -> SshAgent:
        command = remote_command(python, env, workdir)
        try:
            process = await conn.create_process(command, encoding=None, **CHANNEL_OPTIONS)
        except (OSError, asyncssh.Error) as exc:
            raise LinkError(LinkState.DOWN, f"cannot start the agent: {exc}") from None
        await _send_payload(process.stdin.write, process.stdin.drain)
        return SshAgent(conn, process)


def _exit_report(code: int | None, stderr: str) -> str:
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    status = "still running" if code is None else f"exit status {code}"
    return f"{status}: {last}" if last else status


def _network_message(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "connection timed out"
    if isinstance(exc, asyncssh.DisconnectError):
        return f"disconnected: {exc.reason}"
    text = str(exc) or exc.__class__.__name__
    return text
