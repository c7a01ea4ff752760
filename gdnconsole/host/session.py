"""HostSession: one GPU host's state and its link, with no Textual and no terminal.

It keeps the link up (reconnecting with backoff), runs the agent, and holds what the agent reports: the
host's identity, GPU samples, SGLang processes, and the server log read from a byte offset into a stage
tracker. A reconnect resumes the log at the exact byte it had reached. The CLI's headless commands and the
TUI both drive it; listeners hear a short topic name (host/topics.py) each time something changed.

The log as read so far lives in host/logstate.py, the server's HTTP endpoint and its prober in
host/serving.py, and the `status --json` shape in the CLI (cli/status.py): the session keeps the host's
state and its actions.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import time
from collections import deque
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gdnconsole.config.hosts import Host
from gdnconsole.host import simulated
from gdnconsole.host.consolelog import record_bug
from gdnconsole.host.forward import Forwards
from gdnconsole.host.link import AgentChannel, AgentExited, LinkError, LinkState, LocalAgent, SshTarget
from gdnconsole.host.logstate import LogState
from gdnconsole.host.ranks import RankPlacement, place_ranks
from gdnconsole.host.replies import LinkLost, Message, Pending, Progress
from gdnconsole.host.serving import Endpoint, ProbeTiming, ServingState
from gdnconsole.host.servingwatch import ServingWatch
from gdnconsole.host.topics import Listener, Topic
from gdnconsole.sglang import decodepoints
from gdnconsole.sglang.decodepoints import DecodePoint
from gdnconsole.sglang.tracker import Startup

if TYPE_CHECKING:
    from gdnconsole.host.journal import Served
    from gdnconsole.host.sshlink import SshLink
    from gdnconsole.host.state import Gpu, Hello, HostFacts, Rank, Server, ServerExit, ServerRecord

BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0)
PING_EVERY_S = 5.0
REQUEST_TIMEOUT_S = 30.0
DECODE_POINTS = 240  # throughput / accept-length history kept for the sparklines
DECODE_TAIL_BYTES = 4 << 20


class HostSession:
    def __init__(
        self,
        host: Host,
        *,
        ssh: SshTarget | None = None,
        sample_interval: float = 1.0,
        backoff: tuple[float, ...] = BACKOFF_S,
        mirror: Path | None = None,
        probe: bool | ProbeTiming = True,
    ) -> None:
        """``mirror``: a local file that receives every log line read (the dashboard's log view pages
        through it, so the console holds no more than the recent lines in memory). ``probe``: poll the
        server's health and verify it once ready (host/serving.py), with these timings if given."""
        self.host = host
        self.sample_interval = sample_interval
        self.backoff = backoff
        self.ssh_target = (ssh or _target_of(host)) if (ssh or host.ssh) else None
        self._ssh_link: SshLink | None = None
        self.link = LinkState.CONNECTING
        self.link_message: str | None = None
        self.fingerprint: str | None = None
        self.down_since: float | None = None  # the first failure since the link was last up
        self.retry_at: float | None = None  # when the next connection attempt starts (epoch seconds)
        self.rtt_ms: float | None = None
        # What the agent reported, parsed once (host/state.py): everything above reads attributes.
        self.hello: Hello | None = None
        self.gpus: tuple[Gpu, ...] = ()
        self.servers: tuple[Server, ...] = ()
        self.orphans: tuple[Rank, ...] = ()  # ranks whose server is gone
        self.log = LogState.create(host.log, mirror)
        self.connects = 0
        self.hellos = 0
        self.gpus_seen = False
        self.gpu_samples = 0  # GPU samples received: "a sample taken after X" is one counted after X
        self.processes_seen = False
        self._listeners: list[Listener] = []
        self._channel: AgentChannel | None = None
        self._pings: dict[int, float] = {}
        self._ping_ids = itertools.count(1)
        self._changed = asyncio.Event()
        self._stopping = False
        self._reconnect_now = False
        # The server this console launched or adopted (the agent's pid-file record), and what ended.
        self.launched: ServerRecord | None = None
        self.launched_alive = False
        self.pidfile_seen = False
        self.exits: dict[int, ServerExit] = {}  # pid -> how it ended
        self.stops: set[int] = set()  # servers this console asked the agent to stop
        self._facts_kept: HostFacts | None = None  # what seenfacts last kept for this host
        self.exit_children: dict[int, set[int]] = {}  # pid -> its children's pids when it exited
        self._pending = Pending()
        self._launching = 0  # launch requests in flight: the log reset they cause is our own
        self.forwards = Forwards()
        self.decode_points: deque[DecodePoint] = deque(maxlen=DECODE_POINTS)
        self.probe = probe is not False
        # The server's HTTP endpoint (host/serving.py): its client, its prober, what its answers proved.
        self.endpoint = Endpoint(self, probe if isinstance(probe, ProbeTiming) else None)
        self.serving = self.endpoint.serving
        self.prober = self.endpoint.prober
        # The server's own load and latency figures, polled by the agent while someone wants them.
        self.figures = ServingWatch(self, self.endpoint.server_argv, self._keep_served)

    # -- listeners ---------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        """Stop telling ``listener`` (a screen that closes); one not subscribed is ignored."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def notify(self, topic: Topic) -> None:
        self._changed.set()
        for listener in list(self._listeners):  # a listener may unsubscribe while it is told
            listener(topic)

    async def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait for a state the session will reach by itself (no polling: it wakes on each change)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._changed.clear()
            # asyncio.timeout, not wait_for: 3.11's wait_for can hold a cancelled caller until the
            # timeout (a prober cancelled while waiting an hour kept its session's run() from ending).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._changed.wait()
        return True

    # -- the link ----------------------------------------------------------------------------------

    def _set_link(self, state: LinkState, message: str | None = None) -> None:
        # "down since" is the first failure, kept through the retries (each passes through CONNECTING).
        if state is LinkState.CONNECTED:
            self.down_since = None
        elif state is not LinkState.CONNECTING and self.down_since is None:
            self.down_since = time.time()
        if state is LinkState.CONNECTING:
            self.retry_at = None
        self.link, self.link_message = state, message
        if state is not LinkState.CONNECTED:
            self.rtt_ms = None
        self.notify("link")

    async def run(self) -> None:
        """Keep the host connected until ``stop``; retry network failures with backoff.

        A bug in the session's own work (a ConsoleError is explained where it happens; anything else is a
        bug) ends the session visibly instead of silently: the link says "crashed" with one line, and the
        console's log file keeps the traceback."""
        self._stopping = False
        health = self._guarded(self.prober.run(), "the server's health checks") if self.probe else None
        prober = asyncio.create_task(health) if health is not None else None
        try:
            await self._guarded(self._keep_connected(0), "the link")
        finally:
            if prober is not None:
                prober.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await prober

    async def _guarded(self, job: Coroutine[Any, Any, None], what: str) -> None:
        try:
            await job
        except Exception as exc:
            await self._crashed(what, exc)

    async def _crashed(self, what: str, exc: Exception) -> None:
        """Stop, and say why: the state of a session whose work failed unexpectedly is not to be trusted."""
        line = record_bug(f"{self.host.name}: {what}", exc)
        self._set_link(LinkState.CRASHED, line)
        await self.stop()

    async def _keep_connected(self, failures: int) -> None:
        while not self._stopping:
            try:
                await self._connect_and_serve()
                failures = 0  # it was up: the next try comes at once after the shortest wait
            except LinkError as exc:
                if not self._reconnect_now:  # a link the user dropped on purpose did not fail
                    failures += 1
                    self.fingerprint = exc.fingerprint
                    self._set_link(exc.state, str(exc))
                    if not exc.retryable:
                        return  # auth, host keys: waiting will not fix them
            if self.stopping:
                return
            if self._reconnect_now:  # the user asked (reconnect()): no failure, no wait
                self._reconnect_now = False
                continue
            if self.link is LinkState.CONNECTED:
                self._set_link(LinkState.DOWN, "the connection was lost")
            delay = self.backoff[min(failures, len(self.backoff) - 1)]
            self.retry_at = time.time() + delay
            self.notify("link")
            await asyncio.sleep(delay)

    @property
    def ssh_link(self) -> SshLink | None:
        """The SSH link (None for a local host), made when first needed: asyncssh loads with it."""
        if self.ssh_target is None:
            return None
        if self._ssh_link is None:
            from gdnconsole.host.sshlink import SshLink

            self._ssh_link = SshLink(self.ssh_target)
        return self._ssh_link

    def _transport_errors(self) -> tuple[type[BaseException], ...]:
        if self.ssh_target is None:
            return (OSError,)
        import asyncssh

        return (OSError, asyncssh.Error)

    @property
    def stopping(self) -> bool:
        return self._stopping

    async def reconnect(self) -> None:
        """Drop the link and make it again now (the user asked: `r` on a connected host)."""
        if self._channel is not None:
            self._reconnect_now = True
            await self._channel.close()

    async def stop(self) -> None:
        self._stopping = True
        if self._channel is not None:
            await self._channel.close()

    async def _open_channel(self) -> AgentChannel:
        env = simulated.environment(self.host) if self.host.simulate else {}
        workdir = str(simulated.workdir(self.host)) if self.host.simulate else self.host.workdir
        if self.ssh_target is not None and self._ssh_link is None:
            # asyncssh takes a few tenths of a second to import (the dashboard's first complete frame
            # waited 0.16-0.42 s for it on the loop): in a thread, so the loop runs meanwhile.
            await asyncio.to_thread(importlib.import_module, "gdnconsole.host.sshlink")
        link = self.ssh_link
        if link is None:
            return await LocalAgent.start(self.host.python, env, workdir)
        conn = await link.connect()
        try:
            return await link.start_agent(conn, self.host.python, env, workdir)
        except BaseException:
            conn.close()
            raise

    async def _connect_and_serve(self) -> None:
        self._set_link(LinkState.CONNECTING)
        try:
            channel = await self._open_channel()
        except AgentExited as exc:  # a local `python` that is no Python (or not one that runs)
            raise LinkError(LinkState.NO_AGENT, self._no_agent_reason(exc.report)) from None
        if self._stopping:  # stopped while the link came up: stop() found no channel to close
            await channel.close()
            return
        self._channel = channel
        conn = getattr(channel, "conn", None)  # an SSH channel: its connection carries the forwards
        if conn is not None:
            await self.forwards.attach(conn)  # forwards in use come back with the link
        self.connects += 1
        hellos = self.hellos
        try:
            await channel.send({"op": "hello"})
            await channel.send({"op": "sample", "interval": self.sample_interval})
            await channel.send(
                {
                    "op": "follow",
                    "path": self.log.path,
                    "offset": self.log.offset,
                    "inode": self.log.inode,
                    "raw": True,
                }  # log bytes as they are, after each message: no JSON escaping at either end
            )
            # After a reconnect (or in a new console) the launched server is known again from its pid file.
            await channel.send({"op": "pidfile", "log": self.log.path})
            pinger = asyncio.create_task(self._ping_loop(channel))
            try:
                async for message in channel.messages():
                    self.handle(message)
            finally:
                pinger.cancel()
        except self._transport_errors() as exc:
            raise LinkError(LinkState.DOWN, f"the connection was lost: {exc}") from None
        finally:
            self._channel = None
            self.forwards.detach()
            self._pending.fail_all("the link to the host was lost")
            with contextlib.suppress(*self._transport_errors()):  # a link already gone says so on close
                await channel.close()
        if self.hellos == hellos:
            raise LinkError(LinkState.NO_AGENT, self._no_agent_reason(channel.exit_report()))

    def _no_agent_reason(self, report: str) -> str:
        return (
            f"the agent did not start on {self.host.name} ({report}): is {self.host.python!r} a Python "
            ">= 3.8 interpreter there? Set `python` in the hosts file."
        )

    async def _ping_loop(self, channel: AgentChannel) -> None:
        while True:
            request = next(self._ping_ids)
            self._pings[request] = time.monotonic()
            await channel.send({"op": "ping", "id": request})
            await asyncio.sleep(PING_EVERY_S)

    def accept_host_key(self, fingerprint: str) -> None:
        """The user said yes to an unknown host's fingerprint: trust it and let the next run connect."""
        link = self.ssh_link
        if link is None:
            raise ValueError("a local host has no host key")
        link.accept_pending_key(fingerprint)
        self._set_link(LinkState.CONNECTING, "host key accepted")

    async def send(self, message: Message) -> None:
        """A request that has no answer (e.g. re-timing the samples); LinkLost when not connected."""
        if self._channel is None:
            raise LinkLost(f"{self.host.name} is not connected ({self.link.value})")
        await self._channel.send(message)

    async def request(
        self,
        message: Message,
        final: str,
        *,
        timeout: float = REQUEST_TIMEOUT_S,
        progress: Progress | None = None,
    ) -> Message:
        """Send ``message`` with an id; return the agent's ``final`` answer (AgentRefused on its error)."""
        channel = self._channel
        if channel is None:
            raise LinkLost(f"{self.host.name} is not connected ({self.link.value})")
        request_id, answer = self._pending.open(frozenset({final}), progress)
        launching = message.get("op") == "launch"
        self._launching += launching
        try:
            await channel.send({**message, "id": request_id})
            return await asyncio.wait_for(answer, timeout)
        finally:
            self._launching -= launching
            self._pending.close(request_id)

    # -- messages from the agent -------------------------------------------------------------------

    def handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        handler = _HANDLERS.get(str(kind))
        if handler is not None:
            handler(self, message)
        if "id" in message:
            self._pending.deliver(message)

    def _on_server_record(self, message: dict[str, Any]) -> None:
        """launched / adopted / pidfile: the server this console may stop."""
        from gdnconsole.host.state import ServerRecord  # (see _on_hello)

        self.launched = ServerRecord.parse(message.get("server"))
        self.launched_alive = bool(message.get("alive", self.launched is not None))
        if message.get("type") == "pidfile":
            self.pidfile_seen = True
        self.notify("launched")

    def _on_server_exit(self, message: dict[str, Any]) -> None:
        from gdnconsole.host.state import ServerExit  # (see _on_hello)

        ended = ServerExit.parse(message)
        if ended is None:
            return
        pid = ended.pid
        self.exits[pid] = ended
        # Its ranks as the last scan saw them: they can hold GPU memory for a while after the exit (dying,
        # no longer listed by a scan), and a launch must wait for them, not take them for another process.
        self.exit_children[pid] = {c.pid for s in self.servers if s.pid == pid for c in s.children}
        # Gone now, not at the next process scan: until then L said "a server runs" and R offered to
        # stop a process that had exited.
        self.servers = tuple(s for s in self.servers if s.pid != pid)
        if self.launched is not None and self.launched.pid == pid:
            self.launched_alive = False
        self.notify("server_exit")

    def _on_hello(self, message: dict[str, Any]) -> None:
        # The typed state loads with the first message, after the first frame: its dataclasses cost about
        # 6 ms to create, and the dashboard imports this module before it paints (bench_first_frame).
        from gdnconsole.host.state import Hello

        self.hello = Hello.parse(message)
        self.hellos += 1
        self._remember_facts()
        self._set_link(LinkState.CONNECTED)
        self.notify("hello")
        self.figures.connected()

    def _remember_facts(self) -> None:
        """Keep what the host says of itself, for the commands that do not connect (`config check`);
        written when it changes, not at every sample."""
        from gdnconsole.host import seenfacts

        facts = self.facts
        if facts != self._facts_kept and facts.sglang is not None:
            self._facts_kept = facts
            with contextlib.suppress(OSError):  # a read-only data dir costs this memory, nothing else
                seenfacts.remember(self.host.name, facts)

    def _on_gpus(self, message: dict[str, Any]) -> None:
        from gdnconsole.host.state import parse_gpus  # (see _on_hello)

        self.gpus = parse_gpus(message.get("gpus"))
        if not self.gpus_seen:
            self._remember_facts()  # the GPUs' memory comes with the first sample
        self.gpus_seen = True
        self.gpu_samples += 1
        self.notify("gpus")

    def _on_processes(self, message: dict[str, Any]) -> None:
        from gdnconsole.host.state import parse_ranks, parse_servers  # (see _on_hello)

        self.servers = parse_servers(message.get("servers"))
        self.processes_seen = True
        self.orphans = parse_ranks(message.get("orphans"))
        self.notify("processes")
        self.figures.refresh()  # the server on screen may be another one now, or on another port

    def _on_log(self, message: dict[str, Any]) -> None:
        from gdnconsole.host.state import LogChunk  # (see _on_hello)

        chunk = LogChunk.parse(message)
        if chunk is None or not self.log.take(chunk):
            return  # damaged, or not where we are: a duplicate after a reconnect, or out of order
        if chunk.size - chunk.end <= DECODE_TAIL_BYTES:  # a catch-up read parses only the file's last part
            self.decode_points.extend(decodepoints.last_points(chunk.data, DECODE_POINTS))
        self.notify("log")

    def _on_log_reset(self, message: dict[str, Any]) -> None:
        from gdnconsole.host.state import LogReset  # (see _on_hello)

        reset = LogReset.parse(message)
        # The agent rotates the log for our launch and says so before its reply: our own doing, no news.
        self.log.restart(reset.inode, own=self._launching > 0, reason=reset.reason)
        self.decode_points.clear()
        self.log.seen = True
        self.notify("log")

    def _on_pong(self, message: dict[str, Any]) -> None:
        from gdnconsole.host.state import Pong  # (see _on_hello)

        pong = Pong.parse(message)
        sent = self._pings.pop(pong.id, None) if pong is not None else None
        if sent is not None:
            self.rtt_ms = (time.monotonic() - sent) * 1000.0
            self.notify("link")

    def _keep_served(self, pid: int, served: Served) -> None:
        """What the server of a journal attempt did while watched, on that attempt (if it is one)."""
        from gdnconsole.host.journal import Journal, JournalError

        journal = Journal(self.host.name)
        with contextlib.suppress(JournalError, OSError):  # the figures stay on screen all the same
            attempt = journal.of_pid(pid)
            if attempt is not None and attempt.served != served:
                attempt.served = served
                journal.update(attempt)

    # -- derived state -----------------------------------------------------------------------------

    @property
    def server(self) -> Server | None:
        """The host's SGLang server: the one on the active profile's port, else the newest one."""
        if not self.servers:
            return None
        launched = self.launched_pid
        if launched is not None:
            for server in self.servers:
                if server.pid == launched:
                    return server
        profile = self.host.profile
        on_port = [s for s in self.servers if profile is not None and s.port == profile.port]
        return max(on_port or self.servers, key=lambda s: s.start_time)

    @property
    def launched_pid(self) -> int | None:
        """The pid of the server this console launched or adopted, while it runs."""
        if self.launched is None or not self.launched_alive:
            return None
        return self.launched.pid

    def placements(self) -> list[RankPlacement]:
        server = self.server
        return place_ranks(server, self.gpus) if server else []

    @property
    def complete(self) -> bool:
        """All a first look needs has arrived: identity, GPUs, processes, the whole log."""
        return (
            bool(self.hello)
            and self.gpus_seen
            and self.processes_seen
            and self.log.seen
            and self.log.caught_up
        )

    @property
    def nvml_source(self) -> str:
        return self.hello.nvml.source if self.hello is not None else "none"

    @property
    def facts(self) -> HostFacts:
        """What SGLang's rules need to know of this host: the flag form, `check --host`, the launcher."""
        from gdnconsole.host.state import HostFacts  # (see _on_hello)

        return HostFacts.of(self.hello, self.gpus)

    def startup_of(self, pid: int | None) -> Startup | None:
        """The startup of the server ``pid`` in the log (the one whose uvicorn line names that pid), else
        the log's last: another writer to the same log (a second console, a server started by hand that
        died) appends startups that are not this server's, and must not speak for it."""
        startups = self.log.tracker.startups
        if pid is not None:
            own = next((s for s in reversed(startups) if s.pid == pid), None)
            if own is not None:
                return own
        return startups[-1] if startups else None

    def ended_words(self, pid: int | None) -> str | None:
        """How the server that wrote a startup (``pid``, from its uvicorn line) ended, as far as the
        host can tell: seen to exit, or absent from the host's processes (stopped before this console
        looked: a log that says "serving" does not make it run); None while it may still run."""
        if pid is not None and pid in self.exits:
            how = "stopped" if pid in self.stops else self.exits[pid].words()
            return f"server pid {pid} {how}"
        if not self.processes_seen:
            return None
        running = {server.pid for server in self.servers}
        if pid is not None:
            return None if pid in running else f"server pid {pid} is not running"
        if running or self.launched_alive:  # a startup before its uvicorn line: its server may be one
            return None
        return "no server runs now"

    @property
    def startup(self) -> Startup | None:
        """The startup the host's status speaks of: the running server's own, else the log's last."""
        server = self.server
        return self.startup_of(server.pid if server is not None else None)

    @property
    def serving_now(self) -> ServingState | None:
        """What is known of the current server's answers (``Endpoint.serving_now``)."""
        return self.endpoint.serving_now


_HANDLERS: dict[str, Callable[[HostSession, dict[str, Any]], None]] = {
    "hello": HostSession._on_hello,
    "gpus": HostSession._on_gpus,
    "processes": HostSession._on_processes,
    "log": HostSession._on_log,
    "log_reset": HostSession._on_log_reset,
    "pong": HostSession._on_pong,
    "launched": HostSession._on_server_record,
    "adopted": HostSession._on_server_record,
    "pidfile": HostSession._on_server_record,
    "server_exit": HostSession._on_server_exit,
    "serving": lambda session, message: session.figures.take(message),
}


def _target_of(host: Host) -> SshTarget:
    assert host.ssh is not None
    ssh = host.ssh
    if ssh.user is None and ssh.port is None:
        return SshTarget(host=ssh.alias)  # maybe an ~/.ssh/config alias: let the config resolve it
    return SshTarget(host=ssh.hostname, port=ssh.port, user=ssh.user)
