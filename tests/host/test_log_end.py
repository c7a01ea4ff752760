"""A log whose last line never ends (a hung server's progress bar, an empty file) is read to its end all
the same: the agent says where it stands, and a command that waits for the whole log does not wait for
a newline that never comes (issue 26: after a sweep whose server hung, launch, stop and tune waited 30 s
and ended "HOST: connected")."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tests.host.launchkit import sim_hosts_file
from tests.host.test_agent import Agent, start_agent  # noqa: F401  (the fixture)

if TYPE_CHECKING:
    from tests.conftest import SimHostFactory

GDNCONSOLE = [sys.executable, "-m", "gdnconsole"]
BAR = "Capturing batches (bs=1 avail_mem=16.24 GB):  66%|██████▋   | 2/3 [00:01<00:00,  1.96it/s]"


def test_an_empty_log_is_said_to_be_read(
    sim_host: SimHostFactory,
    start_agent: Callable[..., Agent],  # noqa: F811
    tmp_path: Path,
) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(b"")
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=0, inode=None)
    message = a.next("log")
    assert (message["offset"], message["end"], message["size"], message["held"]) == (0, 0, 0, 0)


def test_an_unfinished_last_line_is_counted_as_held(
    sim_host: SimHostFactory,
    start_agent: Callable[..., Agent],  # noqa: F811
    tmp_path: Path,
) -> None:
    log = tmp_path / "serve.log"
    bar = ("\r" + BAR).encode()
    log.write_bytes(b"first\n" + bar)
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=0, inode=None)
    message = a.next("log")
    assert (message["data"], message["end"], message["size"]) == ("first\n", 6, 6 + len(bar))
    assert message["held"] == len(bar)  # the end is reached: nothing more comes until a newline


def test_a_log_of_only_an_unfinished_line_is_said_to_be_read(
    sim_host: SimHostFactory,
    start_agent: Callable[..., Agent],  # noqa: F811
    tmp_path: Path,
) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(BAR.encode())
    a = start_agent(sim_host())
    a.send(op="follow", path=str(log), offset=0, inode=None)
    message = a.next("log")
    assert (message["offset"], message["end"], message["held"]) == (0, 0, len(BAR.encode()))
    with log.open("ab") as fh:
        fh.write(b"\nnext\n")
    message = a.next("log", lambda m: m["end"] > 0)
    assert (message["offset"], message["data"], message["held"]) == (0, BAR + "\nnext\n", 0)


def _env(tmp_path: Path, scenario: str = "ok") -> dict[str, str]:
    config = sim_hosts_file(tmp_path, simulate={"scenario": scenario})
    return {
        **os.environ,
        "GDNCONSOLE_CONFIG": str(config),
        "GDNCONSOLE_JOURNAL_DIR": str(tmp_path / "journal"),
    }


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GDNCONSOLE, *args], env=env, capture_output=True, text=True, timeout=120)


def test_stop_answers_on_a_log_that_ends_in_a_progress_bar(tmp_path: Path) -> None:
    env = _env(tmp_path)
    (tmp_path / "simhome").mkdir(exist_ok=True)
    (tmp_path / "simhome" / "sglang_serve.log").write_text(f"Load weight end.\n\r{BAR}")
    done = _run(env, "stop", "simbox")
    assert (done.returncode, done.stdout.split(":")[0]) == (0, "nothing to stop"), done.stderr


def test_after_a_sweep_whose_server_hung_the_host_is_usable(tmp_path: Path) -> None:
    env = _env(tmp_path, "hang-graph")
    grid = "num_steps=1 eagle_topk=1 num_draft_tokens=2"
    swept = _run(env, "tune", "simbox", "--requests", "1", "--batch", "1", "--timeout", "3", "--grid", grid)
    assert "timeout" in swept.stdout, swept.stderr
    done = _run(env, "stop", "simbox")
    assert (done.returncode, done.stdout.split(":")[0]) == (0, "nothing to stop"), done.stderr
