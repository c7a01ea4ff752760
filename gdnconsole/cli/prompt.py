"""`gdnconsole prompt HOST "text"`: one test prompt (or a burst of them) against the host's server.

The server is reached as the dashboard reaches it (an SSH local port forward, or directly for a local
host) with the API key of its command line, through the flow the prompt panel uses (``host.prompting``):
an answer is evidence for VERIFIED, kept in the journal. Without --json the answer streams to stdout and
the figures go to stderr; with --json exactly one object is printed. Exit 0 when every answer came.
"""

from __future__ import annotations

import asyncio
import json
import sys

import click

from gdnconsole.chat.burst import BurstResult
from gdnconsole.chat.model import ChatError, ChatRequest, ChatResult, Timeouts
from gdnconsole.cli.common import EXIT_FAILED, host_named
from gdnconsole.cli.connect import connected
from gdnconsole.config.hosts import Host
from gdnconsole.host import prompting
from gdnconsole.host.prompting import BurstOutcome
from gdnconsole.logs.textsafe import visible, visible_lines
from gdnconsole.timefmt import span


async def _ask(
    host: Host, request: ChatRequest, timeouts: Timeouts, count: int | None, echo: bool
) -> ChatResult | BurstOutcome:
    def show(field: str, text: str) -> None:
        if echo:  # the server's words: its lines kept, any escape in them shown, never obeyed
            shown = visible_lines(text)
            click.echo(click.style(shown, dim=True) if field != "content" else shown, nl=False)

    async with connected(host, probe=False) as session:
        try:
            if count is not None:
                return await prompting.ask_burst(session, request, count, timeouts=timeouts)
            return await prompting.ask(session, request, timeouts=timeouts, on_delta=show)
        except ChatError as exc:  # nothing to send it to: no server port known, or the link is down
            return ChatResult(error=str(exc))


def _figures(result: ChatResult) -> str:
    parts = [f"status {result.status}" if result.status is not None else "no HTTP answer"]
    if result.ttft_ms is not None:
        parts.append(f"TTFT {span(result.ttft_ms / 1000)}")
    if result.tokens_per_s is not None:
        parts.append(f"{result.tokens_per_s:.1f} tok/s")
    parts.append(f"total {span(result.total_ms / 1000)}")
    if result.prompt_tokens is not None or result.completion_tokens is not None:
        parts.append(f"tokens {result.prompt_tokens} in / {result.completion_tokens} out")
    if result.accept_length is not None:
        parts.append(f"accept len {result.accept_length:.2f} ({result.accept_source})")
    return " · ".join(parts)


def _print_burst(result: BurstResult) -> None:
    table = result.to_json()
    click.echo(f"{table['ok']}/{table['requests']} answered in {span(table['wall_ms'] / 1000)}")
    for name, unit in (("ttft_ms", "ms"), ("tokens_per_s", "tok/s"), ("total_ms", "ms")):
        row = table[name]
        cells = "  ".join(f"{p} {'–' if v is None else f'{v:.1f}'}" for p, v in row.items())
        click.echo(f"  {name:<13}{cells}  ({unit})")
    click.echo(f"  total        {table['total_tokens_per_s'] or 0:.1f} tok/s")
    for error in table["errors"]:
        click.echo(f"  error ×{error['count']}: {visible(error['error'])}")


@click.command("prompt")
@click.argument("host_name", metavar="HOST")
@click.argument("text", required=False, default="Say hello in one short sentence.")
@click.option("--system", help="A system prompt.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=256, show_default=True)
@click.option("--temperature", type=click.FloatRange(min=0.0), help="Sampling temperature.")
@click.option("--stream/--no-stream", default=True, show_default=True, help="Stream (gives TTFT).")
@click.option("--think/--no-think", default=None, help="The chat template's enable_thinking.")
@click.option("--burst", "count", type=click.IntRange(min=1, max=1024), help="Send N copies at once.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=120.0,
    show_default=True,
    help="Seconds without a byte of the answer before it fails.",
)
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def prompt_cmd(
    host_name: str,
    text: str,
    system: str | None,
    max_tokens: int,
    temperature: float | None,
    stream: bool,
    think: bool | None,
    count: int | None,
    timeout: float,
    as_json: bool,
) -> None:
    """Send TEXT to the chat endpoint of HOST's server and time the answer (TTFT, tokens/s)."""
    host = host_named(host_name)
    request = ChatRequest(
        prompt=text,
        system=system,
        max_tokens=max_tokens,
        temperature=temperature,
        stream=stream,
        thinking=think,
    )
    echo = not as_json and count is None
    outcome = asyncio.run(_ask(host, request, Timeouts(answer=timeout), count, echo))
    if isinstance(outcome, BurstOutcome):
        table = outcome.result
        ok = not table.errors
        if as_json:
            results = [r.to_json() for r in table.results]
            click.echo(json.dumps({"ok": ok, "burst": table.to_json(), "results": results}))
        else:
            _print_burst(table)
    else:
        ok = outcome.ok
        if as_json:
            click.echo(json.dumps(outcome.to_json()))
        else:
            if not request.stream or not outcome.chunks:
                click.echo(visible_lines(outcome.text), nl=False)
            click.echo("")
            click.echo(visible(_figures(outcome)), err=True)
            if outcome.error:
                click.echo(f"gdnconsole: error: {visible(outcome.error)}", err=True)
    sys.exit(0 if ok else EXIT_FAILED)
