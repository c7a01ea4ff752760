"""`gdnconsole log summarize FILE [--json]`: the story of a log's last startup, for people and scripts.
`log view` (Textual) is in ``logview`` and loads only when it runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Group
from rich.table import Table
from rich.text import Text

from gdnconsole.cli.common import EXIT_FAILED, EXIT_USAGE, fail, output_console
from gdnconsole.cli.lazy import LazyGroup
from gdnconsole.logs import scan as logscan
from gdnconsole.logs.textsafe import visible
from gdnconsole.sglang.summary import BACKEND_NAMES, summary, track
from gdnconsole.timefmt import span


def summarize_file(path: Path) -> dict[str, Any]:
    """Scan ``path`` and summarize its last startup (raises LogReadError)."""
    result = logscan.scan(path)
    tracker = track(logscan.decoded(result.records))
    return summary(tracker, file=str(path), lines=result.lines)


def _gb(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} GB"


# The memory split's columns (sglang.memory), as the dashboard's GPU panel names them.
MEMORY_COLUMNS = {"weights": "weights", "kv": "KV", "mamba": "mamba", "graphs": "graphs", "free": "free"}


def _who(fatal: dict[str, Any]) -> str:
    """The rank that failed; else the process, as far as the lines say (a line without a rank prefix is
    a tp = 1 scheduler's as often as the main process's)."""
    if fatal["rank"]:
        return str(fatal["rank"])
    if fatal["ranks"]:
        return f"all {len(fatal['ranks'])} ranks"
    return fatal["process"] or "no rank named"


def render(data: dict[str, Any]) -> Group:
    """The human table: stage per rank, durations, memory, the fatal error and the warnings. What the
    log said (and the file's name) is shown, never obeyed by the terminal (ESC, bidi…: textsafe)."""
    parts: list[Any] = []
    head = Text()
    head.append(visible(data["file"]), style="bold")
    if not data["sglang"]:
        why = "empty" if data["lines"] == 0 else f"{data['lines']:,} lines"
        head.append(f"  {why}: not an SGLang log (no line of it is one SGLang writes)")
        return Group(head)
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
        for column in ("rank", "stage", *MEMORY_COLUMNS.values(), "KV tokens"):
            table.add_column(column, justify="left" if column in ("rank", "stage") else "right")
        for label, rank in data["ranks"].items():
            kv = f"{rank['kv_tokens']:,}" if rank["kv_tokens"] is not None else "–"
            split = data["memory"].get(label, {})
            memory = [_gb(split.get(part)) for part in MEMORY_COLUMNS]
            table.add_row(visible(label), rank["stage"], *memory, kv)
        parts.append(table)
    if data["kernels"]:
        chosen = "   ".join(f"{BACKEND_NAMES[k]} {v}" for k, v in data["kernels"].items())
        parts.append(Text(visible("kernels: " + chosen)))
    if data["durations"]:
        spans = "  ".join(f"{stage} {span(seconds)}" for stage, seconds in data["durations"].items())
        parts.append(Text("durations: " + spans))
    if fatal:
        line = Text("fatal ", style="bold red")
        line.append(f"line {fatal['line']}", style="red")
        line.append(visible(f" [{_who(fatal)}, {fatal['stage']}] "))
        line.append(visible(fatal["summary"]))  # a Text: log content is never read as markup
        parts.append(line)
        if fatal["hint"]:
            parts.append(Text(visible(fatal["hint"]), style="yellow"))
    for warning in data["warnings"]:
        line = Text("warning ", style="yellow")
        line.append(f"line {warning['line']} ")
        if warning["count"] > 1:
            on = f" on {', '.join(warning['ranks'])}" if warning["ranks"] else ""
            line.append(visible(f"(×{warning['count']}{on}) "))
        line.append(visible(warning["summary"]))
        parts.append(line)
    return Group(*parts)


@click.group("log", cls=LazyGroup, lazy={"view": "gdnconsole.cli.logview:view_cmd"})
def log_group() -> None:
    """Read SGLang server logs."""


@log_group.command("summarize")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def summarize_cmd(file: Path, as_json: bool) -> None:
    """Summarize the last startup in FILE: stages per rank, durations, memory, fatal error, warnings.

    Exit status: 0 when the last startup is fine, 1 when it ended in a fatal error, 2 when FILE cannot be
    read or is not an SGLang log. With --json the status is 0 whenever a summary of an SGLang log is
    printed (its "fatal" says whether the server failed), 2 otherwise."""
    try:
        data = summarize_file(file)
    except logscan.LogReadError as exc:
        fail(str(exc))
    if as_json:
        click.echo(json.dumps(data))
    else:
        output_console().print(render(data))
    sys.exit(exit_status(data, as_json=as_json))


def exit_status(data: dict[str, Any], *, as_json: bool) -> int:
    if not data["sglang"]:
        return EXIT_USAGE
    if data["fatal"] is not None and not as_json:
        return EXIT_FAILED
    return 0
