"""Every line the simulator writes passes an independent check of SGLang's formats (tests/sglang/facts_formats.py).

The checker is written from FACTS alone, not from the simulator, so the simulator cannot drift from
SGLang without one of these tests failing. The console's own parser must also read each log as the
story it is.
"""

from __future__ import annotations

import httpx
import pytest
from test_server_harness import CT129, Servers, servers_fixture

from gdnconsole.sglang.summary import summary, track
from tests.sglang.facts_formats import check_log, format_findings

DENSE = ["--model-path", "Qwen/Qwen3-8B", "--tp", "1"]
CT129_0523 = [
    "--model-path", "Qwen/Qwen3.6-27B", "--tp", "2", "--speculative-algorithm", "NEXTN",
    "--speculative-num-steps", "1", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2",
    "--mamba-radix-cache-strategy", "extra_buffer",
]  # fmt: skip


@pytest.fixture
def servers(sim_host, tmp_path):
    yield from servers_fixture(sim_host, tmp_path)


def serve_one_request(server) -> None:
    with httpx.Client(base_url=server.url(""), timeout=30) as client:
        reply = client.post(
            "/v1/chat/completions",
            json={"model": "x", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 120},
        )
        assert reply.status_code == 200


def console_summary(text: str) -> dict:
    lines = text.split("\n")
    return summary(track(enumerate(lines, 1)), file="sim.log", lines=len(lines))


@pytest.mark.parametrize(
    ("args", "sim", "env", "version"),
    [
        (CT129, {"ffmpeg": False}, {}, "0.5.11"),
        (DENSE, {}, {}, "0.5.11"),
        (CT129_0523, {"sglang": "0.5.23"}, {"SGLANG_LOG_MS": "1"}, "0.5.23"),
    ],
    ids=["ct129-0.5.11", "dense-tp1-0.5.11", "ct129-0.5.23-ms"],
)
def test_startup_and_serving_logs_conform(servers: Servers, args, sim, env, version) -> None:
    server = servers.start(*args, "--decode-log-interval", "2", sim={**sim, "tokens_per_s": 1000}, env=env)
    server.wait_ready()
    serve_one_request(server)
    server.wait_for(r"Decode batch")
    text = server.text()
    findings = check_log(text, version)
    assert not findings, format_findings(findings)
    result = console_summary(text)
    assert result["stage"] == "serving" and result["ready"] and result["fatal"] is None
    assert result["startups"] == 1
    for rank in result["ranks"].values():
        assert rank["weights_gb"] and rank["kv_tokens"] and rank["avail_gb"]
    if "--speculative-algorithm" in args:
        assert result["spec"] is not None and result["spec"]["accept_len"] > 1
    if sim.get("ffmpeg") is False:
        assert any("libtorchcodec" in w["summary"] for w in result["warnings"])


@pytest.mark.parametrize(
    ("scenario", "stage", "needle"),
    [
        ("oom-graph", "graphs", "Capture cuda graph failed: CUDA out of memory"),
        ("nccl-error", "distributed", "NCCL error"),
        ("port-in-use", "listening", "address already in use"),
    ],
)
def test_startup_failures_conform_and_name_their_error(servers: Servers, scenario, stage, needle) -> None:
    server = servers.start(*CT129, sim={"scenario": scenario})
    assert server.wait_exit() != 0
    text = server.text()
    findings = check_log(text, "0.5.11", complete=False)
    assert not findings, format_findings(findings)
    fatal = console_summary(text)["fatal"]
    assert fatal is not None and fatal["stage"] == stage and needle in fatal["summary"]


def test_crash_while_serving_conforms(servers: Servers) -> None:
    server = servers.start(*CT129, sim={"scenario": "crash-serving"})
    server.wait_ready()
    with pytest.raises(httpx.HTTPError):
        serve_one_request(server)
    assert server.wait_exit() != 0
    text = server.text()
    findings = check_log(text, "0.5.11", complete=False)
    assert not findings, format_findings(findings)
    fatal = console_summary(text)["fatal"]
    assert fatal is not None and fatal["rank"] == "TP0" and fatal["stage"] == "serving"


def test_sigterm_drain_conforms(servers: Servers) -> None:
    server = servers.start(*CT129)
    server.wait_ready()
    server.proc.terminate()
    server.wait_exit()
    text = server.text()
    assert "Gracefully exiting" in text
    findings = check_log(text, "0.5.11")
    assert not findings, format_findings(findings)
    assert console_summary(text)["fatal"] is None
