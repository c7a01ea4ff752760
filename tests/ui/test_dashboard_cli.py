"""`gdnconsole HOST [HOST...]`, plain `gdnconsole`, and `gdnconsole demo` open the dashboard; real commands
still win over host names; config errors are one line and exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gdnconsole.cli import opener
from gdnconsole.cli.main import main
from gdnconsole.config.hosts import Host

HOSTS = """\
[hosts.ct129]
ssh = "root@ct129"

[hosts.ct130]
ssh = "root@ct130:2222"
"""


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    """What `run_dashboard` was called with (the app itself is not started)."""
    calls: list[dict[str, Any]] = []

    def fake(hosts: list[Host], **options: Any) -> None:
        calls.append({"hosts": hosts, **options})

    monkeypatch.setattr("gdnconsole.ui.app.run_dashboard", fake)
    monkeypatch.setattr(opener, "interactive", lambda: True)  # CliRunner's output is no terminal
    config = tmp_path / "hosts.toml"
    config.write_text(HOSTS)
    monkeypatch.setenv("GDNCONSOLE_CONFIG", str(config))
    return calls


def test_one_host(opened: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(main, ["ct129"])
    assert result.exit_code == 0, result.output
    [call] = opened
    [host] = call["hosts"]
    assert host.name == "ct129" and host.ssh is not None and host.ssh.alias == "root@ct129"


def test_several_hosts_and_an_ssh_alias(
    opened: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ssh_config = tmp_path / "ssh_config"
    ssh_config.write_text("Host box7\n  HostName 10.0.0.7\n")
    monkeypatch.setenv("GDNCONSOLE_SSH_CONFIG", str(ssh_config))
    result = CliRunner().invoke(main, ["ct129", "ct130", "gpu@box7", "ct129"])
    assert result.exit_code == 0, result.output
    names = [h.name for h in opened[0]["hosts"]]
    assert names == ["ct129", "ct130", "gpu@box7"]  # a repeated host opens once
    assert opened[0]["hosts"][1].ssh.port == 2222


def test_readonly_never_runs_a_command_that_starts_a_server(opened: list[dict[str, Any]]) -> None:
    """`gdnconsole --readonly demo` meant to watch: it refuses, and says how to watch a host named demo."""
    for command in ("demo", "launch", "stop", "adopt"):
        result = CliRunner().invoke(main, ["--readonly", command, "ct129"])
        assert result.exit_code == 2, (command, result.output)
        assert f"gdnconsole open --readonly {command}" in result.output
    assert not opened
    result = CliRunner().invoke(main, ["open", "--readonly", "demo"])  # the demo host, watched
    assert result.exit_code == 0, result.output
    [call] = opened
    assert [h.name for h in call["hosts"]] == ["demo"] and call["readonly"] is True


def test_demo_host_by_name(opened: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(main, ["ct129", "demo"])  # `demo` after a host is the demo host
    assert result.exit_code == 0, result.output
    assert opened[-1]["hosts"][1].simulate is not None


def test_bad_host_is_one_line_exit_2(opened: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(main, ["ct129", "bad host!"])
    assert result.exit_code == 2
    assert result.output.startswith("gdnconsole: error: ") and result.output.count("\n") == 1
    assert not opened


def test_broken_config_is_exit_2(opened: list[dict[str, Any]], tmp_path: Path) -> None:
    (tmp_path / "hosts.toml").write_text("[hosts.ct129\n")
    result = CliRunner().invoke(main, ["ct129"])
    assert result.exit_code == 2 and result.output.startswith("gdnconsole: error: ")


def test_real_commands_win(opened: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(main, ["hosts"])
    assert result.exit_code == 0 and "ct129  (ssh root@ct129)" in result.output
    result = CliRunner().invoke(main, ["config", "path"])
    assert result.exit_code == 0 and result.output.strip().endswith("hosts.toml")
    assert not opened


def test_help_shows_hosts_usage_and_commands(opened: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "[OPTIONS] HOST... | COMMAND [ARGS]..." in result.output
    assert "status" in result.output and "demo" in result.output
    assert "\n  open " in result.output  # `gdnconsole HOST` spelled out: for a host named like a command
    assert not opened


def test_plain_gdnconsole_picks_a_host_on_a_terminal(
    opened: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(opener, "interactive", lambda: False)
    result = CliRunner().invoke(main, [])
    assert result.exit_code == 0 and "Usage:" in result.output and not opened  # not a terminal: help
    monkeypatch.setattr(opener, "interactive", lambda: True)
    result = CliRunner().invoke(main, [])
    assert result.exit_code == 0, result.output
    assert opened[0]["hosts"] == [] and [h.name for h in opened[0]["choices"]] == ["ct129", "ct130"]


def test_demo_opens_the_dashboard_on_the_demo_host(
    opened: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The demo's server is launched by the dashboard, as any launch (through the agent, journaled), and
    whatever the demo's console launched last is stopped when it ends."""
    stopped: list[str] = []
    monkeypatch.setattr(opener, "interactive", lambda: True)
    from gdnconsole.cli import launch  # the demo's end stops the server through it

    monkeypatch.setattr(launch, "stop_owned", lambda host: stopped.append(host.name) or "stopped pid 4242")
    result = CliRunner().invoke(main, ["demo", "--speed", "3"], env={"XDG_STATE_HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    [call] = opened
    [host] = call["hosts"]
    assert host.name == "demo" and host.simulate is not None and host.simulate.table["speed"] == 3
    # (a closed terminal stops it too: tests/terminal/test_demo_tether.py)
    assert call["launch"] == {0: host.default_profile}
    assert stopped == ["demo"] and "-- stopped pid 4242" in result.output


def test_a_taken_demo_port_is_said_on_the_dashboard(
    opened: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Printed before the alternate screen opens, nobody sees it: the dashboard says it again."""
    from gdnconsole.cli import launch
    from gdnconsole.cli import main as cli_main

    monkeypatch.setattr(launch, "stop_owned", lambda host: "nothing to stop")
    monkeypatch.setattr(cli_main, "_port_free", lambda host, port: False)
    result = CliRunner().invoke(main, ["demo"], env={"XDG_STATE_HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    [call] = opened
    [notice] = call["notices"]
    port = call["hosts"][0].profile.port
    assert notice == f"port 30000 is taken on 127.0.0.1; the demo server uses {port}"
