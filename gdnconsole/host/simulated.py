"""Simulated GPU hosts from the hosts file: where their files live and how a process reaches them."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from gdnconsole.config.hosts import APP_NAME, Host
from gdnconsole.host.simhome import prepare_home


def sim_home(host: Host) -> Path:
    """The simulated host's own directory: its GPU state, and its default working directory."""
    assert host.simulate is not None
    configured = host.simulate.table.get("home")
    if isinstance(configured, str):
        return Path(configured).expanduser()
    return Path(platformdirs.user_state_dir(APP_NAME)) / "sim" / host.name


def workdir(host: Host) -> Path:
    """The host's working directory on this machine (a simulated host defaults to its home)."""
    if host.workdir:
        return Path(host.workdir).expanduser()
    return sim_home(host) if host.simulate else Path.home()


def log_path(host: Host) -> Path:
    return workdir(host) / Path(host.log).expanduser()


def environment(host: Host) -> dict[str, str]:
    """Prepare the simulated host's home and return the variables that make a process see it."""
    assert host.simulate is not None
    return prepare_home(sim_home(host), host.simulate.table)
