"""Ctrl-C at `status`'s host-key question (asked on a terminal, a pty here, inside the event loop) ends
the command at once: exit 130, one line, the key not written. It once waited on for a second Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import subprocess
from pathlib import Path

from tests.host.test_cli_status import GDNCONSOLE
from tests.sshhosts import SshdHost


def test_ctrl_c_at_the_host_key_question_exits_130(tmp_path: Path, sshd: SshdHost) -> None:
    ssh_config = tmp_path / "ssh_config"
    empty = tmp_path / "empty_known_hosts"
    ssh_config.write_text(sshd.ssh_config.read_text().replace(str(sshd.known_hosts), str(empty)))
    config = tmp_path / "hosts.toml"
    config.write_text("")
    env = {**os.environ, "GDNCONSOLE_CONFIG": str(config), "GDNCONSOLE_SSH_CONFIG": str(ssh_config)}
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [GDNCONSOLE, "status", "testbox"], env=env, stdin=slave, stdout=slave, stderr=slave
    )
    os.close(slave)
    said = b""
    try:
        while b"known_hosts?" not in said:  # the question waits for an answer
            ready, _, _ = select.select([master], [], [], 60)
            assert ready, said
            said += os.read(master, 4096)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
        with contextlib.suppress(OSError):
            while select.select([master], [], [], 1)[0]:
                chunk = os.read(master, 4096)
                if not chunk:
                    break
                said += chunk
        text = said.decode(errors="replace")
        assert code == 130, text
        assert "Aborted!" not in text and text.rstrip().endswith("gdnconsole: interrupted"), text
        assert not empty.exists() or empty.read_text() == ""
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
