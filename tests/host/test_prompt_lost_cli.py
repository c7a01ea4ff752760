"""A failed `gdnconsole prompt` loses VERIFIED, as the README says, for every console: the CLI's session
takes the journal's VERIFIED first, then its failure goes to the journal, where `status` reads it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.host.launchkit import kill_group
from tests.host.test_launch_cli import cli_env, run

__all__ = ["cli_env"]


def test_a_failed_cli_prompt_loses_verified(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = run(cli_env, "launch", "simbox", "--wait", "verified", "--json", "--timeout", "60")
    server_file = tmp_path / "simhome" / ".gdnconsole-server.json"
    pid = json.loads(server_file.read_text())["pid"] if server_file.exists() else None
    try:
        assert done.returncode == 0 and json.loads(done.stdout)["outcome"] == "verified", done.stderr
        # The server reads the request and says nothing (each command writes the host's table anew).
        config = Path(cli_env["GDNCONSOLE_CONFIG"])
        config.write_text(
            config.read_text().replace("speed = 50.0\n", 'speed = 50.0\nchat_fault = "hang"\n', 1)
        )

        failed = run(cli_env, "prompt", "simbox", "hi", "--timeout", "1", "--json")
        assert failed.returncode == 1 and json.loads(failed.stdout)["ok"] is False, failed.stdout

        status = run(cli_env, "status", "simbox", "--json")
        server = json.loads(status.stdout)["server"]
        assert server["verified"] is False, server
        assert server["verify"]["lost"] is True, server
        assert server["verify"]["reason"].startswith("a prompt failed:"), server
        text = run(cli_env, "status", "simbox")
        assert "VERIFIED LOST" in text.stdout, text.stdout
    finally:
        if pid is not None:
            kill_group(pid)
