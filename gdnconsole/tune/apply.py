"""Apply: the winning combination saved into the profile, after showing what changes."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.config.hosts import Profile
from gdnconsole.config.writer import save_profile
from gdnconsole.host.journal import flag_diff
from gdnconsole.sglang.launch import launch_spec
from gdnconsole.tune.grid import Combo
from gdnconsole.tune.plan import combo_profile


def applied(profile: Profile, combo: Combo) -> tuple[Profile, list[str]]:
    """The profile with ``combo``, and the flag diff a confirmation shows ("~ --flag 1 → 2")."""
    new = combo_profile(profile, combo)
    return new, flag_diff(launch_spec(profile).argv, launch_spec(new).argv)


def save(path: Path, host: str, profile: Profile) -> None:
    """Into the hosts file, comments and order kept (ConfigError when the host is not in that file)."""
    save_profile(path, host, profile)
