"""What every `gdnconsole` command shares: its exit codes, its one-line errors, and finding a host."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import os
import select
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


def ask(question: str, *, default: bool = False) -> bool:
    """A yes/no question on stderr (adopt's, status's host key: asked inside the event loop, which it
    blocks). Ctrl-C ends the command (KeyboardInterrupt: exit 130, cli/main.py); an empty answer is
    ``default``, another answer asks again, and the end of stdin is click's Abort ("stdin ended")."""
    prompt = f"{question} [{'Y/n' if default else 'y/N'}]: "
    with _ctrl_c_wakes() as wake:  # before the prompt shows: a Ctrl-C at it is seen, however early
        while True:
            sys.stderr.write(prompt)
            sys.stderr.flush()
            line = _line_or_interrupt(wake)
            if line is None:
                import click  # loaded already by every command that asks

                raise click.exceptions.Abort
            answer = line.strip().lower()
            if answer in ("y", "yes", "n", "no", ""):
                return default if not answer else answer.startswith("y")
            print("Error: invalid input", file=sys.stderr)


@contextlib.contextmanager
def _ctrl_c_wakes() -> Iterator[Wake]:
    """Ctrl-C as Python's own (asyncio.run's handler only cancels the task, which a blocked loop never
    sees), and every signal written to a pipe (Wake).

    A plain ``input()`` misses a Ctrl-C that comes after its prompt is written and before its read()
    begins: the signal only sets Python's flag, and the read blocks on (1 in 15 runs of a prompt
    signalled as it shows, with one thread or several). The pipe gets word either way: a select() on
    it returns, and the handler raises. Not a thread's signal mask: the read's thread gets SIGINT.
    """
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)  # read only what came
    os.set_blocking(wake_write, False)  # as set_wakeup_fd requires
    previous_fd = signal.set_wakeup_fd(wake_write)  # before the handler: no SIGINT writes elsewhere
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield Wake(wake_read, previous_fd)
    finally:
        signal.set_wakeup_fd(previous_fd)
        signal.signal(signal.SIGINT, previous)
        Wake(wake_read, previous_fd).pass_on()  # those that came since the last select()
        os.close(wake_read)
        os.close(wake_write)


def _line_or_interrupt(wake: Wake) -> str | None:
    """The next line of a terminal on stdin (None at its end), or Ctrl-C's KeyboardInterrupt."""
    if not sys.stdin.isatty():  # a pipe or a file: nobody types a Ctrl-C there
        return sys.stdin.readline() or None
    fd = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([fd, wake.read], [], [])
        if wake.read in ready:  # a signal: its handler has run on the return from select() (SIGINT's raises)
            wake.pass_on()
        if fd in ready:  # a terminal in canonical mode reads one whole line, or b"" at its end
            return os.read(fd, 4096).decode(sys.stdin.encoding or "utf-8", errors="replace") or None


@dataclasses.dataclass(frozen=True)
class Wake:
    """The pipe Python writes each signal's number to while a question waits (``read``: its read end),
    and the wakeup fd that was there before it (-1: none)."""

    read: int
    passes_to: int

    def pass_on(self) -> None:
        """The signal numbers come so far, to the wakeup fd they were meant for (an event loop's
        add_signal_handler dispatches by them)."""
        with contextlib.suppress(OSError):  # none came; or that pipe is full or closed (it has word)
            signums = os.read(self.read, 512)
            if self.passes_to >= 0 and signums:
                os.write(self.passes_to, signums)


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
