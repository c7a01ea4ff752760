"""Shell completion: click completes commands and options; this adds the host names of the hosts file
(and `demo`) wherever a command takes a HOST, and where the first word may be a host
(`gdnconsole ct1<TAB>`)."""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem, get_completion_class

from gdnconsole.config import hosts as config_hosts
from gdnconsole.config.hosts import ConfigError

HOST_METAVARS = frozenset({"HOST", "HOST..."})
SHELLS = ("bash", "zsh", "fish")
PROG_NAME = "gdnconsole"
COMPLETE_VAR = "_GDNCONSOLE_COMPLETE"  # what the script sets when it asks for completions (README)


def script(group: click.Command, shell: str) -> str:
    """The completion script of ``shell``, the same that `_GDNCONSOLE_COMPLETE=SHELL_source gdnconsole`
    prints: click's own, which calls gdnconsole back for each completion."""
    cls = get_completion_class(shell)
    if cls is None:
        raise click.BadParameter(f"no completion for {shell!r}; one of: {', '.join(SHELLS)}")
    return cls(group, {}, PROG_NAME, COMPLETE_VAR).source()


def host_names(incomplete: str) -> list[str]:
    """The configured hosts and `demo` that start with ``incomplete`` (none when the file is broken:
    a completion has nowhere to say why)."""
    try:
        cfg = config_hosts.load()
    except ConfigError:
        return []
    return [name for name in dict.fromkeys([*cfg.hosts, "demo"]) if name.startswith(incomplete)]


def complete_hosts(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(name) for name in host_names(incomplete)]


def with_host_completion(command: click.Command) -> click.Command:
    """``command`` with its HOST arguments completing host names (those that complete nothing else)."""
    for param in command.params:
        # click keeps a parameter's own completer here; it has no public setter after creation.
        if param.metavar in HOST_METAVARS and param._custom_shell_complete is None:
            param._custom_shell_complete = complete_hosts
    return command
