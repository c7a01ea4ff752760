"""The demo's tether reads the agent's pid file at every look: damage of any kind names no server, and
never ends the tether (which alone stops the server once the console is gone)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gdnconsole.demo import tether

DAMAGED = {
    "nesting 100k deep": "[" * 100_000,
    "a start time no float holds": json.dumps({"pid": 4242, "pgid": 4242, "start_time": 10**400}),
    "a start time that is not a number": '{"pid": 4242, "pgid": 4242, "start_time": NaN}',
}


@pytest.mark.parametrize("body", DAMAGED.values(), ids=list(DAMAGED))
def test_a_damaged_pid_file_names_no_server(tmp_path: Path, body: str) -> None:
    path = tmp_path / "pid.json"
    path.write_text(body)
    assert tether.read_pidfile(path) is None
