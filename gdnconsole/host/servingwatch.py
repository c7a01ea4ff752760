"""When the agent polls the server's own endpoints, and what it asks: only while someone wants figures.

A dashboard that shows the host, or a command such as `serving`, says ``want(owner, True)``; the poll
stops when the last one says False. It follows the server on screen (a new server, a new port, a new
feed: its counters started again anyway). The interval is the agent's one second when the server keeps
our requests out of its access log (``--uvicorn-access-log-exclude-prefixes``), else slower, so that the
log the operator reads is not one line a second of our polls.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gdnconsole.host.servingpoll import LOADS, METRICS, PATHS, SERVER_INFO, ServingRound
from gdnconsole.host.topics import Topic

if TYPE_CHECKING:
    from gdnconsole.host.journal import Served
    from gdnconsole.host.replies import Message
    from gdnconsole.host.servingfeed import ServingFeed
    from gdnconsole.host.state import HostFacts, Server
    from gdnconsole.sglang.decodepoints import DecodePoint
    from gdnconsole.sglang.servingfigures import Pool, ServingFigures
    from gdnconsole.sglang.tracker import Startup

FAST_S = 1.0  # the agent's floor: at most once a second
QUIET_S = 5.0  # when each poll would write access-log lines
EXCLUDE_FLAG = "--uvicorn-access-log-exclude-prefixes"
KEEP_EVERY = 30  # polls with figures between two journal writes of what the server did
MAMBA_NUMBERS = ("mamba_conv_gb", "mamba_ssm_gb")  # a rank that sized a mamba pool (sglang/memory.py)


class WatchedHost(Protocol):
    """What the watch reads of the session (it never imports it)."""

    @property
    def server(self) -> Server | None: ...
    @property
    def facts(self) -> HostFacts: ...
    @property
    def startup(self) -> Startup | None: ...
    @property
    def decode_points(self) -> Sequence[DecodePoint]: ...
    def notify(self, topic: Topic) -> None: ...
    async def send(self, message: Message) -> None: ...


@dataclass(frozen=True)
class Ask:
    """One ``serving`` request: what the agent polls now (interval 0: nothing)."""

    host: str
    port: int
    interval: float
    paths: tuple[str, ...]
    api_key: str | None

    def message(self) -> dict[str, Any]:
        return {
            "op": "serving",
            "host": self.host,
            "port": self.port,
            "interval": self.interval,
            "paths": list(self.paths),
            "api_key": self.api_key,
        }


def quiet_paths(argv: Sequence[str], paths: Sequence[str]) -> bool:
    """Every path polled is kept out of the access log by the server's own flag (prefixes, nargs='*')."""
    prefixes: list[str] = []
    for i, arg in enumerate(argv):
        if arg == EXCLUDE_FLAG:
            prefixes = []
            for value in argv[i + 1 :]:
                if value.startswith("--"):
                    break
                prefixes.append(value)
        elif arg.startswith(EXCLUDE_FLAG + "="):
            prefixes = [arg.split("=", 1)[1]]
    return all(any(p.startswith(prefix) for prefix in prefixes if prefix) for p in paths)


def pools_of(startup: Startup | None) -> frozenset[Pool]:
    """The hybrid pools the server sized, as its startup lines said (SGLang writes 0 for the others)."""
    if startup is None:
        return frozenset()
    ranks = startup.ranks.values()
    pools: set[Pool] = set()
    if any(any(rank.numbers.get(k) for k in MAMBA_NUMBERS) for rank in ranks):
        pools.add("mamba")
    if any(rank.numbers.get("swa_tokens") for rank in ranks):  # the SWAKVPool line
        pools.add("swa")
    return frozenset(pools)


class ServingWatch:
    def __init__(
        self,
        session: WatchedHost,
        server_argv: Callable[[], list[str]],
        keep: Callable[[int, Served], None] | None = None,
    ) -> None:
        """``server_argv``: the server's command line, else the profile's (host/serving.py's Endpoint).
        ``keep(pid, served)``: what a server did while watched, for its journal attempt, every
        KEEP_EVERY polls with figures and when the feed moves to another server."""
        self.session = session
        self.server_argv = server_argv
        self.keep = keep
        self.owners: set[object] = set()
        self.feed: ServingFeed | None = None
        self._feed_of: tuple[int, int] | None = None  # (pid, port) of the server the feed follows
        self._asked: Ask | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def wanted(self) -> bool:
        return bool(self.owners)

    def want(self, owner: object, on: bool) -> None:
        (self.owners.add if on else self.owners.discard)(owner)
        self.refresh()

    def connected(self) -> None:
        """A new agent polls nothing: ask again."""
        self._asked = None
        self.refresh()

    def refresh(self) -> None:
        """Send the request the state calls for, when it differs from the last one sent."""
        ask = self._ask()
        if ask == self._asked or (ask is None and self._asked is None):
            return
        message = ask.message() if ask is not None else {"op": "serving", "interval": 0}
        self._asked = ask
        with contextlib.suppress(RuntimeError):  # no running loop: nothing is connected either
            self._task = asyncio.get_running_loop().create_task(self._send(message))

    async def _send(self, message: dict[str, Any]) -> None:
        from gdnconsole.host.replies import LinkLost

        try:
            await self.session.send(message)
        except LinkLost:
            self._asked = None  # asked again once connected

    def _ask(self) -> Ask | None:
        server = self.session.server
        if not self.owners or server is None or server.port is None:
            return None
        from gdnconsole.host.serving import api_key, bind_host

        argv = self.server_argv()
        feed = self.feed
        if feed is not None and feed.figures is not None:
            paths: tuple[str, ...] = (LOADS, SERVER_INFO) if feed.metrics_off else (METRICS, SERVER_INFO)
        else:
            paths = PATHS
        interval = FAST_S if quiet_paths(argv, paths) else QUIET_S
        return Ask(bind_host(argv), server.port, interval, paths, api_key(argv))

    def slow_words(self) -> str | None:
        """Why the polls come every QUIET_S seconds, and the server flag that would let them come each
        second; None when they already do, or nothing is polled."""
        ask = self._asked
        if ask is None or ask.interval <= FAST_S:
            return None
        return (
            f"polled every {ask.interval:g} s, as each poll writes access-log lines; launch with "
            f"{EXCLUDE_FLAG} {' '.join(ask.paths)} for a poll each second"
        )

    def shown(self) -> ServingFigures | None:
        """What to show of the server now: the feed's figures (the polls', or the log's last Decode line
        once polls bring nothing), else before any poll the log's last Decode line, else None."""
        from gdnconsole.sglang.servingfigures import from_decode

        feed = self.feed
        if feed is not None and feed.figures is not None:
            return feed.figures
        points = self.session.decode_points
        if points and self.session.server is not None:
            return from_decode(points[-1], self.session.facts.sglang)
        return None

    def _keep(self) -> None:
        if self.keep is not None and self.feed is not None and self._feed_of is not None and self.feed.polls:
            self.keep(self._feed_of[0], self.feed.summary())

    def take(self, message: dict[str, Any]) -> None:
        """A ``serving`` frame: into the feed of the server it was polled from."""
        round_ = ServingRound.parse(message)
        server = self.session.server
        if round_ is None or server is None or round_.port != server.port:
            return  # damaged, or a poll of the server before this one
        # The feed, and prometheus_client's parser with it, load with the first poll, not with the session.
        from gdnconsole.host.servingfeed import ServingFeed

        key = (server.pid, round_.port)
        if self.feed is None or self._feed_of != key:
            self._keep()
            self.feed = ServingFeed(version=self.session.facts.sglang, pools=pools_of(self.session.startup))
            self._feed_of = key
        had = self.feed.figures is not None
        self.feed.pools = pools_of(self.session.startup)
        polls = self.feed.polls
        self.feed.take(round_)
        points = self.session.decode_points
        if self.feed.problem is not None and points:
            self.feed.take_log(points[-1])
        if self.feed.polls != polls and self.feed.polls % KEEP_EVERY == 0:
            self._keep()
        if not had and self.feed.figures is not None:
            self.refresh()  # the first figures say which source to keep asking
        self.session.notify("figures")
