"""The agent's ``serving`` op: a server's own endpoints polled on the host, from a thread of the agent's own.

A real agent subprocess (as the console starts it) against a real HTTP server on 127.0.0.1 that answers,
refuses, or hangs until the test lets it go. Waits are on messages, with a deadline; nothing sleeps.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
from collections.abc import Iterator

import pytest

from tests.host.test_agent import PY38, Agent
from tests.httpanswers import Answering, serving

pytestmark = pytest.mark.functional  # an agent or a CLI process, and an HTTP server on 127.0.0.1
METRICS = '# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{tp_rank="0"} 3.0\n'


class Endpoints(http.server.ThreadingHTTPServer):
    """/metrics answers, /v1/loads is JSON, /server_info needs the key, /hung waits for ``release``."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.release = threading.Event()
        self.connections = 0
        self.paths: list[str] = []
        self.lock = threading.Lock()


class Handler(Answering):
    protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn
    server: Endpoints

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.paths.append(self.path)
        if self.path == "/hung":
            self.server.release.wait(30)
            return
        if self.path == "/metrics":
            self.answer(200, METRICS.encode(), "text/plain; version=0.0.4")
        elif self.path == "/v1/loads":
            self.answer(200, json.dumps({"loads": [{"dp_rank": 0, "num_running_reqs": 3}]}).encode())
        elif self.path == "/server_info" and self.headers.get("Authorization") == "Bearer s3cret":
            self.answer(200, b'{"version": "0.5.23"}')
        elif self.path == "/server_info":
            self.answer(401, b'{"error": "Unauthorized"}')
        else:
            self.answer(404, b'{"detail": "Not Found"}')


@pytest.fixture
def endpoints() -> Iterator[Endpoints]:
    with serving(Endpoints()) as server:
        try:
            yield server
        finally:
            server.release.set()  # a hung handler ends before the server shuts


@pytest.fixture
def agent() -> Iterator[Agent]:
    started = Agent(dict(os.environ))
    yield started
    started.kill()


def port_of(server: Endpoints) -> int:
    return int(server.server_address[1])


def test_each_path_answered_in_one_round_on_one_connection(agent: Agent, endpoints: Endpoints) -> None:
    paths = ["/metrics", "/v1/loads", "/server_info", "/nowhere"]
    agent.send(op="serving", port=port_of(endpoints), api_key="s3cret", paths=paths)
    first = agent.next("serving")
    second = agent.next("serving")
    replies = {r["path"]: r for r in first["replies"]}
    assert [r["path"] for r in first["replies"]] == paths
    assert replies["/metrics"]["status"] == 200 and replies["/metrics"]["body"] == METRICS
    assert json.loads(replies["/v1/loads"]["body"])["loads"][0]["num_running_reqs"] == 3
    assert replies["/server_info"]["status"] == 200  # the key went as a bearer token
    assert replies["/nowhere"]["status"] == 404
    assert all(r["error"] is None and r["truncated"] is False for r in first["replies"])
    assert first["host"] == "127.0.0.1" and first["port"] == port_of(endpoints)
    assert second["t"] >= first["t"]
    assert endpoints.connections == 1  # keep-alive: two rounds, eight requests, one accept


def test_a_hung_endpoint_times_out_and_never_holds_the_agent(agent: Agent, endpoints: Endpoints) -> None:
    agent.send(op="serving", port=port_of(endpoints), timeout=0.5, paths=["/hung", "/metrics"])
    agent.send(op="ping", id=1)
    pong = agent.next("pong")  # answered while the poll's thread waits on /hung
    assert pong["id"] == 1
    frame = agent.next("serving")
    hung, metrics = frame["replies"]
    assert hung["status"] is None and hung["error"] == "timed out after 0.5 s"
    assert metrics["status"] == 200  # a new connection after the one that timed out


def test_a_refused_port_is_said_not_raised(agent: Agent, endpoints: Endpoints) -> None:
    port = port_of(endpoints)
    endpoints.shutdown()
    endpoints.server_close()
    agent.send(op="serving", port=port, paths=["/metrics"])
    (reply,) = agent.next("serving")["replies"]
    assert reply["status"] is None and "refused" in reply["error"].lower()


def test_interval_zero_stops_and_a_new_request_replaces(agent: Agent, endpoints: Endpoints) -> None:
    agent.send(op="serving", port=port_of(endpoints), paths=["/metrics"])
    agent.next("serving")
    agent.send(op="serving", port=port_of(endpoints), paths=["/v1/loads"])
    assert agent.next("serving", lambda m: m["replies"][0]["path"] == "/v1/loads")
    agent.send(op="serving", interval=0)
    agent.send(op="ping", id=2)
    agent.next("pong")  # the stop was handled; any frame after it comes from a round already in flight


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        ({"port": 0}, "port 1-65535"),
        ({"port": "30000"}, "port 1-65535"),
        ({"host": ""}, "port 1-65535"),
        ({"api_key": 7}, "api_key"),
        ({"timeout": 0}, "timeout > 0"),
        ({"paths": ["metrics"]}, "start with /"),
        ({"interval": "fast"}, "interval must be a number"),
    ],
)
def test_bad_requests_get_an_error(agent: Agent, request_fields: dict[str, object], message: str) -> None:
    error = agent.request("error", op="serving", **request_fields)
    assert error["op"] == "serving" and message in error["message"]


@pytest.mark.skipif(not PY38.exists(), reason="no Python 3.8 here")
def test_the_poll_runs_on_python_38(endpoints: Endpoints) -> None:
    old = Agent(dict(os.environ), str(PY38))
    try:
        old.send(op="serving", port=port_of(endpoints), timeout=0.5, paths=["/metrics", "/hung"])
        metrics, hung = old.next("serving")["replies"]
        assert metrics["body"] == METRICS and hung["error"] == "timed out after 0.5 s"
    finally:
        old.kill()
