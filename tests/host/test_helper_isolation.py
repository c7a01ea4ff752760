"""Helper processes never import from the working directory. A folder holding a `json.py` (the agent
imports json first) or a `gdnconsole/` package, made the working directory of the agent or of the demo's
tether, runs none of its code: the agent as the link starts it here (a local host) and on a host (the
shell command an SSH server runs), and the tether `gdnconsole demo` starts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gdnconsole.demo import tether
from gdnconsole.host import agent, simulated
from gdnconsole.host.hostcheck import read_model_config
from gdnconsole.host.link import remote_command
from gdnconsole.host.simhome import prepare_home
from tests.host.test_hostcheck import sim_host
from tests.sshhosts import SshdHost

TIMEOUT_S = 30.0


def planted(folder: Path, marker: Path) -> Path:
    """A working directory whose modules, if imported, leave ``marker``."""
    code = f"open({str(marker)!r}, 'w').write('imported from the working directory')\n"
    folder.mkdir()
    (folder / "json.py").write_text(code)
    package = folder / "gdnconsole"
    (package / "demo").mkdir(parents=True)
    for init in (package / "__init__.py", package / "demo" / "__init__.py", package / "demo" / "tether.py"):
        init.write_text(code)
    return folder


def first_line_of_agent(argv: list[str], env: dict[str, str], cwd: Path) -> bytes:
    """Start the agent with ``argv``, send its code and a hello, and read its first message (the hello,
    or nothing when it died: what it wrote to stderr is then in the assertion)."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=cwd)  # fmt: skip
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(agent.bootstrap_payload() + b'{"op": "hello"}\n')
        proc.stdin.flush()
        line = proc.stdout.readline()
        proc.stdin.close()
        proc.wait(TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return line


@pytest.fixture
def sim_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, **prepare_home(tmp_path / "home", {"gpus": 1})}


def test_the_local_agent_imports_nothing_from_its_working_directory(
    tmp_path: Path, sim_env: dict[str, str]
) -> None:
    marker = tmp_path / "marker"
    cwd = planted(tmp_path / "workdir", marker)
    line = first_line_of_agent([sys.executable, *agent.BOOTSTRAP_ARGS], sim_env, cwd)
    assert not marker.exists()
    assert b'"hello"' in line


def test_the_agent_on_a_host_imports_nothing_from_its_working_directory(
    tmp_path: Path, sim_env: dict[str, str]
) -> None:
    """The command line an SSH server runs (`cd WORKDIR && exec env … PYTHON -u -c …`), run by a shell."""
    marker = tmp_path / "marker"
    cwd = planted(tmp_path / "workdir", marker)
    command = remote_command(sys.executable, {}, str(cwd))
    line = first_line_of_agent(["/bin/sh", "-c", command], sim_env, tmp_path)
    assert not marker.exists()
    assert b'"hello"' in line


def test_the_agent_over_openssh_imports_nothing_from_its_working_directory(
    tmp_path: Path, sshd: SshdHost
) -> None:
    """A real sshd runs the link's command line through the user's shell, in the host's workdir."""
    marker = tmp_path / "marker"
    cwd = planted(tmp_path / "workdir", marker)
    env = prepare_home(tmp_path / "home", {"gpus": 1})
    command = remote_command(sys.executable, env, str(cwd))
    line = first_line_of_agent(sshd.ssh_argv(command), dict(os.environ), tmp_path)
    assert not marker.exists()
    assert b'"hello"' in line


def test_the_demo_tether_imports_nothing_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "marker"
    monkeypatch.chdir(planted(tmp_path / "cwd", marker))
    tied = tether.tie(tmp_path / "server.log")
    watcher = tied.pid
    assert watcher is not None
    tied.release()  # closes the pipe and waits for the watcher's end
    assert not Path(f"/proc/{watcher}").exists() or "Z" in Path(f"/proc/{watcher}/stat").read_text()
    assert not marker.exists()


def test_reading_a_models_config_on_the_host_imports_nothing_from_its_workdir(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    host = sim_host(tmp_path, "0.5.11")
    workdir = simulated.workdir(host)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "glob.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"architectures": ["Qwen3NextForCausalLM"]}')
    assert asyncio.run(read_model_config(host, str(model), None)) == {
        "architectures": ["Qwen3NextForCausalLM"]
    }
    assert not marker.exists()
