"""`gdnconsole log view FILE [--follow]`: the log pane on one file, in a terminal of its own."""

from __future__ import annotations

from pathlib import Path

import click

from gdnconsole.cli.common import THEME_HELP, fail
from gdnconsole.cli.opener import theme_option
from gdnconsole.config import hosts as config_hosts
from gdnconsole.config.hosts import Config, ConfigError
from gdnconsole.logs import scan as logscan


def _view_config() -> Config:
    """The hosts file, for its [console] theme and themes folder. The log view needs no host: a broken
    file is a warning here, not a reason to refuse to show a log."""
    try:
        return config_hosts.load()
    except ConfigError as exc:
        click.echo(f"gdnconsole: warning: {exc} (the log view goes on without the hosts file)", err=True)
        return Config(path=exc.path, hosts={}, exists=False)


@click.command("view")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--follow", "-f", is_flag=True, help="Follow the file as it grows (like tail -f).")
@click.option("--theme", "theme", metavar="NAME", help=THEME_HELP)
def view_cmd(file: Path, follow: bool, theme: str | None) -> None:
    """Browse FILE: lines coloured by startup stage, tracebacks folded, the stage timeline beside it."""
    try:
        logscan.check_readable(file)
    except logscan.LogReadError as exc:
        fail(str(exc))
    cfg = _view_config()
    themed = theme_option(theme, cfg)
    # Imported here: Textual takes a moment to import and the other log commands do not need it.
    from gdnconsole.ui import keymap
    from gdnconsole.ui.screens.logscreen import run_log_view

    try:
        keys = keymap.checked(cfg, "log view")
    except ConfigError as exc:  # as for a broken file: said, and the log is shown with the usual keys
        click.echo(f"gdnconsole: warning: {exc} (the log view goes on with its usual keys)", err=True)
        keys = {}
    if keys:
        themed["keymap"] = keys
    run_log_view(file, follow=follow, **themed)
