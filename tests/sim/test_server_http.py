"""The simulated server's HTTP side: OpenAI chat (streamed and not), API key, reasoning, info endpoints,
and the batch lines TP0 logs while serving."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from test_server_harness import CT129, Server, Servers, servers_fixture

FAST = {"tokens_per_s": 500.0}
MESSAGES = [{"role": "user", "content": "What is on this GPU box?"}]


@pytest.fixture
def servers(sim_host, tmp_path):
    yield from servers_fixture(sim_host, tmp_path)


@pytest.fixture
def ct129(servers: Servers) -> Server:
    server = servers.start(*CT129, "--decode-log-interval", "1", "--reasoning-parser", "qwen3", sim=FAST)
    server.wait_ready()
    return server


def sse_events(response: httpx.Response) -> list[str]:
    return [line[len("data: ") :] for line in response.iter_lines() if line.startswith("data: ")]


def test_streamed_chat_with_usage_and_reasoning(ct129: Server):
    body = {
        "model": "x",
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 30,
    }
    with ct129.client() as client, client.stream("POST", "/v1/chat/completions", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    kinds = [next(iter(d)) for d in deltas[1:] if d]
    assert kinds[0] == "reasoning_content"  # reasoning first, then the answer
    assert kinds == sorted(kinds, key=lambda k: k != "reasoning_content")
    usage = chunks[-1]
    assert usage["choices"] == [] and usage["usage"]["completion_tokens"] == 30
    assert [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"] == "length"]


def test_non_streamed_chat_is_deterministic_and_honours_max_tokens(ct129: Server):
    body = {"messages": MESSAGES, "max_tokens": 12, "chat_template_kwargs": {"enable_thinking": False}}
    with ct129.client() as client:
        first = client.post("/v1/chat/completions", json=body).json()
        second = client.post("/v1/chat/completions", json=body).json()
        unlimited = client.post("/v1/chat/completions", json={"messages": MESSAGES}).json()
    message = first["choices"][0]["message"]
    assert first["object"] == "chat.completion"
    assert message["content"] and message["reasoning_content"] is None
    assert message["content"] == second["choices"][0]["message"]["content"]
    assert first["usage"]["completion_tokens"] == 12 and first["choices"][0]["finish_reason"] == "length"
    assert unlimited["choices"][0]["finish_reason"] == "stop"
    assert unlimited["choices"][0]["message"]["reasoning_content"]


def test_batch_lines_and_server_info(ct129: Server):
    with ct129.client() as client:
        client.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 8})
        info = client.get("/server_info").json()
    text = ct129.text()
    assert re.search(
        r"TP0\] Decode batch, #running-req: \d+, #full token: \d+, full token usage: [\d.]+, mamba num: \d+, "
        r"mamba usage: [\d.]+, accept len: [\d.]+, accept rate: [\d.]+, cuda graph: True, "
        r"gen throughput \(token/s\): [\d.]+, #queue-req: 0$",
        text,
        re.M,
    )
    assert "TP1] Decode batch" not in text
    state = info["internal_states"][0]
    assert 1.0 <= state["avg_spec_accept_length"] <= 2.0
    assert state["memory_usage"]["weight"] == 25.64
    assert info["version"] == "0.5.11" and info["tp_size"] == 2 and info["speculative_algorithm"] == "EAGLE"


def test_info_endpoints(ct129: Server):
    with ct129.client() as client:
        models = client.get("/v1/models").json()
        model_info = client.get("/model_info").json()
        client.get("/get_model_info")
        flushed = client.post("/flush_cache")
        health = client.get("/health")
    assert models["data"][0]["id"] == "Qwen/Qwen3.6-27B" and models["data"][0]["max_model_len"] == 262144
    assert model_info["architectures"] == ["Qwen3_5ForConditionalGeneration"]
    assert flushed.status_code == 200 and flushed.text.startswith("Cache flushed.")
    assert health.status_code == 200
    text = ct129.text()
    assert (
        "] Endpoint '/get_model_info' is deprecated and will be removed in a future version. Please use '/model_info' instead."
        in text
    )
    assert re.search(r"\] INFO:     127\.0\.0\.1:\d+ - \"GET /health HTTP/1\.1\" 200 OK$", text, re.M)


def test_api_key(servers: Servers):
    server = servers.start("--model-path", "Qwen/Qwen3-8B", "--api-key", "sekret", sim=FAST)
    server.wait_ready()
    body = {"messages": MESSAGES, "max_tokens": 4}
    with server.client() as client:
        assert client.post("/v1/chat/completions", json=body).status_code == 401
        wrong = {"Authorization": "Bearer nope"}
        assert client.post("/v1/chat/completions", json=body, headers=wrong).status_code == 401
        ok = client.post("/v1/chat/completions", json=body, headers={"Authorization": "Bearer sekret"})
        assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["reasoning_content"] is None
        assert client.get("/health").status_code == 200  # health stays open, as in SGLang


def test_log_level_http_warning_hides_access_lines(servers: Servers):
    server = servers.start("--model-path", "Qwen/Qwen3-8B", "--log-level-http", "warning", sim=FAST)
    server.wait_ready()
    assert "GET /model_info" not in server.text()
