"""`gdnconsole log summarize FILE [--json]`: the story of a log's last startup, for people and scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from gdnconsole import config, logscan
from gdnconsole.cli import THEME_HELP
from gdnconsole.cli_common import fail
from gdnconsole.cli_open import theme_option
from gdnconsole.config import Config, ConfigError
from gdnconsole.sglang.summary import summary, track


def summarize_file(path: Path) -> dict[str, Any]:
    """Scan ``path`` and summarize its last startup (raises LogReadError)."""
    result = logscan.scan(path)
    tracker = track(logscan.decoded(result.records))
    return summary(tracker, file=str(path), lines=result.lines)


def _gb(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} GB"


def render(data: dict[str, Any]) -> Group:
    """The human table: stage per rank, durations, memory, the fatal error and the warnings."""
    parts: list[Any] = []
    head = Text()
    head.append(f"{data['file']}", style="bold")
    head.append(
        f"  {data['lines']:,} lines, {data['startups']} startup{'s' if data['startups'] != 1 else ''}"
    )
    parts.append(head)
    state = Text("last startup: ")
    fatal = data["fatal"]
    style = "bold red" if fatal else ("bold green" if data["ready"] else "bold yellow")
    state.append(data["stage"], style=style)
    if data["gen_throughput"] is not None:
        state.append(f"   gen throughput {data['gen_throughput']:.1f} tok/s")
    if data["spec"]:
        rate = data["spec"]["accept_rate"]
        state.append(f"   accept len {data['spec']['accept_len']:.2f}")
        if rate is not None:
            state.append(f" (rate {rate:.2f})")
    parts.append(state)
    if data["ranks"]:
        table = Table(box=None, pad_edge=False, header_style="bold")
        for column in ("rank", "stage", "weights", "avail", "KV tokens"):
            table.add_column(column, justify="left" if column in ("rank", "stage") else "right")
        for label, rank in data["ranks"].items():
            kv = f"{rank['kv_tokens']:,}" if rank["kv_tokens"] is not None else "–"
            table.add_row(label, rank["stage"], _gb(rank["weights_gb"]), _gb(rank["avail_gb"]), kv)
        parts.append(table)
    if data["durations"]:
        spans = "  ".join(f"{stage} {seconds:.1f}s" for stage, seconds in data["durations"].items())
        parts.append(Text("durations: " + spans))
    if fatal:
        line = Text("fatal ", style="bold red")
        line.append(f"line {fatal['line']}", style="red")
        line.append(f" [{fatal['rank'] or 'main'}, {fatal['stage']}] ")
        line.append(fatal["summary"])  # a Text: log content is never read as markup
        parts.append(line)
    for warning in data["warnings"]:
        line = Text("warning ", style="yellow")
        line.append(f"line {warning['line']} ")
        line.append(warning["summary"])
        parts.append(line)
    return Group(*parts)


@click.group("log")
def log_group() -> None:
    """Read SGLang server logs."""


@log_group.command("summarize")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def summarize_cmd(file: Path, as_json: bool) -> None:
    """Summarize the last startup in FILE: stages per rank, durations, memory, fatal error, warnings."""
    try:
        data = summarize_file(file)
    except logscan.LogReadError as exc:
        fail(str(exc))
    if as_json:
        click.echo(json.dumps(data))
        return
    Console(highlight=False).print(render(data))


def _view_config() -> Config:
    """The hosts file, for its [console] theme and themes folder. The log view needs no host: a broken
    file is a warning here, not a reason to refuse to show a log."""
    try:
        return config.load()
    except ConfigError as exc:
        click.echo(f"gdnconsole: warning: {exc} (the log view goes on without the hosts file)", err=True)
        return Config(path=exc.path, hosts={}, exists=False)


@log_group.command("view")
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
    from gdnconsole.ui.logscreen import run_log_view

    try:
        keys = keymap.checked(cfg, "log view")
    except ConfigError as exc:  # as for a broken file: said, and the log is shown with the usual keys
        click.echo(f"gdnconsole: warning: {exc} (the log view goes on with its usual keys)", err=True)
        keys = {}
    if keys:
        themed["keymap"] = keys
    run_log_view(file, follow=follow, **themed)
