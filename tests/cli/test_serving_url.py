"""`gdnconsole serving URL`: any SGLang server reached directly, as a script runs it.

The server here is a real HTTP server on 127.0.0.1 that serves a page SGLang 0.5.23's own collectors
rendered (tests/sglang/data), or says 404 for /metrics as a server without --enable-metrics does.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.httpanswers import Answering, serving
from tests.sglang.servingdata import loads_0523, page, server_info
from tests.sshhosts import free_loopback_port

pytestmark = pytest.mark.functional  # an agent or a CLI process, and an HTTP server on 127.0.0.1
GDNCONSOLE = [sys.executable, "-m", "gdnconsole"]
RANK_KEYS = {"dp_rank", "running", "queued", "max_running", "token_usage", "gen_throughput", "accept_length"}
LATENCY_KEYS = {"p50", "p90", "p99", "count", "window"}


@dataclass
class Served:
    metrics: bool = True
    key: str | None = None
    seen_keys: list[str | None] = field(default_factory=list)


def handler_for(served: Served) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(Answering):
        def do_GET(self) -> None:
            served.seen_keys.append(self.headers.get("Authorization"))
            if (
                served.key
                and self.path != "/metrics"
                and self.headers.get("Authorization") != f"Bearer {served.key}"
            ):
                self.answer(401, b'{"error": "Unauthorized"}')
            elif self.path == "/metrics" and served.metrics:
                self.answer(200, page("0.5.23").encode(), "text/plain; version=0.0.4; charset=utf-8")
            elif self.path == "/v1/loads":
                self.answer(200, json.dumps(loads_0523()).encode())
            elif self.path == "/server_info":
                self.answer(200, json.dumps(server_info("0.5.23", 2)).encode())
            else:
                self.answer(404, b'{"detail": "Not Found"}')

    return Handler


@pytest.fixture
def served() -> Iterator[tuple[Served, str]]:
    state = Served()
    with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_for(state))) as server:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GDNCONSOLE, "serving", *args], capture_output=True, text=True, timeout=60)


def test_json_is_one_line_in_the_issues_shape(served: tuple[Served, str]) -> None:
    _, url = served
    done = run(url, "--json")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    data = json.loads(lines[0])
    assert set(data) == {"source", "version", "ranks", "ttft_s", "e2e_s", "itl_s", "queue_s"}
    assert data["source"] == "metrics" and data["version"] == "0.5.23"
    assert [r["dp_rank"] for r in data["ranks"]] == [0, 1]  # every DP group, not only the first
    assert all(set(r) >= RANK_KEYS for r in data["ranks"])
    assert set(data["ttft_s"]) == LATENCY_KEYS and data["ttft_s"]["window"] == "since start"


def test_metrics_off_reads_v1_loads_and_its_latencies_are_null(served: tuple[Served, str]) -> None:
    state, url = served
    state.metrics = False
    done = run(url, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["source"] == "loads"
    assert data["ttft_s"] is None and data["e2e_s"] is None and data["itl_s"] is None


def test_the_table_names_its_source_and_shows_no_zero_for_what_is_not_collected(
    served: tuple[Served, str],
) -> None:
    state, url = served
    state.metrics = False
    done = run(url)
    assert done.returncode == 0, done.stderr
    assert "from /v1/loads (metrics off)" in done.stdout
    assert "needs --enable-metrics" in done.stdout
    assert "—" in done.stdout  # cache hit rate, aborted: not collected without metrics


def test_the_api_key_goes_as_a_bearer_token(served: tuple[Served, str]) -> None:
    state, url = served
    state.key = "s3cret"
    done = run(url, "--json", "--api-key", "s3cret")
    assert done.returncode == 0, done.stderr
    assert "Bearer s3cret" in state.seen_keys
    assert "s3cret" not in done.stdout + done.stderr


def test_an_unreachable_server_exits_3() -> None:
    done = run(f"http://127.0.0.1:{free_loopback_port()}", "--json")
    assert done.returncode == 3
    assert done.stdout == "" and "no figures" in done.stderr


def test_a_target_that_is_neither_host_nor_url_is_a_usage_error() -> None:
    done = run("ftp://example.invalid/x")
    assert done.returncode == 2 and "http(s)://HOST:PORT" in done.stderr
