"""How the console reaches a host and starts its agent there: over SSH (asyncssh) or as a local process.

A link gives one thing: a running agent speaking JSON lines. Host keys are checked against known_hosts; an
unknown host is not connected until the user accepts its fingerprint (which is then written to
known_hosts), and a changed key is refused. Every value that reaches the remote shell is quoted.

The SSH side lives in ``sshlink.py`` and is imported only when a host is reached over SSH: asyncssh and
its crypto take a quarter of a second to import, and the first frame must not wait for them.
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

from gdnconsole.errors import ConsoleError

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
    CRASHED = "crashed"  # a bug of the console's own ended the session (host/consolelog.py)


class LinkError(ConsoleError):
    """Why a link could not be made; ``state`` says which kind of failure it was."""

    def __init__(self, state: LinkState, message: str, fingerprint: str | None = None) -> None:
        super().__init__(message)
        self.state = state
        self.fingerprint = fingerprint

    @property
    def retryable(self) -> bool:
        """Only a plain network failure heals by itself; the others need the user."""
        return self.state is LinkState.DOWN


class AgentExited(ConsoleError):
    """The agent's process ended while it was being sent its code; ``report`` says how (exit_report)."""

    def __init__(self, report: str) -> None:
        super().__init__(report)
        self.report = report


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
    """The shell command that starts the agent on the host; every value is quoted, and every value is an
    operand (after ``--``): a workdir or interpreter that starts with "-" is a name, never an option."""
    parts: list[str] = []
    if workdir:
        parts.append(f"cd -- {shlex.quote(workdir)} &&")
    parts.append("exec env --")
    parts += [shlex.quote(f"{key}={value}") for key, value in env.items()]
    from gdnconsole.host import agent  # 1,600 lines that travel to the host: loaded when a link starts

    parts += [shlex.quote(python), *(shlex.quote(arg) for arg in agent.BOOTSTRAP_ARGS)]
    return " ".join(parts)


async def send_payload(write: Any, drain: Any) -> None:
    from gdnconsole.host import agent

    write(agent.bootstrap_payload())
    await drain()


def encode_request(request: Mapping[str, Any]) -> bytes:
    return (json.dumps(request, separators=(",", ":")) + "\n").encode()


FRAME_START = b'{"type":'  # how every agent message begins (its encode(): "type" first, no spaces)


def _frame(line: bytes) -> Any:
    """The JSON value of a line; a message that follows text with no newline of its own (a login shell's
    banner, before the agent's first line) is found where its frame starts."""
    try:
        return json.loads(line)
    except ValueError:
        start = line.find(FRAME_START)
        if start <= 0:
            return None
        try:
            return json.loads(line[start:])
        except ValueError:
            return None


async def decode_lines(reader: Any) -> AsyncIterator[dict[str, Any]]:
    """JSON objects from an agent's stdout; a line that is not JSON is skipped (a stray print).

    A message with ``"bytes": N`` is followed by N raw bytes (log data sent unescaped): they are read
    and attached as ``message["raw"]``.
    """
    while True:
        line = await reader.readline()
        if not line:
            return
        message = _frame(line)
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
        from gdnconsole.host import agent

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
        channel = cls(proc)
        try:
            assert proc.stdin is not None
            await send_payload(proc.stdin.write, proc.stdin.drain)
        except BaseException as exc:  # cancelled (the console quits) or the agent died: leave no process
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await channel.close()  # sees the agent out even if cancelled again meanwhile
            if isinstance(exc, OSError):  # it exited before reading its code: not a Python that runs it
                raise AgentExited(channel.exit_report()) from None
            raise
        return channel

    async def send(self, request: Mapping[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(encode_request(request))
        await self.proc.stdin.drain()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        assert self.proc.stdout is not None
        async for message in decode_lines(self.proc.stdout):
            yield message

    async def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()  # the agent exits when its stdin closes
        # The console may quit while the agent exits, and a quitting app cancels a task more than once. See
        # the agent out all the same, however many times: asyncio closes a process's transport only after
        # its exit, and a loop closed before then leaves the transport to the garbage collector, which
        # reports it (under whatever runs at that moment). The cancellation is raised once it is out.
        cancelled = False
        while True:
            try:
                await self._exited(1.0 if cancelled else 5.0)
                break
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError
        if self.proc.stderr is not None:
            with contextlib.suppress(OSError):  # a pipe already closed, or no word within the second
                self.stderr = (await asyncio.wait_for(self.proc.stderr.read(), 1.0)).decode(errors="replace")

    async def _exited(self, grace: float) -> None:
        """Wait ``grace`` s for the agent to exit, then kill it (our own child, by its handle)."""
        try:
            await asyncio.wait_for(self.proc.wait(), grace)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):  # it exited just now
                self.proc.kill()
            await self.proc.wait()

    def exit_report(self) -> str:
        return exit_report(self.proc.returncode, getattr(self, "stderr", ""))


def exit_report(code: int | None, stderr: str) -> str:
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    status = "still running" if code is None else f"exit status {code}"
    return f"{status}: {last}" if last else status
