"""Simulated hosts for the benches that run the real `gdnconsole HOST...`: a hosts file, their homes and
logs, and an environment of the bench's own (config, data and state dirs in a temporary folder)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout whose code the bench runs


def write_hosts(folder: Path, names: list[str]) -> Path:
    """A hosts file of simulated local hosts (two GPUs each, no server) whose logs are ``NAME/serve.log``."""
    out = []
    for name in names:
        home = folder / name
        home.mkdir(parents=True, exist_ok=True)
        (home / "serve.log").write_bytes(b"")
        out.append(
            f'[hosts.{name}]\nlocal = true\npython = "{sys.executable}"\nlog = "serve.log"\n'
            f'simulate = {{ gpus = 2, home = "{home}" }}\n'
        )
    path = folder / "hosts.toml"
    path.write_text("\n".join(out))
    return path


def console_env(folder: Path, hosts: Path) -> dict[str, str]:
    """What the console runs with: this checkout's code first, the bench's own config and data dirs."""
    env = {
        "GDNCONSOLE_CONFIG": str(hosts),
        "PYTHONPATH": str(ROOT),
        "PYTHONPYCACHEPREFIX": str(folder / "pycache"),
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
    }
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(folder / var.lower())
    if os.environ.get("PATH"):
        env["PATH"] = os.environ["PATH"]
    return env


def console_argv(names: list[str]) -> list[str]:
    return [sys.executable, "-m", "gdnconsole", *names]
