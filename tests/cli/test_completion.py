"""Shell completion as bash asks for it: commands, and the hosts file's host names wherever a HOST goes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def completions(words: str, config: Path) -> list[str]:
    env = {
        **os.environ,
        "GDNCONSOLE_CONFIG": str(config),
        "_GDNCONSOLE_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    script = "import sys; sys.argv = ['gdnconsole']; from gdnconsole.entry import main; main()"
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line.split(",", 1)[1] for line in done.stdout.splitlines()]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "hosts.toml"
    path.write_text('[hosts.ct129]\nssh = "root@ct129"\n\n[hosts.ct130]\nssh = "root@ct130"\n')
    return path


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("gdnconsole c", ["check", "completion", "config", "ct129", "ct130"]),  # a command or a host
        ("gdnconsole st", ["status", "stop"]),
        ("gdnconsole status ct", ["ct129", "ct130"]),
        ("gdnconsole launch ct13", ["ct130"]),
        ("gdnconsole ct129 ", ["ct129", "ct130", "demo"]),  # more hosts for the dashboard
        ("gdnconsole open --readonly d", ["demo"]),
    ],
)
def test_commands_and_host_names_complete(config: Path, words: str, expected: list[str]) -> None:
    assert completions(words, config) == expected
