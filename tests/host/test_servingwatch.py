"""The serving watch: what it asks the agent, when, and what it keeps for the journal.

A stand-in host with the few attributes the watch's protocol reads; the agent's side is
tests/host/test_agent_serving.py, the whole path on a simulated host tests/cli/test_serving_cli.py.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from gdnconsole.host.journal import Attempt, Journal, Served
from gdnconsole.host.replies import LinkLost
from gdnconsole.host.servingfeed import ServingFeed
from gdnconsole.host.servingwatch import FAST_S, QUIET_S, ServingWatch
from gdnconsole.host.state import HostFacts, Server
from gdnconsole.host.topics import Topic
from gdnconsole.sglang.decodepoints import DecodePoint, parse
from tests.host.test_servingfeed import ttft_page

EXCLUDING = ("--uvicorn-access-log-exclude-prefixes", "/metrics", "/v1/loads", "/server_info")


@dataclass
class Host:
    server: Server | None = None
    facts: HostFacts = field(default_factory=lambda: HostFacts("0.5.23", "9.0", 1, 143771.0))
    startup: None = None
    decode_points: list[DecodePoint] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    topics: list[Topic] = field(default_factory=list)
    up: bool = True

    def notify(self, topic: Topic) -> None:
        self.topics.append(topic)

    async def send(self, message: dict[str, Any]) -> None:
        if not self.up:
            raise LinkLost("not connected")
        self.sent.append(message)


def server(pid: int = 41, port: int = 30000, *args: str) -> Server:
    return Server(
        pid=pid, cmdline=("python", "-m", "sglang.launch_server", "--port", str(port), *args), port=port
    )


def frame(t: float, port: int = 30000, running: int = 2) -> dict[str, Any]:
    body = ttft_page((1, 1, 1, 1), running=running)
    reply = {"path": "/metrics", "status": 200, "error": None, "ms": 1.0, "body": body, "truncated": False}
    return {"type": "serving", "t": t, "host": "127.0.0.1", "port": port, "replies": [reply]}


def feed_of(watch: ServingWatch) -> ServingFeed | None:
    return watch.feed  # read afresh: mypy would keep an earlier narrowing of the attribute


async def settled() -> None:
    for _ in range(3):
        await asyncio.sleep(0)  # the watch sends from a task of its own


async def test_it_asks_only_while_wanted_and_stops_when_the_last_owner_goes() -> None:
    host = Host(server=server())
    watch = ServingWatch(host, lambda: list(host.server.cmdline) if host.server else [])
    a, b = object(), object()
    watch.want(a, True)
    watch.want(b, True)
    await settled()
    assert len(host.sent) == 1
    ask = host.sent[0]
    assert ask["port"] == 30000 and ask["host"] == "127.0.0.1"
    assert ask["interval"] == QUIET_S  # every poll would be an access-log line
    assert ask["paths"] == ["/metrics", "/v1/loads", "/server_info"]
    watch.want(a, False)
    await settled()
    assert len(host.sent) == 1
    watch.want(b, False)
    await settled()
    assert host.sent[-1] == {"op": "serving", "interval": 0}


async def test_a_server_that_excludes_our_paths_is_polled_every_second_then_asked_less() -> None:
    host = Host(server=server(41, 30000, *EXCLUDING))
    watch = ServingWatch(host, lambda: list(host.server.cmdline) if host.server else [])
    watch.want(object(), True)
    await settled()
    assert host.sent[-1]["interval"] == FAST_S
    watch.take(frame(1.0))
    await settled()
    assert host.sent[-1]["paths"] == ["/metrics", "/server_info"]  # /metrics answered: no /v1/loads
    assert host.topics == ["figures"]
    assert watch.slow_words() is None


async def test_a_server_that_logs_our_polls_is_polled_slowly_and_says_what_would_change_it() -> None:
    host = Host(server=server(41, 30000))
    watch = ServingWatch(host, lambda: list(host.server.cmdline) if host.server else [])
    assert watch.slow_words() is None  # nothing asked yet
    watch.want(object(), True)
    await settled()
    assert host.sent[-1]["interval"] == QUIET_S
    assert watch.slow_words() == (
        f"polled every {QUIET_S:g} s, as each poll writes access-log lines; launch with "
        "--uvicorn-access-log-exclude-prefixes /metrics /v1/loads /server_info for a poll each second"
    )


async def test_frames_of_another_port_are_dropped_and_a_new_server_gets_a_new_feed() -> None:
    host = Host(server=server())
    watch = ServingWatch(host, lambda: [])
    watch.want(object(), True)
    watch.take(frame(1.0, port=31000))
    assert feed_of(watch) is None
    watch.take(frame(1.0))
    first = feed_of(watch)
    host.server = server(pid=52)
    watch.take(frame(2.0))
    second = feed_of(watch)
    assert second is not None
    assert second is not first and second.polls == 1


async def test_a_lost_link_is_asked_again_once_connected() -> None:
    host = Host(server=server(), up=False)
    watch = ServingWatch(host, lambda: [])
    watch.want(object(), True)
    await settled()
    assert host.sent == []
    host.up = True
    watch.connected()
    await settled()
    assert len(host.sent) == 1


async def test_what_the_server_did_is_kept_every_30_polls_and_when_the_server_changes() -> None:
    host = Host(server=server())
    kept: list[tuple[int, Served]] = []
    watch = ServingWatch(host, lambda: [], lambda pid, served: kept.append((pid, served)))
    watch.want(object(), True)
    for t in range(30):
        watch.take(frame(float(t), running=t % 7))
    assert [pid for pid, _ in kept] == [41]
    assert kept[0][1].peak_running == 6 and kept[0][1].polls == 30
    host.server = server(pid=52)
    watch.take(frame(31.0))
    assert [pid for pid, _ in kept] == [41, 41]


def test_the_journal_keeps_served_and_reads_damage_as_nothing(tmp_path: Any) -> None:
    journal = Journal("ct129", tmp_path / "journal.jsonl")
    attempt: Attempt = journal.begin("p", ["--tp", "1"], {})
    attempt.pid = 41
    attempt.served = Served(9, 0.58, 812.5, 2.9, 30)
    journal.update(attempt)
    again = journal.of_pid(41)
    assert again is not None and again.served == Served(9, 0.58, 812.5, 2.9, 30)
    assert Served.parse({"peak_running": -1, "ttft_p90_s": "fast", "polls": True}) == Served(
        None, None, None, None, 0
    )
    assert Served.parse("x") is None


DECODE = (
    "[2026-07-14 10:40:24] Decode batch, #running-req: 2, #full token: 21312, full token usage: 0.01, "
    "mamba num: 8, mamba usage: 0.05, accept len: 3.36, accept rate: 0.79, cuda graph: True, "
    "gen throughput (token/s): 551.63, #queue-req: 0"
)  # shared/sglang/logs/13-qwen36-0.5.15-mamba-mtp-decode-then-crash.log:1


def test_the_log_is_the_last_resort_and_says_so() -> None:
    point = parse(DECODE)
    assert point is not None
    host = Host(server=server(), decode_points=[point])
    watch = ServingWatch(host, lambda: [])
    shown = watch.shown()
    assert shown is not None and shown.source == "log"
    (rank,) = shown.ranks
    assert (rank.running, rank.queued, rank.token_usage, rank.mamba_usage) == (2, 0, 0.01, 0.05)
    assert (rank.gen_throughput, rank.accept_length) == (551.63, 3.36)
    assert rank.max_running is None and rank.cache_hit_rate is None and shown.ttft_s is None
    watch.want(object(), True)
    watch.take(frame(1.0))
    polled = watch.shown()
    assert polled is not None and polled.source == "metrics"
    watch.take({**frame(2.0), "replies": [{"path": "/metrics", "status": None, "error": "timed out"}]})
    again = watch.shown()
    assert again is not None and again.source == "log"  # the poll failed: the log's line is newer
