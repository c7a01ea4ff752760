"""Shutdown and fault scenarios of the simulated server, judged by its log, exit status and /proc."""

from __future__ import annotations

import os
import signal
import socket

import httpx
import pytest
from test_server_harness import CT129, Servers, alive, servers_fixture, wait_until

QWEN8 = ["--model-path", "Qwen/Qwen3-8B"]


@pytest.fixture
def servers(sim_host, tmp_path):
    yield from servers_fixture(sim_host, tmp_path)


def test_sigterm_drains_running_requests(servers: Servers):
    server = servers.start(*QWEN8, sim={"tokens_per_s": 100.0})
    server.wait_ready()
    kids = server.descendants()
    # 2 s of answer at 100 tok/s: still running when the drain and the health check look, however loaded
    # the machine (at 40 tokens, 0.4 s, a loaded run once saw the request end, and the server with it).
    body = {"messages": [{"role": "user", "content": "long"}], "max_tokens": 200, "stream": True}
    with server.client() as client, client.stream("POST", "/v1/chat/completions", json=body) as response:
        lines = response.iter_lines()
        next(lines)  # the first chunk: the request is running
        server.proc.send_signal(signal.SIGTERM)
        server.wait_for(
            r"\] SIGTERM received\. signum=None frame=None\. Draining requests and shutting down\.\.\.$"
        )
        server.wait_for(
            r"\] Gracefully exiting\.\.\. Remaining number of requests 1\. Remaining requests remaining_rids=\['\w+'\]\.$"
        )
        with httpx.Client() as other:
            assert other.get(server.url("/health")).status_code == 503
        rest = [line for line in lines if line.startswith("data: ")]
    assert rest[-1] == "data: [DONE]"  # the running request finished
    assert server.wait_exit() == -signal.SIGKILL  # kill_process_tree(include_parent=True)
    assert "Health check request received during shutdown. Returning 503." in server.text()
    wait_until(lambda: not any(alive(pid) for pid in kids), what="children gone")


def test_sigterm_before_uvicorn_kills_by_signal(servers: Servers):
    server = servers.start(*QWEN8, sim={"scenario": "hang-graph"})
    server.wait_for(r"Capturing batches")
    kids = server.descendants()
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait_exit() == -signal.SIGTERM  # default action: no handler yet
    wait_until(lambda: not any(alive(pid) for pid in kids), what="children gone (PDEATHSIG)")


def test_sigterm_after_uvicorn_before_first_request(servers: Servers):
    server = servers.start(*QWEN8, "--skip-server-warmup")
    server.wait_ready()
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait_exit() == -signal.SIGTERM  # uvicorn shuts down, then re-raises the signal
    text = server.text()
    for line in (
        "INFO:     Shutting down",
        "INFO:     Waiting for application shutdown.",
        "INFO:     Application shutdown complete.",
        "INFO:     Finished server process [",
    ):
        assert line in text


def test_sigkill_takes_children_down(servers: Servers):
    server = servers.start(*CT129)
    server.wait_for(r"TP1\] Load weight begin")
    kids = server.descendants()
    assert len(kids) == 3
    server.proc.kill()
    server.wait_exit()
    wait_until(lambda: not any(alive(pid) for pid in kids), what="children gone (PDEATHSIG)")


def test_crash_serving(servers: Servers):
    server = servers.start(*CT129, sim={"scenario": "crash-serving"})
    server.wait_ready()
    with server.client(timeout=20.0) as client, pytest.raises(httpx.TransportError):
        client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
    assert server.wait_exit() != 0
    text = server.text()
    assert "TP0] Scheduler hit an exception: Traceback (most recent call last):" in text
    assert "RuntimeError: CUDA error: an illegal memory access was encountered" in text
    assert "] SIGQUIT received. signum=None, frame=None. It usually means one child failed." in text


def test_oom_during_graph_capture(servers: Servers):
    server = servers.start(*CT129, sim={"scenario": "oom-graph"})
    assert server.wait_exit() != 0
    text = server.text()
    assert "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate " in text
    assert "Possible solutions:\n1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n" in text
    assert "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)" in text
    assert "] Received sigquit from a child process. It usually means the child failed." in text
    assert "Uvicorn running" not in text


def test_nccl_error_during_dist_init(servers: Servers):
    server = servers.start(*CT129, sim={"scenario": "nccl-error"})
    assert server.wait_exit() != 0
    text = server.text()
    assert "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)" in text
    assert "Load weight begin" not in text


def test_hang_graph_stops_making_progress(servers: Servers):
    server = servers.start(*QWEN8, sim={"scenario": "hang-graph"})
    server.wait_for(r"Capturing batches")
    last = {"size": -1, "stable": 0}

    def unchanged_for_a_while() -> bool:  # at speed 50, 40 polls are minutes of simulated time
        size = os.path.getsize(server.log)
        last["stable"] = last["stable"] + 1 if size == last["size"] else 0
        last["size"] = size
        return last["stable"] >= 40

    wait_until(unchanged_for_a_while, what="a quiet log")
    assert server.proc.poll() is None
    assert "Capture cuda graph end" not in server.text()


def test_health_fail_after_ready(servers: Servers):
    server = servers.start(*QWEN8, sim={"scenario": "health-fail"})
    server.wait_ready()
    with server.client() as client:
        assert client.get("/health").status_code == 503
        with pytest.raises(httpx.ReadTimeout):
            client.post(
                "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}, timeout=0.5
            )
    server.wait_for(
        r"\] Health check failed\. Server couldn't get a response from detokenizer for last 20 seconds\. tic start time: \d\d:\d\d:\d\d\. last_heartbeat time: \d\d:\d\d:\d\d$"
    )


@pytest.mark.parametrize("real", [False, True])
def test_port_in_use(servers: Servers, real: bool):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        sim = {} if real else {"scenario": "port-in-use"}
        server = servers.start(*QWEN8, sim=sim, port=port if real else None)
        assert server.wait_exit() == 1
    text = server.text()
    expected = f"ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', {server.port}): address already in use"
    assert expected in text
    assert text.index("Application startup complete.") < text.index(expected)
    assert "Uvicorn running" not in text


def test_topk_adjusted_warning(servers: Servers):
    args = [
        "--model-path",
        "Qwen/Qwen3.6-27B",
        "--tp",
        "2",
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-steps",
        "2",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "5",
        "--mamba-scheduler-strategy",
        "extra_buffer",
    ]
    server = servers.start(*args, sim={"scenario": "nccl-error"})
    server.wait_exit()
    text = server.text()
    assert (
        "] speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"
        in text
    )
    assert "speculative_num_draft_tokens=3," in text and "max_running_requests=48," in text
    assert "] Max running requests is reset to 48 for speculative decoding." in text
