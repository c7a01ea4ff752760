"""The SSH link (asyncssh): connect with host-key checking against known_hosts, start the agent over a
session channel. Imported only when a host is reached over SSH (see link.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import asyncssh

from gdnconsole import safefile
from gdnconsole.host.link import (
    CHANNEL_OPTIONS,
    CONNECT_TIMEOUT_S,
    DEFAULT_KNOWN_HOSTS,
    DEFAULT_SSH_CONFIG,
    ENCRYPTION_ALGS,
    SSH_CONFIG_ENV,
    AgentChannel,
    LinkError,
    LinkState,
    SshTarget,
    decode_lines,
    encode_request,
    exit_report,
    remote_command,
    send_payload,
)

# What closing a link that is already gone may raise (OSError includes the timeouts).
CLOSED: tuple[type[BaseException], ...] = (OSError, asyncssh.Error)


class SshAgent(AgentChannel):
    """The agent over an SSH session channel."""

    def __init__(self, conn: asyncssh.SSHClientConnection, process: asyncssh.SSHClientProcess[bytes]) -> None:
        self.conn = conn
        self.process = process

    async def send(self, request: Mapping[str, Any]) -> None:
        self.process.stdin.write(encode_request(request))
        await self.process.stdin.drain()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        async for message in decode_lines(self.process.stdout):
            yield message

    async def close(self) -> None:
        # A channel that is closing may already be gone: what that raises is a closed link, not news.
        with contextlib.suppress(*CLOSED):
            self.process.stdin.write_eof()
        with contextlib.suppress(*CLOSED):
            await asyncio.wait_for(self.process.wait_closed(), 2.0)
            self.stderr = (await asyncio.wait_for(self.process.stderr.read(), 1.0)).decode(errors="replace")
        self.process.close()
        self.conn.close()
        with contextlib.suppress(*CLOSED):
            await asyncio.wait_for(self.conn.wait_closed(), 5.0)

    def exit_report(self) -> str:
        return exit_report(self.process.exit_status, getattr(self, "stderr", ""))


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
        with safefile.open_append(path) as fh:  # never through a link planted at known_hosts
            fh.write(known_hosts_entry(host, port, key).encode("utf-8"))
        self.pending_key = None

    async def start_agent(
        self, conn: asyncssh.SSHClientConnection, python: str, env: Mapping[str, str], workdir: str | None
    ) -> SshAgent:
        command = remote_command(python, env, workdir)
        try:
            process = await conn.create_process(command, encoding=None, **CHANNEL_OPTIONS)
        except (OSError, asyncssh.Error) as exc:
            raise LinkError(LinkState.DOWN, f"cannot start the agent: {exc}") from None
        await send_payload(process.stdin.write, process.stdin.drain)
        return SshAgent(conn, process)


def _network_message(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "connection timed out"
    if isinstance(exc, asyncssh.DisconnectError):
        return f"disconnected: {exc.reason}"
    text = str(exc) or exc.__class__.__name__
    return text
