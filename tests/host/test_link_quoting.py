"""Every value that reaches the remote shell arrives as exactly one argument, and nothing is executed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import asyncssh
import pytest

from gdnconsole.host.link import remote_command
from gdnconsole.host.sshlink import known_hosts_entry

PAYLOADS = [
    "plain",
    "with space",
    "quote'single",
    'quote"double',
    "semi;colon",
    "$(touch PWNED)",
    "`touch PWNED`",
    "new\nline",
    "back\\slash",
    "glob*?[a]",
    "--flag=x y",
    "",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_env_values_and_workdir_reach_the_program_intact(tmp_path: Path, payload: str) -> None:
    workdir = tmp_path / f"dir {payload.replace(chr(10), '_').replace('/', '_')}"
    workdir.mkdir()
    python = "python3"
    command = remote_command(python, {"GDN_VALUE": payload, "OTHER": "1"}, str(workdir))
    # Replace the agent bootstrap with a probe that prints what it received.
    probe = (
        command.split(" python3 ")[0]
        + ' python3 -c \'import os,sys; sys.stdout.write(os.getcwd()+"\\0"+os.environ["GDN_VALUE"])\''
    )
    out = subprocess.run(["/bin/sh", "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert out.returncode == 0, out.stderr
    cwd, value = out.stdout.split("\0")
    assert (cwd, value) == (str(workdir), payload)
    assert not (tmp_path / "PWNED").exists() and not (workdir / "PWNED").exists()


def test_the_agent_command_quotes_the_interpreter_path() -> None:
    command = remote_command("/opt/my python/bin/python3", {}, None)
    assert command.startswith("exec env -- '/opt/my python/bin/python3' ")


@pytest.mark.parametrize("python", ["-S sh -c 'touch PWNED' x", "-i", "--split-string=touch PWNED"])
def test_an_interpreter_that_looks_like_an_option_is_never_one(tmp_path: Path, python: str) -> None:
    """The hosts file refuses such a `python`; the command line does not rely on it: env takes the value
    as the program's name (after --), finds no such program, and runs nothing."""
    command = remote_command(python, {"A": "1"}, str(tmp_path))
    out = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert out.returncode == 127 and "No such file or directory" in out.stderr, out
    assert not (tmp_path / "PWNED").exists()


def test_known_hosts_entry_uses_openssh_form() -> None:
    key = asyncssh.generate_private_key("ssh-ed25519")
    line = known_hosts_entry("127.0.0.1", 2222, key)
    assert line.startswith("[127.0.0.1]:2222 ssh-ed25519 ") and line.endswith("\n")
    assert known_hosts_entry("ct129", 22, key).startswith("ct129 ssh-ed25519 ")
    assert asyncssh.import_known_hosts(line).match("127.0.0.1", "127.0.0.1", 2222)[0]
