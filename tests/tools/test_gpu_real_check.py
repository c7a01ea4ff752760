"""The prepared run for a GPU machine (bench/gpu_real_check.py, issue 20) works, here on the simulated
host's stand-ins, so that it is ready whenever a session is lent a GPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.functional  # the prepared run starts a simulated host's agent and GPU holders
def test_the_gpu_check_runs_end_to_end_on_the_simulated_host(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gpu_real_check.py"), "--simulate", "--cpu-seconds", "0.2",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "gpu-check.json").read_text())
    for source, name in (("nvml_source", "pynvml"), ("smi_source", "nvidia-smi")):
        held = report[source]["holder"]
        assert report[source]["hello"]["nvml"]["source"] == name
        assert held["seen"] is not None and (held["seen"]["pid"], held["seen"]["pgid"]) == (
            held["pid"],
            held["pgid"],
        )
        assert held["seen"]["used_mib"] == 4096
        assert all(row["agent"] == row["smi"] for row in report[source]["used_vs_smi_mib"])
    assert report["release_nvml"]["seconds"] is not None
    assert sorted(p.name for p in (tmp_path / "fixtures").iterdir()) == [
        "agent-gpus-nvidia_smi.json",
        "agent-gpus-pynvml.json",
        "smi-query-compute-apps.csv",
        "smi-query-gpu.csv",
    ]
