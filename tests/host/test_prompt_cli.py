"""`gdnconsole prompt`, `launch --wait verified` and `status --json`'s `server.verified`, as scripts run
them: a hosts file, a simulated local host, one JSON object out, the exit status."""

from __future__ import annotations

import json
from pathlib import Path

from tests.host.launchkit import kill_group
from tests.host.test_launch_cli import cli_env, run

__all__ = ["cli_env"]  # the fixture, shared with the launch tests

PROMPT_KEYS = {
    "ok", "status", "ttft_ms", "total_ms", "prompt_tokens", "completion_tokens", "tokens_per_s", "text",
    "error",
}  # fmt: skip


def test_verified_launch_then_prompts(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = run(cli_env, "launch", "simbox", "--wait", "verified", "--json", "--timeout", "60")
    server = tmp_path / "simhome" / ".gdnconsole-server.json"
    pid = json.loads(server.read_text())["pid"] if server.exists() else None
    try:
        assert done.returncode == 0, done.stderr
        payload = json.loads(done.stdout)
        assert payload["outcome"] == "verified" and payload["verify"]["ok"] is True
        assert payload["verify"]["latency_ms"] > 0

        status = run(cli_env, "status", "simbox", "--json")
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["server"]["verified"] is True

        one = run(cli_env, "prompt", "simbox", "Why is the sky blue?", "--max-tokens", "12", "--json")
        assert one.returncode == 0, one.stderr
        answer = json.loads(one.stdout)
        assert set(answer) >= PROMPT_KEYS
        assert answer["ok"] is True and answer["status"] == 200 and answer["error"] is None
        assert answer["completion_tokens"] == 12 and answer["finish_reason"] == "length"
        assert answer["ttft_ms"] > 0 and answer["tokens_per_s"] > 0 and answer["text"]
        assert answer["accept_length"] is not None and answer["accept_source"] == "server"

        whole = run(cli_env, "prompt", "simbox", "hi", "--no-stream", "--json")
        assert whole.returncode == 0 and json.loads(whole.stdout)["ttft_ms"] is None

        plain = run(cli_env, "prompt", "simbox", "hi", "--max-tokens", "5")
        assert plain.returncode == 0 and plain.stdout.strip()
        assert "TTFT" in plain.stderr and "tok/s" in plain.stderr

        burst = run(cli_env, "prompt", "simbox", "hi", "--burst", "4", "--max-tokens", "6", "--json")
        assert burst.returncode == 0, burst.stderr
        table = json.loads(burst.stdout)
        assert table["ok"] is True and len(table["results"]) == 4
        assert table["burst"]["ok"] == 4 and table["burst"]["errors"] == []
        assert set(table["burst"]["ttft_ms"]) == {"p50", "p90", "p99"}
        assert table["burst"]["total_tokens_per_s"] > 0

        stopped = run(cli_env, "stop", "simbox", "--json")
        assert stopped.returncode == 0, stopped.stderr
        pid = None
    finally:
        if pid is not None:
            kill_group(pid)


def _status(env: dict[str, str]) -> dict[str, object]:
    done = run(env, "status", "simbox", "--json")
    assert done.returncode == 0, done.stderr
    server = json.loads(done.stdout)["server"]
    assert isinstance(server, dict)
    return server


def test_a_prompt_from_the_cli_is_evidence_for_verified(cli_env: dict[str, str], tmp_path: Path) -> None:
    """The CLI's prompt goes through the panel's flow: its answer proves the server, and the journal keeps
    the proof for `status` (a console that sent no prompt itself)."""
    started = run(cli_env, "launch", "simbox", "--wait", "started", "--json")
    server_file = tmp_path / "simhome" / ".gdnconsole-server.json"
    pid = json.loads(server_file.read_text())["pid"] if server_file.exists() else None
    try:
        assert started.returncode == 0, started.stderr
        assert json.loads(started.stdout)["outcome"] == "running"  # left before any verification
        for _ in range(120):  # the startup takes about 0.5 s at this speed; each look is a new process
            server = _status(cli_env)
            if server["ready"]:
                break
        assert server["ready"] and server["verified"] is None, server

        one = run(cli_env, "prompt", "simbox", "hi", "--max-tokens", "5", "--json")
        assert one.returncode == 0 and json.loads(one.stdout)["ok"] is True, one.stderr

        server = _status(cli_env)
        assert server["verified"] is True and server["verify"]["latency_ms"] > 0, server
        stopped = run(cli_env, "stop", "simbox", "--json")
        assert stopped.returncode == 0, stopped.stderr
        pid = None
    finally:
        if pid is not None:
            kill_group(pid)


def test_on_0_5_23_a_streamed_answer_has_its_own_accept_length(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """SGLang 0.5.23 answers `return_spec_tokens_details` with the request's own speculative figures,
    streamed too: `prompt` shows them instead of the server's running average."""
    config = Path(cli_env["GDNCONSOLE_CONFIG"])
    text = config.read_text().replace("speed = 50.0\n", 'speed = 50.0\nsglang = "0.5.23"\n', 1)
    config.write_text(text.replace('"--mamba-scheduler-strategy"', '"--mamba-radix-cache-strategy"'))
    done = run(cli_env, "launch", "simbox", "--wait", "verified", "--json", "--timeout", "60")
    server = tmp_path / "simhome" / ".gdnconsole-server.json"
    pid = json.loads(server.read_text())["pid"] if server.exists() else None
    try:
        assert done.returncode == 0, done.stderr
        one = run(cli_env, "prompt", "simbox", "Why is the sky blue?", "--max-tokens", "24", "--json")
        answer = json.loads(one.stdout)
        assert answer["ok"] is True and answer["ttft_ms"] is not None  # streamed
        assert answer["accept_source"] == "request" and 1.0 <= answer["accept_length"] <= 2.0
    finally:
        if pid is not None:
            kill_group(pid)
