"""What every `gdnconsole` command shares: its exit codes, its one-line errors, and finding a host."""

from __future__ import annotations

import contextlib
import difflib
import signal
import sys
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, NoReturn

from gdnconsole.cli import sshname
from gdnconsole.config import hosts as config_hosts
from gdnconsole.config import writer as config_writer
from gdnconsole.config.hosts import Config, ConfigError, Host
from gdnconsole.logs.textsafe import visible

if TYPE_CHECKING:
    from rich.console import Console

PIPE_WIDTH = 1 << 16  # "no limit": a line piped to a file or grep is never wrapped

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command ended by Ctrl-C

COMMANDS_META = "gdnconsole.commands"  # the main group's command names, in its context (cli/main.py)
# Commands that act on the host of their own name (`gdnconsole demo`): a host may be called so.
HOST_COMMANDS = frozenset({"demo"})

THEME_HELP = "Colour theme (shipped: gdn-dark, gdn-light, gdn-high-contrast; or one of yours)."


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """One line on stderr, no traceback, the given exit code. The message often carries what a host,
    a log or a file said: shown, never obeyed (textsafe)."""
    print(f"gdnconsole: error: {visible(message)}", file=sys.stderr)
    sys.exit(code)


@contextlib.contextmanager
def plain_ctrl_c() -> Iterator[None]:
    """Ctrl-C as Python's own while a question blocks the event loop (adopt's, status's host key):
    asyncio.run's handler only cancels the task, which a blocked read never sees, so the question
    would wait on; a KeyboardInterrupt ends the command (exit 130, cli/main.py)."""
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def output_console() -> Console:
    """The console a command prints its human output on: the terminal's width on a terminal, and in a
    pipe no wrapping at all (Rich's 80 columns split paths and fatal lines across lines there)."""
    from rich.console import Console  # loads with the commands that print this way, not with every one

    piped = not sys.stdout.isatty()
    return Console(highlight=False, width=PIPE_WIDTH if piped else None, soft_wrap=piped)


def command_names() -> frozenset[str]:
    """The main group's commands, as cli/main.py derived them from the group into its context; none
    outside a click command (entry.py's fast path passes its own to the opener)."""
    click = sys.modules.get("click")  # never loaded for this: the fast path stays without click
    ctx = click.get_current_context(silent=True) if click is not None else None
    return frozenset(ctx.meta.get(COMMANDS_META, ())) if ctx is not None else frozenset()


def reserved_host_names(commands: Collection[str]) -> frozenset[str]:
    """The names a host may not take: `gdnconsole NAME` runs the command of that name instead."""
    return frozenset(commands) - HOST_COMMANDS


def load_config(commands: Collection[str] | None = None) -> Config:
    """The hosts file, checked; a host named like one of ``commands`` (default: the main group's) is
    refused at its line."""
    reserved = reserved_host_names(command_names() if commands is None else commands)
    try:
        return config_hosts.load(reserved=reserved)
    except ConfigError as exc:
        fail(str(exc))


def host_named(name: str, cfg: Config | None = None, commands: Collection[str] | None = None) -> Host:
    """A configured host, the built-in `demo`, or an ssh target / alias; a bad name or file exits 2, and
    so does a name that is none of these and that this machine cannot resolve (with the command it may
    have meant, of ``commands``: default the main group's)."""
    cfg = cfg or load_config(commands)
    try:
        host = config_writer.resolve_host(cfg, name)
    except ConfigError as exc:
        fail(str(exc))
    if host.ssh is not None and cfg.host(name) is None:
        _check_ssh_target(cfg, name, host.ssh.hostname, command_names() if commands is None else commands)
    return host


def _check_ssh_target(cfg: Config, name: str, hostname: str, commands: Collection[str]) -> None:
    """A name tried as an SSH target that no ssh config names and no resolver knows: what happened and
    what to do, instead of an empty dashboard with the resolver's error; a mistyped command
    (`gdnconsole stauts`) is said as one."""
    if sshname.configured_alias(hostname):
        return
    reason = sshname.unresolvable(hostname)
    if reason is None:
        return
    meant = difflib.get_close_matches(name, sorted(commands), n=1, cutoff=0.6)
    if meant:
        fail(visible(f"no such command or host '{name}' (did you mean '{meant[0]}'?)"))
    where = f"no hosts file at {cfg.path}" if not cfg.exists else f'no host "{name}" in {cfg.path}'
    fail(
        visible(
            f'{where}, so "{name}" was tried as an SSH target, and "{hostname}" does not resolve '
            f"({reason}). Try `gdnconsole demo` (a simulated GPU host), `gdnconsole config init` "
            f"(an example hosts file), or a Host alias in {sshname.ssh_config_path()}."
        )
    )
