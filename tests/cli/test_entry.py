"""The `gdnconsole` executable's routing: `gdnconsole HOST...` opens the dashboard without click; every
other command line is click's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from gdnconsole import entry
from gdnconsole.cli.main import main
from tests import fakedns


def test_the_commands_it_knows_are_the_command_lines() -> None:
    with click.Context(main) as ctx:
        assert set(main.list_commands(ctx)) == entry.COMMANDS


@pytest.mark.parametrize(
    ("args", "opens"),
    [
        (["ct129"], True),
        (["ct129", "ct130", "root@10.0.0.7:2222"], True),
        (["ct129", "status"], True),  # only the first word can be a command
        ([], False),  # the host picker, or the help off a terminal
        (["status", "ct129"], False),
        (["open", "ct129"], False),
        (["ct129", "--readonly"], False),  # an option anywhere: click parses the line
        (["--theme", "gdn-light", "ct129"], False),
        (["-h"], False),
    ],
)
def test_which_command_lines_open_hosts_directly(args: list[str], opens: bool) -> None:
    assert entry.opens_hosts(args) is opens


def python(argv: list[str], config: Path) -> subprocess.CompletedProcess[str]:
    """Python with these arguments and this hosts file."""
    env = {**os.environ, "GDNCONSOLE_CONFIG": str(config)}
    return subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True, timeout=60)


def hosts_file(tmp_path: Path, extra: str = "") -> Path:
    config = tmp_path / "hosts.toml"
    config.write_text('[hosts.ct129]\nssh = "root@ct129"\n' + extra)
    return config


def test_a_host_opens_the_dashboard_without_loading_click(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "import gdnconsole.cli.opener as cli_open, gdnconsole.ui.app as app\n"
        "cli_open.interactive = lambda: True\n"
        "app.run_dashboard = lambda hosts, **kw: print([h.name for h in hosts], kw['readonly'])\n"
        "sys.argv = ['gdnconsole', 'ct129', 'ct129']\n"
        "from gdnconsole.entry import main\n"
        "main()\n"
        "print('click' in sys.modules)\n"
    )
    result = python(["-c", script], hosts_file(tmp_path, "\n[console]\nreadonly = true\n"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["['ct129'] True", "False"]


def test_a_bad_host_exits_2_naming_it_as_the_click_path_does(tmp_path: Path) -> None:
    config = hosts_file(tmp_path)
    said = f'gdnconsole: error: {config}: "a b" is not a configured host or an ssh target\n'
    for args in (["a b"], ["--readonly", "a b"]):
        result = python(["-m", "gdnconsole", *args], config)
        assert (result.returncode, result.stderr, result.stdout) == (2, said, ""), args


def test_no_terminal_exits_2_before_drawing(tmp_path: Path) -> None:
    result = python(["-m", "gdnconsole", "ct129"], hosts_file(tmp_path))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "gdnconsole: error: the dashboard needs a terminal; for scripts: `gdnconsole status HOST`\n"
    )


def first_hour_env(tmp_path: Path) -> dict[str, str]:
    """A new user's machine: no hosts file, no ssh config."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "GDNCONSOLE_CONFIG": str(tmp_path / "none" / "hosts.toml")}
    env.pop("GDNCONSOLE_SSH_CONFIG", None)
    return env


def test_no_hosts_file_says_where_it_looked_and_how_to_begin(tmp_path: Path) -> None:
    env = first_hour_env(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "gdnconsole"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"no hosts file at {tmp_path / 'none' / 'hosts.toml'} yet.")
    for way in ("gdnconsole demo", "gdnconsole config init", "~/.ssh/config alias"):
        assert way in result.stdout
    assert "Usage:" not in result.stdout


@pytest.mark.parametrize("command", [[], ["status"], ["open"]])
def test_a_name_that_does_not_resolve_is_explained_before_any_screen(
    tmp_path: Path, command: list[str]
) -> None:
    """`gdnconsole ct129` on a new machine: not an empty dashboard saying `[Errno -2]`, but what was tried
    and what to do (`.invalid` never resolves, RFC 2606; the lookup goes to a resolver of the test's own,
    in a network namespace, never to this machine's)."""
    fakedns.require()
    env = first_hour_env(tmp_path)
    (tmp_path / "dns").mkdir()
    argv = fakedns.argv([sys.executable, "-m", "gdnconsole", *command, "ct129.invalid"], tmp_path / "dns")
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (2, "")
    path = tmp_path / "none" / "hosts.toml"
    assert result.stderr.startswith(
        f'gdnconsole: error: no hosts file at {path}, so "ct129.invalid" was tried as an SSH target, '
        'and "ct129.invalid" does not resolve ('
    )
    for way in ("`gdnconsole demo`", "`gdnconsole config init`", "a Host alias in "):
        assert way in result.stderr
    assert result.stderr.count("\n") == 1


def test_an_ssh_config_alias_is_left_to_ssh(tmp_path: Path) -> None:
    """A name the ssh config knows is not looked up here (its HostName or ProxyJump decides)."""
    env = first_hour_env(tmp_path)
    ssh_config = tmp_path / "ssh_config"
    ssh_config.write_text("Host gpu-*\n  HostName 10.0.0.7\n")
    env["GDNCONSOLE_SSH_CONFIG"] = str(ssh_config)
    result = subprocess.run(
        [sys.executable, "-m", "gdnconsole", "gpu-box.invalid"], env=env, capture_output=True, text=True
    )
    # Past the name check: only the missing terminal stops it.
    assert "the dashboard needs a terminal" in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("config", "alias"),
    [
        ("Host gpu-*\n  HostName 10.0.0.7\n", True),  # a block for it
        ("Host *\n  ServerAliveInterval 30\n", False),  # only defaults: the name must resolve here
        ("Host *\n  ProxyJump bastion\n", True),  # a bastion resolves it
        ("Host * !gpu-box\n  ProxyJump bastion\n", False),
        ("ProxyCommand ssh -W %h:%p bastion\n", True),  # before any Host: for every host
        ("Include ~/.ssh/config.d/*\n", True),  # what is not read here may name it
    ],
)
def test_which_names_the_ssh_config_decides(tmp_path: Path, config: str, alias: bool) -> None:
    from gdnconsole.cli.sshname import configured_alias

    path = tmp_path / "ssh_config"
    path.write_text(config)
    assert configured_alias("gpu-box", path) is alias
