"""`gdnconsole log view FILE [--follow]`: the log pane on one file, in a terminal of its own; in a pipe
(or with no terminal to draw on) the lines as plain text, as `less` and `tail -f` print them there."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TextIO

import click

from gdnconsole.cli import opener
from gdnconsole.cli.common import THEME_HELP, fail
from gdnconsole.cli.opener import theme_option
from gdnconsole.config import hosts as config_hosts
from gdnconsole.config.hosts import Config, ConfigError
from gdnconsole.logs import document, textsafe
from gdnconsole.logs import scan as logscan
from gdnconsole.logs.lineindex import LineIndex

PLAIN_POLL_S = 0.25  # how often `log view --follow` in a pipe looks at its file
_PLAIN_ASCII = bytes(range(32, 127)) + b"\t\n"  # bytes that a line can hold and be printed as they are


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
    notice = not_sglang_notice(file)
    if not opener.interactive():  # a pipe or a file wants text, not a screen (as `less` prints there)
        if notice:
            click.echo(f"gdnconsole: warning: {notice}", err=True)
        sys.exit(print_plain(file, follow=follow))
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
    if notice:
        themed["notice"] = notice
    run_log_view(file, follow=follow, **themed)


def not_sglang_notice(path: Path) -> str | None:
    """What to say of a file with no SGLang line in its head (None: it has one, or is empty so far)."""
    try:
        if document.written_by_sglang(path):
            return None
    except OSError:
        return None  # check_readable read it a moment ago; the view says what goes wrong from here on
    size = document.SGLANG_HEAD >> 10
    return (
        f"{textsafe.visible(str(path))}: not an SGLang log (no line of its first {size} KiB is one SGLang "
        "writes); shown as it is"
    )


def print_plain(path: Path, *, follow: bool, out: TextIO | None = None) -> int:
    """The lines of ``path`` on ``out`` as the view shows their text (controls made visible, secrets
    masked); with ``follow``, then what is appended, across rotations, until interrupted. Returns the
    exit status."""
    out = out if out is not None else sys.stdout
    index = LineIndex(path)
    shown = 0
    try:
        while True:
            growth = index.update(limit=document.POLL_BYTES)
            if growth.reset:
                shown = 0
                news = document.restart_news(growth.reason)
                if news:
                    print(f"gdnconsole: {news}", file=sys.stderr, flush=True)
            done = not follow and growth.behind == 0
            shown = _write_lines(index, shown, index.line_count if done else index.complete, out)
            if done:
                return 0
            if not growth.behind:
                time.sleep(PLAIN_POLL_S)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader left (`| head`): nothing more to say, and no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        return 0


def _write_lines(index: LineIndex, start: int, stop: int, out: TextIO) -> int:
    """Lines ``[start, stop)`` of ``index`` on ``out``, a chunk of whole lines at a time; returns
    ``stop``."""
    line = start
    for first, data in index.chunks(start, stop):
        skip = line - first  # the chunk begins at a checkpoint, at or before the line wanted
        lines = data.split(b"\n")[:-1][skip : skip + stop - line]
        if lines:
            out.write(plain_text(b"\n".join(lines)) + "\n")
            line += len(lines)
        if line >= stop:
            break
    for raw in index.read(line, stop):  # the last line, not yet ended by a newline
        out.write(plain_text(raw) + "\n")
    out.flush()
    return max(start, stop)


def plain_text(data: bytes) -> str:
    """Lines as the view shows their text: a bar's last state, secrets masked, controls made visible
    (a log line never reaches the terminal as an escape); tabs kept, for grep and cut."""
    if not data.translate(None, _PLAIN_ASCII):  # the common case, checked at C speed: nothing to escape
        return textsafe.without_secrets(data.decode("ascii"))
    text = data.decode("utf-8", "replace")
    if "\r" in text:
        text = "\n".join(textsafe.last_carriage_state(line) for line in text.split("\n"))
    return textsafe.visible_lines(textsafe.without_secrets(text))
