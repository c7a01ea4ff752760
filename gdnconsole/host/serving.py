"""The host's server as an HTTP endpoint: how to reach it, whether it answers, and the VERIFIED state.

``Endpoint`` finds the server's port, bind address and API key and makes a client for it (through an SSH
port forward for a remote host); ``Prober`` polls it. Both read the session through ``ServedHost``, a
small protocol, so this module does not import the session. Whether the host's server answers: health
polling, and the VERIFIED state only a real answer sets.

Polling starts once the log says uvicorn listens (before that nothing listens: FACTS §6), and backs off
while the answer is "refused" or 503. When the startup is ready and /health says 200, one verification
prompt (the profile's ``verify`` table) is sent: a real answer marks the server VERIFIED with its latency;
anything else is VERIFY FAILED with the reason. A verified server that later fails a health check or a
prompt loses VERIFIED, visibly, with the reason. A new server (another pid, a restarted log) starts over.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gdnconsole.chat.model import (
    HEALTH_TIMEOUT_S,
    ChatError,
    ChatRequest,
    ChatResult,
    Health,
    HealthResult,
    Timeouts,
)
from gdnconsole.config.hosts import Host, Verify
from gdnconsole.host.forward import ForwardError, Forwards
from gdnconsole.host.journal import Proof
from gdnconsole.host.link import LinkState
from gdnconsole.sglang import chatext
from gdnconsole.sglang.launch import flag_value
from gdnconsole.sglang.stages import Stage

if TYPE_CHECKING:
    from gdnconsole.chat.client import ChatClient
    from gdnconsole.host.link import SshTarget
    from gdnconsole.host.logstate import LogState
    from gdnconsole.host.state import HostFacts, Server, ServerRecord
    from gdnconsole.host.topics import Topic
    from gdnconsole.sglang.tracker import Startup

WILDCARDS = frozenset({"", "0.0.0.0", "::", "[::]"})


@dataclass(frozen=True)
class ProbeTiming:
    backoff: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)  # while refused / 503: still coming up
    healthy_every: float = 30.0  # a healthy server's /health runs a 1-token generation: spare its log
    health_timeout: float = HEALTH_TIMEOUT_S


@dataclass
class ServingState:
    """What the console knows about the server's answers; ``verified`` is None before any attempt."""

    server: tuple[int | None, int] | None = None  # (pid, log generation) this state belongs to
    health: Health | None = None
    health_message: str = ""
    health_at: float | None = None
    verified: bool | None = None
    verifying: bool = False
    latency_ms: float | None = None  # the verification answer's total time
    reason: str | None = None  # why verification failed, or why VERIFIED was lost
    verified_at: float | None = None
    waited_ms: float | None = None  # how long the last verification waited, answered or not
    ever_verified: bool = False  # this server answered once (here, or as the journal says)

    def reset(self, server: tuple[int | None, int] | None) -> None:
        """Forget everything: ``server`` is another server (or none)."""
        fresh = ServingState(server=server)
        for item in dataclasses.fields(self):
            setattr(self, item.name, getattr(fresh, item.name))

    def as_json(self) -> dict[str, Any]:
        return {
            "health": self.health.value if self.health else None,
            "verified": self.verified,
            "latency_ms": None if self.latency_ms is None else round(self.latency_ms, 1),
            "reason": self.reason,
            "lost": self.lost,
        }

    @property
    def lost(self) -> bool:
        """VERIFIED LOST: a server that answered once and has failed since (not a first VERIFY FAILED)."""
        return self.verified is False and self.ever_verified

    def proof(self) -> Proof:
        """What the journal keeps of the verification."""
        latency = None if self.latency_ms is None else round(self.latency_ms, 1)
        return Proof(self.verified, latency, self.reason)

    def recall(self, proof: Proof, *, once_verified: bool = False) -> None:
        """Take a proof back from the journal (a console that did not verify this server itself);
        ``once_verified``: the journal says this server answered once, whatever its latest proof."""
        self.verified = bool(proof.ok)
        self.ever_verified = self.verified or once_verified
        self.latency_ms = proof.latency_ms
        self.reason = proof.reason

    def prove(self, result: ChatResult) -> None:
        """A real answer arrived: VERIFIED, with this answer's latency."""
        self.verified, self.latency_ms, self.reason = True, result.total_ms, None
        self.verified_at = time.time()
        self.ever_verified = True

    def refute(self, reason: str) -> None:
        self.verified, self.reason = False, reason


def api_key(argv: Sequence[str]) -> str | None:
    """The ``--api-key`` of a server command line (the last one wins, as argparse does)."""
    return flag_value(argv, ("--api-key",))


def bind_host(argv: Sequence[str]) -> str:
    """Where to reach a server from its own host: its ``--host`` unless that is a wildcard."""
    host = flag_value(argv, ("--host",)) or "127.0.0.1"
    return "127.0.0.1" if host in WILDCARDS else host.strip("[]")


def verify_request(verify: Verify) -> ChatRequest:
    # Not streamed: the verification proves a whole answer arrives, and its figure is the total latency.
    return ChatRequest(prompt=verify.prompt, max_tokens=verify.max_tokens, temperature=0.0, stream=False)


class ServedHost(Protocol):
    """What the endpoint and its prober read of the host's session (``HostSession`` is one)."""

    @property
    def host(self) -> Host: ...
    @property
    def link(self) -> LinkState: ...
    @property
    def ssh_target(self) -> SshTarget | None: ...
    @property
    def forwards(self) -> Forwards: ...
    @property
    def log(self) -> LogState: ...
    @property
    def server(self) -> Server | None: ...
    @property
    def launched(self) -> ServerRecord | None: ...
    @property
    def launched_alive(self) -> bool: ...
    @property
    def facts(self) -> HostFacts: ...
    @property
    def startup(self) -> Startup | None: ...
    def notify(self, topic: Topic) -> None: ...
    async def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool: ...


class Endpoint:
    """The host's server as an HTTP endpoint: its address and key, a client for it, and what is known
    of its answers (``serving``, kept by the ``prober``)."""

    def __init__(self, session: ServedHost, timing: ProbeTiming | None = None) -> None:
        self.session = session
        self.serving = ServingState()
        self.prober = Prober(self, timing)

    def server_argv(self) -> list[str]:
        """The running server's command line (else the launch profile's flags): port, bind, API key."""
        session = self.session
        server = session.server
        if server is not None and server.cmdline:
            return list(server.cmdline)
        record = session.launched if session.launched_alive else None
        if record is not None and record.argv:
            return list(record.argv)
        profile = session.host.profile
        if profile is None:
            return []
        return ["--host", profile.host, "--port", str(profile.port), *profile.args]

    def server_port(self) -> int | None:
        server = self.session.server
        if server is not None and server.port is not None:
            return server.port
        profile = self.session.host.profile
        return profile.port if profile is not None else None

    async def chat_client(self, timeouts: Timeouts | None = None) -> ChatClient:
        """A client for the server's OpenAI endpoint: through an SSH local port forward (the server
        usually binds the host's loopback), or directly for a local host. Its API key is sent as a bearer
        header and never shown. ChatError when no server port is known or the link is down."""
        from gdnconsole.chat.client import ChatClient  # httpx loads with the first request, not at start-up

        session = self.session
        port = self.server_port()
        if port is None:
            raise ChatError(f"{session.host.name} has no server and no launch profile: which port?")
        argv = self.server_argv()
        target = bind_host(argv)
        where = f"{session.host.name}:{port}"
        if session.ssh_target is None:
            url = f"http://{target}:{port}" if ":" not in target else f"http://[{target}]:{port}"
        else:
            try:
                local = await session.forwards.port_for(target, port)
            except ForwardError as exc:
                raise ChatError(f"cannot reach {where}: {exc}") from None
            url, where = f"http://127.0.0.1:{local}", f"{where} (via SSH, local port {local})"
        spec_details = chatext.spec_details(session.facts.sglang)  # each answer's own accept length
        return ChatClient(
            url, api_key(argv), where=where, timeouts=timeouts or Timeouts(), spec_details=spec_details
        )

    def server_identity(self) -> tuple[int | None, int] | None:
        """The current server, as the serving state names it: its pid and the log's generation."""
        server = self.session.server
        return None if server is None else (server.pid, self.session.log.resets)

    @property
    def serving_now(self) -> ServingState | None:
        """What is known of the current server's answers; None while the state is another server's (the
        prober has not caught up with a new pid or a restarted log) or there is no server."""
        identity = self.server_identity()
        return self.serving if identity is not None and self.serving.server == identity else None

    def note_prompt(self, result: ChatResult) -> None:
        """A prompt's outcome is evidence about the server (it may set or lose VERIFIED)."""
        self.prober.sync()
        self.prober.note_prompt(result)

    async def verify_now(self) -> ChatResult:
        """Send the verification prompt now (the user asked); the state records the outcome."""
        self.prober.sync()
        client = await self.chat_client()
        try:
            return await self.prober.verify(client)
        finally:
            await client.aclose()


class Prober:
    """Polls one host's server and verifies it; runs while the session runs (its ``serving`` is the
    state this keeps, and each change is announced to the session's listeners as "serving")."""

    def __init__(self, endpoint: Endpoint, timing: ProbeTiming | None = None) -> None:
        self.endpoint = endpoint
        self.session = endpoint.session
        self.state = endpoint.serving
        self.timing = timing or ProbeTiming()

    def _identity(self) -> tuple[int | None, int] | None:
        return self.endpoint.server_identity()

    def _ready(self) -> bool:
        startup = self.session.startup
        return bool(startup and startup.ready)

    def _verify(self) -> Verify:
        profile = self.session.host.profile
        return profile.verify if profile is not None else Verify()

    def _changed(self) -> None:
        self.session.notify("serving")

    async def _wait(self, predicate: Callable[[], bool], seconds: float) -> bool:
        return await self.session.wait_until(predicate, seconds)

    async def _client(self) -> ChatClient | None:
        """A client for the current server; None while the link is down or no port is known."""
        if self.session.link is not LinkState.CONNECTED:
            return None
        try:
            return await self.endpoint.chat_client()
        except ChatError:
            return None

    def listening(self) -> bool:
        startup = self.session.startup
        return self._identity() is not None and startup is not None and startup.stage >= Stage.LISTENING

    def sync(self) -> bool:
        """Start over when the server changed; True when the state was reset."""
        identity = self._identity()
        if identity == self.state.server:
            return False
        self.state.reset(identity)
        return True

    async def run(self) -> None:
        failures = 0
        while True:
            if self.sync():
                failures = 0
                self._changed()
            if not self.listening():
                await self._wait(lambda: self.listening() or self._identity() != self.state.server, 3600.0)
                continue
            health = await self._poll(self.state.server)
            if health is None:
                await self._changed_within(self.state.server, 1.0)  # no link: look again soon
                continue
            failures = 0 if health is Health.OK else failures + 1
            delay = self.timing.healthy_every if health is Health.OK else self._backoff(failures)
            await self._changed_within(self.state.server, delay)

    async def _changed_within(self, identity: tuple[int | None, int] | None, seconds: float) -> None:
        """Sleep ``seconds``, or less when the server changes meanwhile, or when the log reaches ready
        while the verification is still to do. SGLang answers /health once it is up and logs ready just
        after, and the log arrives here later still: a poll that found the server healthy but not yet
        ready must not wait a healthy server's 30 s to send the verification."""
        due = self.state.verified is None and not self._ready()
        await self._wait(lambda: self._identity() != identity or (due and self._ready()), seconds)

    async def _poll(self, identity: tuple[int | None, int] | None) -> Health | None:
        """One health check (and the verification when it is due); None when the server is unreachable."""
        client: ChatClient | None = await self._client()
        if client is None:
            return None
        client.timeouts.health = self.timing.health_timeout
        try:
            health = await client.health()
            if self._identity() != identity:
                return health.health  # the server changed while we asked the old one
            was = self.state.health
            self._apply_health(health)
            if health.health is Health.OK and self._ready() and self._should_verify(was):
                await self.verify(client)
            return health.health
        finally:
            await client.aclose()

    def _backoff(self, failures: int) -> float:
        steps = self.timing.backoff
        return steps[min(max(failures - 1, 0), len(steps) - 1)]

    def _should_verify(self, health_before: Health | None) -> bool:
        """Not yet tried; or VERIFIED was lost to failed health checks that now pass again."""
        state = self.state
        return state.verified is None or (state.verified is False and health_before not in (None, Health.OK))

    def _apply_health(self, health: HealthResult) -> None:
        state = self.state
        state.health, state.health_message, state.health_at = health.health, health.message, time.time()
        if health.health is not Health.OK and state.verified:
            state.refute(f"health check failed: {health.message}")
        self._changed()

    async def verify(self, client: ChatClient) -> ChatResult:
        """Send the verification prompt now and record what it proved."""
        verify = self._verify()
        client.timeouts.answer = verify.timeout
        self.state.verifying = True
        self._changed()
        try:
            # The profile's timeout is the whole wait: a VERIFY FAILED that says "30 s" came after 30 s.
            result = await client.chat(verify_request(verify), deadline_s=verify.timeout)
        finally:
            self.state.verifying = False
        self.state.waited_ms = result.total_ms
        if result.ok:
            self.state.prove(result)
        else:
            self.state.refute(result.error or "no answer")
        self._changed()
        return result

    def note_prompt(self, result: ChatResult) -> None:
        """A user's prompt is evidence too: an answer proves the server, a failure refutes it."""
        if result.ok and self._ready():
            self.state.prove(result)
        elif not result.ok and self.state.verified:
            self.state.refute(f"a prompt failed: {result.error}")
        else:
            return
        self._changed()
