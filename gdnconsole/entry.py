"""The `gdnconsole` executable. The everyday `gdnconsole HOST [HOST...]` opens the dashboard straight
away; every other command line goes to click (cli/main.py). Importing click took 21-40 ms and the command
definitions 10-20 ms more before the first frame (timed in-process), and this form has nothing for click
to parse."""

from __future__ import annotations

import sys

# The main group's commands (cli.main), which a first argument names instead of a host; a test keeps
# this in step with cli/main.py.
COMMANDS = frozenset(
    {
        "open", "config", "hosts", "demo", "log", "status", "check", "launch", "stop", "adopt", "prompt",
        "tune", "serving", "completion",
    }
)  # fmt: skip


def opens_hosts(args: list[str]) -> bool:
    """Host names only: no option anywhere (those are click's to parse) and no command first."""
    return bool(args) and args[0] not in COMMANDS and not any(arg.startswith("-") for arg in args)


def main() -> None:
    args = sys.argv[1:]
    if opens_hosts(args):
        from gdnconsole.cli.opener import open_hosts

        open_hosts(args, commands=COMMANDS)
        return
    from gdnconsole.cli.main import main as cli_main

    cli_main()
