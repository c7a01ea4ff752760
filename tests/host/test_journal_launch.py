"""`gdnconsole launch` with a journal folder it cannot write: refused in one line naming the folder, and
no server started that the journal would not know (issue 26)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.host.launchkit import sim_hosts_file

GDNCONSOLE = [sys.executable, "-m", "gdnconsole"]


def test_a_journal_folder_that_is_a_file_refuses_the_launch_and_starts_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "journal"
    blocker.write_text("a file where the folder should be\n")
    env = {
        **os.environ,
        "GDNCONSOLE_CONFIG": str(sim_hosts_file(tmp_path)),
        "GDNCONSOLE_JOURNAL_DIR": str(blocker),
    }
    launch = [*GDNCONSOLE, "launch", "simbox", "--set", "env.SGLANG_ENABLE_SPEC_V2=1", "--wait", "started"]
    done = subprocess.run(launch, env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("-- ")]  # progress aside
    assert lines == [
        f"gdnconsole: error: the launch journal's folder {blocker} cannot be written "
        "(a path in the way is not a folder): nothing started"
    ]
    status = [*GDNCONSOLE, "status", "simbox", "--json"]
    after = subprocess.run(status, env=env, capture_output=True, text=True, timeout=90)
    assert json.loads(after.stdout)["server"] is None, after.stdout
