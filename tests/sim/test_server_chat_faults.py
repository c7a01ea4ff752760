"""The simulated server's chat side under test conditions: a steady decode rate, the chat faults a client
must survive (switched on a running server through sim.json), and 0.5.23's per-request ``meta_info``.

Servers are shared by the whole module (started once, each at its own version and speed); a fault test
sets ``chat_fault`` for its own duration and puts ``none`` back. The only timing assertion is the decode
rate itself.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from test_server_harness import CT129, Server, Servers

from gdnconsole.host.simhome import prepare_home
from tests.conftest import SimHost

DENSE = ["--model-path", "Qwen/Qwen3-8B", "--tp", "1", "--reasoning-parser", "qwen3"]
CT129_0523 = [a for a in CT129 if a not in ("--mamba-scheduler-strategy", "extra_buffer")]
RATE = 40.0
LONG = [{"role": "user", "content": "Tell me about GPU 69."}]  # 24 reasoning + 40 answer tokens
SHORT = [{"role": "user", "content": "What is on this GPU box?"}]
CHAT = "/v1/chat/completions"


@pytest.fixture(scope="module")
def module_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """A module-wide ``servers`` (the suite's ``sim_host`` lives only as long as one test)."""
    tmp = tmp_path_factory.mktemp("chat_faults")
    count = 0

    def make(**simulate: object) -> SimHost:
        nonlocal count
        count += 1
        home = tmp / f"simhost{count}"
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env.update(prepare_home(home, {"speed": 50.0, "release_lag_s": 0.0, **simulate}))
        return SimHost(home=home, env=env)

    servers = Servers(make, tmp)
    try:
        yield servers
    finally:
        servers.close()


@pytest.fixture(scope="module")
def dense(module_servers: Servers) -> Server:
    """0.5.23 without speculative decoding, at a rate slow enough to measure."""
    server = module_servers.start(*DENSE, sim={"sglang": "0.5.23", "tokens_per_s": RATE})
    server.wait_ready()
    return server


@pytest.fixture(scope="module")
def spec23(module_servers: Servers) -> Server:
    args = [*CT129_0523, "--reasoning-parser", "qwen3"]
    server = module_servers.start(*args, sim={"sglang": "0.5.23", "tokens_per_s": 500.0})
    server.wait_ready()
    return server


@pytest.fixture(scope="module")
def spec11(module_servers: Servers) -> Server:
    server = module_servers.start(*CT129, sim={"tokens_per_s": 500.0})
    server.wait_ready()
    return server


def set_fault(server: Server, fault: str) -> None:
    """Rewrite the running server's sim.json (atomically: the server reads it on every chat request)."""
    path = server.home / "sim.json"
    table = json.loads(path.read_text())
    table["chat_fault"] = fault
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(table))
    os.replace(tmp, path)


@pytest.fixture
def fault(dense: Server) -> Iterator[Callable[[str], None]]:
    """Set ``dense``'s chat fault for one test; ``none`` again afterwards."""
    yield lambda value: set_fault(dense, value)
    set_fault(dense, "none")


def body(messages: list[dict[str, str]] = SHORT, **extra: object) -> dict[str, object]:
    return {"model": "x", "messages": messages, **extra}


def stream_lines(response: httpx.Response, got: list[str]) -> None:
    """Collect the SSE ``data:`` payloads into ``got`` (so that they survive an exception)."""
    for line in response.iter_lines():
        if line.startswith("data: "):
            got.append(line[len("data: ") :])


def http_request(port: int, payload: dict[str, object]) -> bytes:
    data = json.dumps(payload).encode()
    head = (
        f"POST {CHAT} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    return head.encode() + data


# --- decode rate -------------------------------------------------------------------------------------------


def measure_rate(server: Server) -> tuple[float, int]:
    """Tokens per second as serving benchmarks measure it: ``(n - 1) / (t_last - t_first)``."""
    stamps: list[float] = []
    usage: dict[str, int] = {}
    payload = body(LONG, stream=True, stream_options={"include_usage": True})
    with server.client() as client, client.stream("POST", CHAT, json=payload) as response:
        for line in response.iter_lines():
            if not line.startswith("data: {"):
                continue
            chunk = json.loads(line[len("data: ") :])
            if chunk["choices"] and any(
                chunk["choices"][0]["delta"].get(k) for k in ("content", "reasoning_content")
            ):
                stamps.append(time.perf_counter())
            usage = chunk.get("usage") or usage
    tokens = usage["completion_tokens"]
    assert tokens == len(stamps) >= 40
    return (tokens - 1) / (stamps[-1] - stamps[0]), tokens


def test_a_streamed_answer_comes_token_by_token(dense: Server):
    """Each token its own chunk, spread over the answer (the rate itself is bench_stream_rate.py's to
    measure: a test on a loaded machine cannot tell a slow server from a slow machine)."""
    rate, tokens = measure_rate(dense)
    assert tokens >= 40 and rate > 0


# --- faults ------------------------------------------------------------------------------------------------


def test_hang_sends_nothing_and_keeps_the_connection(dense: Server, fault):
    fault("hang")
    with socket.create_connection(("127.0.0.1", dense.port), timeout=5) as sock:
        sock.sendall(http_request(dense.port, body(stream=True)))
        sock.settimeout(1.0)
        with pytest.raises(TimeoutError):
            sock.recv(1)  # b"" would mean the server closed it; a byte, that it answered
    with dense.client() as client:  # the rest of the server is unaffected
        assert client.get("/health").status_code == 200
        generated = client.post("/generate", json={"text": "hi", "sampling_params": {"max_new_tokens": 3}})
        assert generated.status_code == 200 and generated.json()["meta_info"]["completion_tokens"] == 3


def test_hang_times_out_a_client(dense: Server, fault):
    fault("hang")
    with dense.client(timeout=httpx.Timeout(5.0, read=0.5)) as client, pytest.raises(httpx.ReadTimeout):
        client.post(CHAT, json=body(max_tokens=4))


def test_drop_streamed_closes_before_the_end(dense: Server, fault):
    fault("drop")
    got: list[str] = []
    with (
        dense.client() as client,
        client.stream("POST", CHAT, json=body(stream=True)) as response,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        assert response.status_code == 200
        stream_lines(response, got)
    chunks = [json.loads(g) for g in got]  # everything that did come is good JSON
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert len(chunks) == 4 and all(c["choices"][0]["finish_reason"] is None for c in chunks)


def test_drop_streamed_on_the_wire(dense: Server, fault):
    """No terminating chunk: the server closes the socket after the last data chunk."""
    fault("drop")
    received = b""
    with socket.create_connection(("127.0.0.1", dense.port), timeout=10) as sock:
        sock.sendall(http_request(dense.port, body(stream=True)))
        while data := sock.recv(65536):
            received += data
    assert received.startswith(b"HTTP/1.1 200 OK\r\n") and b"transfer-encoding: chunked" in received
    assert b"data: " in received and b"[DONE]" not in received
    assert not received.endswith(b"0\r\n\r\n")


def test_drop_not_streamed_closes_without_a_response(dense: Server, fault):
    fault("drop")
    with dense.client() as client, pytest.raises(httpx.RemoteProtocolError):
        client.post(CHAT, json=body())
    with socket.create_connection(("127.0.0.1", dense.port), timeout=10) as sock:
        sock.sendall(http_request(dense.port, body()))
        assert sock.recv(65536) == b""


@pytest.mark.parametrize("value", ["bad-sse", "bad-json"])
def test_bad_sse_line_then_the_stream_goes_on(dense: Server, fault, value: str):
    fault(value)
    got: list[str] = []
    payload = body(stream=True, max_tokens=8)
    with dense.client() as client, client.stream("POST", CHAT, json=payload) as response:
        assert response.status_code == 200
        stream_lines(response, got)
    assert got[-1] == "[DONE]"
    assert got[4] == '{"id": broken'
    bad = []
    for payload in got[:-1]:
        try:
            json.loads(payload)
        except ValueError:
            bad.append(payload)
    assert bad == ['{"id": broken']
    assert len(got) == 1 + 8 + 1 + 1 + 1  # role, tokens, the bad line, finish, [DONE]
    assert json.loads(got[-2])["choices"][0]["finish_reason"] == "length"


def test_bad_json_body(dense: Server, fault):
    fault("bad-json")
    with dense.client() as client:
        response = client.post(CHAT, json=body(max_tokens=5))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.text.startswith('{"id": ') and response.text.endswith('"choices": [')
    with pytest.raises(ValueError):
        response.json()


def test_bad_sse_leaves_a_non_streamed_answer_alone(dense: Server, fault):
    fault("bad-sse")
    with dense.client() as client:
        answer = client.post(CHAT, json=body(max_tokens=5)).json()
    assert answer["usage"]["completion_tokens"] == 5


def test_fault_switches_on_a_running_server(dense: Server, fault):
    with dense.client() as client:
        assert client.post(CHAT, json=body(max_tokens=3)).json()["usage"]["completion_tokens"] == 3
        fault("bad-json")
        with pytest.raises(ValueError):
            client.post(CHAT, json=body(max_tokens=3)).json()
        fault("no-such-fault")  # unknown: a normal answer
        assert client.post(CHAT, json=body(max_tokens=3)).json()["usage"]["completion_tokens"] == 3
        fault("bad-json")
        with pytest.raises(ValueError):
            client.post(CHAT, json=body(max_tokens=3)).json()
        fault("none")
        assert client.post(CHAT, json=body(max_tokens=3)).json()["usage"]["completion_tokens"] == 3


# --- return_meta_info ----------------------------------------------------------------------------------------


def test_meta_info_with_speculative_figures_on_0_5_23(spec23: Server):
    with spec23.client() as client:
        answer = client.post(CHAT, json=body(LONG, return_meta_info=True)).json()
        plain = client.post(CHAT, json=body(LONG)).json()
    meta = answer["choices"][0]["meta_info"]
    usage = answer["usage"]
    assert meta["completion_tokens"] == usage["completion_tokens"] == 64
    assert meta["prompt_tokens"] == usage["prompt_tokens"]
    assert 0 < meta["spec_verify_ct"] < 63
    assert 1.0 <= meta["spec_accept_length"] <= 2.0  # NEXTN, one step: 1 or 2 tokens per verify
    assert meta["spec_accept_length"] == pytest.approx(63 / meta["spec_verify_ct"])  # the first from prefill
    assert meta["spec_num_proposed_drafts"] == meta["spec_verify_ct"]
    assert 0.0 <= meta["spec_accept_rate"] <= 1.0
    assert "meta_info" not in plain["choices"][0]


def test_meta_info_with_stream_is_rejected_on_0_5_23(spec23: Server):
    with spec23.client() as client:
        response = client.post(CHAT, json=body(return_meta_info=True, stream=True))
    assert response.status_code == 400
    error = response.json()
    assert error["object"] == "error" and error["type"] == "BadRequestError" and error["code"] == 400
    assert error["param"] is None and "return_meta_info" in error["message"]


def test_meta_info_without_speculation(dense: Server):
    with dense.client() as client:
        answer = client.post(CHAT, json=body(return_meta_info=True, max_tokens=6)).json()
    meta = answer["choices"][0]["meta_info"]
    assert meta["completion_tokens"] == 6 and meta["finish_reason"] == {"type": "length"}
    assert not [k for k in meta if k.startswith("spec_")]


def test_meta_info_is_ignored_by_0_5_11(spec11: Server):
    with spec11.client() as client:
        answer = client.post(CHAT, json=body(return_meta_info=True, max_tokens=6)).json()
        got: list[str] = []
        with client.stream("POST", CHAT, json=body(return_meta_info=True, stream=True)) as response:
            assert response.status_code == 200
            stream_lines(response, got)
    assert "meta_info" not in answer["choices"][0] and answer["usage"]["completion_tokens"] == 6
    assert got[-1] == "[DONE]"


# --- return_spec_tokens_details ----------------------------------------------------------------------------


def test_spec_tokens_details_streamed_and_whole_on_0_5_23(spec23: Server):
    """The request's own speculative figures in the answer's sglext: a chunk with no choices before the
    usage chunk when streamed, the response's sglext when not (523 serving_chat.py:2703-2763, 2865-2895)."""
    with spec23.client() as client:
        answer = client.post(CHAT, json=body(LONG, return_spec_tokens_details=True)).json()
        got: list[str] = []
        streamed = body(LONG, return_spec_tokens_details=True, stream=True)
        streamed["stream_options"] = {"include_usage": True}
        with client.stream("POST", CHAT, json=streamed) as response:
            stream_lines(response, got)
    details = answer["sglext"]["spec_tokens_details"]
    assert 1.0 <= details["spec_accept_length"] <= 2.0 and 0 < details["spec_verify_ct"] < 63
    chunks = [json.loads(line) for line in got if line != "[DONE]"]
    [ext] = [i for i, c in enumerate(chunks) if "sglext" in c]
    usage = next(i for i, c in enumerate(chunks) if c.get("usage"))
    assert chunks[ext]["choices"] == [] and ext == usage - 1  # after the last delta, before the usage
    assert 1.0 <= chunks[ext]["sglext"]["spec_tokens_details"]["spec_accept_length"] <= 2.0


def test_spec_tokens_details_are_not_sent_without_speculation_or_by_0_5_11(dense: Server, spec11: Server):
    for server in (dense, spec11):
        with server.client() as client:
            answer = client.post(CHAT, json=body(max_tokens=6, return_spec_tokens_details=True)).json()
        assert "sglext" not in answer
