"""`gdnconsole tune` as a script runs it: a hosts file, a simulated local host, one JSON object out;
Ctrl-C mid-sweep leaves no server of ours behind; --apply best saves the winner into the profile."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gdnconsole.config import hosts as config_hosts
from tests.host.launchkit import alive, sim_hosts_file

GDNCONSOLE = [sys.executable, "-m", "gdnconsole"]
GRID = "num_steps=1 eagle_topk=1 num_draft_tokens=2"


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    config = sim_hosts_file(
        tmp_path,
        simulate={"tokens_per_s": 400.0},
        speculative=(3, 1, 4),
        profile_lines='env = { SGLANG_ENABLE_SPEC_V2 = "1" }',
    )
    env = dict(os.environ)
    env.update({"GDNCONSOLE_CONFIG": str(config), "GDNCONSOLE_JOURNAL_DIR": str(tmp_path / "journal")})
    return env


def tune(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [*GDNCONSOLE, "tune", "simbox", "--requests", "2", "--batch", "1", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_json_is_one_object_with_every_figure(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = tune(cli_env, "--grid", GRID, "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert set(payload) >= {
        "host",
        "sglang",
        "model",
        "gpus",
        "prompts",
        "batches",
        "baseline",
        "results",
        "best",
    }
    assert (payload["host"], payload["sglang"], payload["model"]) == ("simbox", "0.5.11", "Qwen/Qwen3.6-27B")
    assert payload["gpus"] == ["NVIDIA RTX A6000"] * 2 and payload["prompts"].startswith("chat@")
    result = payload["results"][0]
    assert result["combo"] == {"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 2}
    assert result["status"] == "measured" and result["rule"] is None and result["fatal"] is None
    assert result["startup_s"] > 0 and result["kv_tokens"] > 0
    figures = result["by_batch"]["1"]
    assert set(figures) >= {"tokens_per_s", "speedup", "ttft_p50_ms", "ttft_p90_ms", "accept_length", "n"}
    assert figures["n"] == 2 and figures["speedup"] > 1.0
    assert payload["baseline"]["combo"] is None and payload["baseline"]["by_batch"]["1"]["speedup"] == 1.0
    assert payload["best"] == {"combo": result["combo"], "batch": 1, "speedup": figures["speedup"]}


def test_bad_arguments_exit_2(cli_env: dict[str, str]) -> None:
    done = tune(cli_env, "--grid", "num_steps=x")
    assert done.returncode == 2 and "grid:" in done.stderr


def test_no_combination_measured_exits_1(cli_env: dict[str, str]) -> None:
    done = tune(cli_env, "--grid", "num_steps=2 eagle_topk=2 num_draft_tokens=300")
    assert done.returncode == 1, done.stderr
    assert "rejected" in done.stdout and "mamba.track_interval_below_draft_tokens" in done.stdout


def test_apply_best_saves_the_winner_into_the_profile(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = tune(cli_env, "--grid", GRID, "--apply", "best", "--yes")
    assert done.returncode == 0, done.stderr
    assert "~ --speculative-num-steps 3 → 1" in done.stderr and "saved into" in done.stderr
    saved = config_hosts.load(tmp_path / "hosts.toml").hosts["simbox"].profiles["final"].speculative
    assert (saved.num_steps, saved.eagle_topk, saved.num_draft_tokens) == (1, 1, 2)
    exported = sorted(p.suffix for p in (tmp_path / "journal").glob("simbox-tune-*"))
    assert exported == [".csv", ".md"]


def test_ctrl_c_stops_our_server_and_keeps_what_was_measured(cli_env: dict[str, str], tmp_path: Path) -> None:
    command = [
        *GDNCONSOLE,
        "tune",
        "simbox",
        "--requests",
        "2",
        "--batch",
        "1",
        "--grid",
        "num_steps=1,2,3 eagle_topk=1 num_draft_tokens=2",
    ]
    proc = subprocess.Popen(command, env=cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids: list[int] = []
    assert proc.stderr is not None
    for line in proc.stderr:  # the second combination's server is up: interrupt it mid-sweep
        if ": waiting for VERIFIED" in line:
            pids.append(int(line.split()[2].rstrip(":")))
        if len(pids) == 3:
            break
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130, rest
    assert proc.stdout is not None and "baseline" in proc.stdout.read()
    assert "interrupted" in rest
    assert not [pid for pid in pids if alive(pid)]  # the stop returned once its group had ended
    store = (tmp_path / "journal" / "simbox.tune.jsonl").read_text().splitlines()
    kinds = [json.loads(line)["kind"] for line in store]
    assert kinds.count("result") >= 2 and kinds[-1] == "sweep" and json.loads(store[-1])["interrupted"]
