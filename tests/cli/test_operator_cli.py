"""What an operator meets at the command line: a mistyped command said as one, `completion SHELL`, and
host names that a command would shadow refused at their line, the names derived from the group itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from gdnconsole.cli.common import HOST_COMMANDS
from gdnconsole.cli.main import main
from tests import fakedns

GDNCONSOLE = [sys.executable, "-m", "gdnconsole"]


def _env(tmp_path: Path, config: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["GDNCONSOLE_CONFIG"] = str(config or tmp_path / "none" / "hosts.toml")
    env["GDNCONSOLE_SSH_CONFIG"] = str(tmp_path / "no-ssh-config")
    return env


@pytest.mark.parametrize(("typed", "meant"), [("stauts", "status"), ("lanch", "launch"), ("tnue", "tune")])
def test_a_mistyped_command_gets_did_you_mean(tmp_path: Path, typed: str, meant: str) -> None:
    """Not a configured host, not an ssh alias, not resolvable (a resolver of the test's own), and close
    to a command: said as a mistyped command, in one line, exit 2."""
    fakedns.require()
    (tmp_path / "dns").mkdir()
    argv = fakedns.argv([*GDNCONSOLE, typed], tmp_path / "dns")
    result = subprocess.run(argv, env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr == f"gdnconsole: error: no such command or host '{typed}' (did you mean '{meant}'?)\n"
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_script_the_variable_does(tmp_path: Path, shell: str) -> None:
    env = _env(tmp_path)
    command = subprocess.run([*GDNCONSOLE, "completion", shell], env=env, capture_output=True, text=True)
    assert command.returncode == 0, command.stderr
    env["_GDNCONSOLE_COMPLETE"] = f"{shell}_source"
    executable = str(Path(sys.executable).parent / "gdnconsole")  # the variable is read by that name
    variable = subprocess.run([executable], env=env, capture_output=True, text=True)
    assert command.stdout.strip() and command.stdout == variable.stdout


def test_an_unknown_shell_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [*GDNCONSOLE, "completion", "tcsh"], env=_env(tmp_path), capture_output=True, text=True
    )
    assert done.returncode == 2 and "bash" in done.stderr


def _commands() -> list[str]:
    with click.Context(main) as ctx:
        return main.list_commands(ctx)


@pytest.mark.parametrize("name", sorted(set(_commands()) - HOST_COMMANDS))
def test_a_host_named_like_a_command_is_refused_at_its_line(tmp_path: Path, name: str) -> None:
    config = tmp_path / "hosts.toml"
    config.write_text(f'# hosts\n\n[hosts.{name}]\nssh = "root@10.0.0.9"\n')
    done = subprocess.run(
        [*GDNCONSOLE, "config", "check"], env=_env(tmp_path, config), capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"gdnconsole: error: {config}:3: hosts.{name}: '{name}' is a gdnconsole command"
    )
    opened = subprocess.run(
        [*GDNCONSOLE, "open", name], env=_env(tmp_path, config), capture_output=True, text=True
    )
    assert opened.returncode == 2 and f"{config}:3: hosts.{name}:" in opened.stderr


def test_the_reserved_names_are_the_groups_commands() -> None:
    """tune, adopt, open and completion among them: the list is the group's, never one kept by hand."""
    assert {"tune", "adopt", "open", "completion", "status"} <= set(_commands())


def test_a_host_named_demo_is_still_a_host(tmp_path: Path) -> None:
    config = tmp_path / "hosts.toml"
    config.write_text("[hosts.demo]\nlocal = true\n")
    done = subprocess.run(
        [*GDNCONSOLE, "config", "check"], env=_env(tmp_path, config), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
