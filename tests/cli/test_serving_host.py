"""`gdnconsole serving HOST` and `status --json`'s figures on a simulated host, as scripts run them: the
agent polls the simulated server's own endpoints on the host, and a burst of prompts moves what the
figures say."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.host.launchkit import kill_group, sim_hosts_file
from tests.host.test_launch_cli import run


def hosts_env(tmp_path: Path, metrics: bool) -> dict[str, str]:
    config = sim_hosts_file(tmp_path)
    if metrics:
        text = config.read_text().replace(
            'args = ["--mamba-scheduler-strategy", "extra_buffer"]',
            'args = ["--mamba-scheduler-strategy", "extra_buffer", "--enable-metrics"]',
        )
        config.write_text(text)
    return {
        **os.environ,
        "GDNCONSOLE_CONFIG": str(config),
        "GDNCONSOLE_JOURNAL_DIR": str(tmp_path / "journal"),
    }


@contextlib.contextmanager
def launched(env: dict[str, str], tmp_path: Path) -> Iterator[None]:
    done = run(env, "launch", "simbox", "--wait", "verified", "--json", "--timeout", "60")
    server = tmp_path / "simhome" / ".gdnconsole-server.json"
    pid = json.loads(server.read_text())["pid"] if server.exists() else None
    try:
        assert done.returncode == 0, done.stderr
        yield
    finally:
        if pid is not None:
            kill_group(pid)


@pytest.fixture
def with_metrics(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = hosts_env(tmp_path, metrics=True)
    with launched(env, tmp_path):
        yield env


@pytest.fixture
def without_metrics(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = hosts_env(tmp_path, metrics=False)
    with launched(env, tmp_path):
        yield env


def serving(env: dict[str, str]) -> dict[str, object]:
    done = run(env, "serving", "simbox", "--json")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    data = json.loads(lines[0])
    assert isinstance(data, dict)
    return data


def test_a_burst_moves_the_figures_read_from_metrics(with_metrics: dict[str, str]) -> None:
    before = serving(with_metrics)
    assert before["source"] == "metrics"
    ranks = before["ranks"]
    assert isinstance(ranks, list) and [r["dp_rank"] for r in ranks] == [0]
    assert ranks[0]["max_running"] is not None  # the cap SGLang computed, from /server_info
    count_before = before["ttft_s"]["count"] if isinstance(before["ttft_s"], dict) else 0
    burst = run(with_metrics, "prompt", "simbox", "hi", "--burst", "6", "--max-tokens", "8", "--json")
    assert burst.returncode == 0, burst.stderr
    after = serving(with_metrics)
    ttft = after["ttft_s"]
    assert isinstance(ttft, dict) and ttft["count"] >= count_before + 6
    assert ttft["window"] == "since start" and ttft["p90"] is not None and ttft["p90"] > 0

    status = run(with_metrics, "status", "simbox", "--json")
    assert status.returncode == 0, status.stderr
    figures = json.loads(status.stdout)["server"]["figures"]
    assert figures["now"]["source"] == "metrics" and figures["problem"] is None


def test_metrics_off_reads_v1_loads(without_metrics: dict[str, str]) -> None:
    data = serving(without_metrics)
    assert data["source"] == "loads"
    assert data["ttft_s"] is None  # not collected without --enable-metrics: null, never 0


def test_no_server_exits_3(tmp_path: Path) -> None:
    env = hosts_env(tmp_path, metrics=True)
    done = run(env, "serving", "simbox", "--json")
    assert done.returncode == 3
    assert "no SGLang server runs there" in done.stderr


@pytest.mark.parametrize(
    "flags",
    [
        pytest.param('"--attn-dp-size", "2"', id="attn-dp-size"),
        pytest.param('"--dp", "2", "--enable-dp-attention"', id="deprecated-spelling"),
    ],
)
def test_dp_attention_on_0_5_23_shows_both_ranks(tmp_path: Path, flags: str) -> None:
    """Two attention-DP ranks on the profile's two GPUs: each its own running, queue and cap, from the
    series that carry its dp_rank."""
    config = sim_hosts_file(tmp_path, simulate={"sglang": "0.5.23"}, speculative=None)
    config.write_text(
        config.read_text().replace(
            'args = ["--mamba-scheduler-strategy", "extra_buffer"]',
            f'args = ["--mamba-radix-cache-strategy", "extra_buffer", "--enable-metrics", {flags}]',
        )
    )
    env = {**os.environ, "GDNCONSOLE_CONFIG": str(config), "GDNCONSOLE_JOURNAL_DIR": str(tmp_path / "j")}
    with launched(env, tmp_path):
        burst = run(env, "prompt", "simbox", "hi", "--burst", "4", "--max-tokens", "8", "--json")
        assert burst.returncode == 0, burst.stderr
        data = serving(env)
    assert data["source"] == "metrics" and data["version"] == "0.5.23"
    ranks = data["ranks"]
    assert isinstance(ranks, list) and [r["dp_rank"] for r in ranks] == [0, 1]
    assert all(r["max_running"] is not None and r["token_usage"] is not None for r in ranks), json.dumps(
        ranks
    )
    ttft = data["ttft_s"]
    assert isinstance(ttft, dict) and ttft["count"] >= 4  # both ranks' requests, summed
