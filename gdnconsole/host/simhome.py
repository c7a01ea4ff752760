"""Prepare the directory and environment of a simulated GPU host on this machine.

A simulated host is a home directory (``GDNSIM_HOME``) holding ``sim.json`` (the host's ``simulate`` table,
verbatim) and the GPU state files, plus an environment whose ``PYTHONPATH`` puts the stand-in ``sglang``
and ``pynvml`` (``gdnconsole/sim``) in front of anything installed. The agent and the console then run
unchanged against it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from gdnconsole import safefile

SIM_DIR = Path(__file__).resolve().parents[1] / "sim"  # gdnconsole/sim
HOME_ENV = "GDNSIM_HOME"


def prepare_home(home: Path, simulate: Mapping[str, object]) -> dict[str, str]:
    """Write the host's settings under ``home`` and return the environment variables to run with."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "gpus").mkdir(exist_ok=True)
    # Whole (a running simulated server re-reads sim.json, and must never see it half written), and
    # through a random name: nothing planted in the home is written through.
    safefile.write_text(home / "sim.json", json.dumps(dict(simulate), indent=2, sort_keys=True) + "\n")
    version = str(simulate.get("sglang", "0.5.11"))
    _write_dist_info(home / "site", version)
    return sim_environment(home)


def sim_environment(home: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment variables that make a process on this machine see the simulated host at ``home``."""
    base = os.environ if base is None else base
    paths = [str(home / "site"), str(SIM_DIR)]
    if base.get("PYTHONPATH"):
        paths.append(base["PYTHONPATH"])
    return {
        HOME_ENV: str(home),
        # The agent of this simulated host sees only the processes started for it (the same home).
        "GDNCONSOLE_AGENT_SCOPE": HOME_ENV,
        "PYTHONPATH": os.pathsep.join(paths),
        "PATH": os.pathsep.join([str(SIM_DIR / "bin"), base.get("PATH", os.defpath)]),
    } | _hub(base)


def _hub(base: Mapping[str, str]) -> dict[str, str]:
    """The simulated host's Hugging Face cache (its models' config.json, issue 26), unless one is set."""
    if base.get("HF_HUB_CACHE") or base.get("HF_HOME"):
        return {}
    return {"HF_HUB_CACHE": str(SIM_DIR / "hub")}


def _write_dist_info(site: Path, version: str) -> None:
    """Package metadata, so that ``importlib.metadata.version("sglang")`` answers without importing it."""
    for old in site.glob("sglang-*.dist-info"):
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    info = site / f"sglang-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    metadata = f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n"
    safefile.write_text(info / "METADATA", metadata, mode=0o644)
    safefile.write_text(info / "RECORD", "", mode=0o644)
