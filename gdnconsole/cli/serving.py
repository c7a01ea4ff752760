"""`gdnconsole serving TARGET [--json] [--watch]`: a server's load, queue, pools and latencies.

TARGET is a configured host (its agent polls the server on the host's loopback, host/servingwatch.py)
or the URL of any SGLang server, reached directly (e.g. through `kubectl port-forward`). The figures
come from the server's own `/metrics`, else `/v1/loads` when metrics are off, with `/server_info` for
the caps it computed. One look gives latencies since the server started; `--watch` prints each poll
with latencies over the last minute (`--window 300` for five). Exit 0 when the server answered, 3
when it could not be reached.
"""

from __future__ import annotations

import asyncio
import functools
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

import click
from rich.table import Table

from gdnconsole.cli.common import EXIT_UNREACHABLE, fail, host_named, output_console
from gdnconsole.host import servingwords
from gdnconsole.host.servingfeed import ServingFeed
from gdnconsole.host.servingpoll import PATHS, EndpointReply, ServingRound
from gdnconsole.host.servingwatch import FAST_S, QUIET_S
from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible
from gdnconsole.sglang.servingfigures import ServingFigures

FIRST_ROUND_S = 20.0  # a host's agent polls every 5 s when each poll writes access-log lines
URL_TIMEOUT_S = 2.0
WINDOWS = {"60": 60.0, "300": 300.0}


def _render(name: str, figures: ServingFigures, age: float | None) -> Table:
    table = Table(
        title=f"{visible(name)} · {servingwords.headline(figures, age)}",
        title_justify="left",
        box=None,
        pad_edge=False,
    )
    for header in servingwords.RANK_HEADERS:
        table.add_column(header, justify="left" if header in ("DP", "binds") else "right")
    for rank in figures.ranks:
        table.add_row(*servingwords.rank_cells(rank))
    return table


def _print(name: str, feed: ServingFeed, window: float | None, as_json: bool) -> None:
    figures = feed.windowed(window) if window is not None else feed.figures
    if figures is None:
        click.echo(f"{visible(name)}: no figures: {visible(feed.problem or 'no answer yet')}", err=True)
        return
    if as_json:
        click.echo(figures.json_line())
        sys.stdout.flush()
        return
    console = output_console()
    console.print(_render(name, figures, feed.age() if window is not None else None))
    for line in servingwords.latency_lines(figures):
        console.print(f"  {line.name:<11} {line.text}", highlight=False, markup=False)
    if feed.problem:
        console.print(f"  stale: {visible(feed.problem)}", highlight=False, markup=False)


# -- a URL, reached directly -----------------------------------------------------------------------


def _base_of(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        fail(f"{url!r} is not a configured host or an http(s)://HOST:PORT URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{parts.netloc}", parts.hostname, port


async def _poll_url(url: str, api_key: str | None, paths: tuple[str, ...]) -> ServingRound:
    import httpx

    base, host, port = _base_of(url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    replies = []
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=URL_TIMEOUT_S) as client:
        for path in paths:
            began = time.monotonic()
            try:
                response = await client.get(path)
                reply = EndpointReply(path, response.status_code, None, None, response.text, False)
            except httpx.TimeoutException:
                reply = EndpointReply(path, None, f"timed out after {URL_TIMEOUT_S:g} s", None, None, False)
            except httpx.HTTPError as exc:
                reply = EndpointReply(path, None, str(exc) or type(exc).__name__, None, None, False)
            ms = (time.monotonic() - began) * 1000.0
            replies.append(
                EndpointReply(reply.path, reply.status, reply.error, ms, reply.body, reply.truncated)
            )
    return ServingRound(time.time(), host, port, tuple(replies))


async def _url_rounds(
    url: str, api_key: str | None, interval: float | None, show: Callable[[ServingFeed], None]
) -> ServingFeed:
    feed = ServingFeed()
    while True:
        feed.take(await _poll_url(url, api_key, PATHS))
        show(feed)
        if interval is None:
            return feed
        await asyncio.sleep(interval)


# -- a configured host -----------------------------------------------------------------------------


async def _host_rounds(name: str, watch: bool, show: Callable[[ServingFeed], None]) -> ServingFeed | None:
    from gdnconsole.cli.connect import connected

    host = host_named(name)
    async with connected(host, probe=False) as session:
        if session.server is None:
            fail(f"{host.name}: no SGLang server runs there", EXIT_UNREACHABLE)
        owner = object()
        session.figures.want(owner, True)
        try:
            seen = 0
            while True:
                ok = await session.wait_until(functools.partial(_newer, session, seen), FIRST_ROUND_S)
                feed = session.figures.feed
                if not ok or feed is None:
                    fail(
                        f"{host.name}: no poll of the server came within {FIRST_ROUND_S:g} s",
                        EXIT_UNREACHABLE,
                    )
                seen = feed.rounds
                show(feed)
                if not watch:
                    return feed
        finally:
            session.figures.want(owner, False)


def _newer(session: HostSession, seen: int) -> bool:
    """A round came after the ``seen``-th."""
    feed = session.figures.feed
    return feed is not None and feed.rounds > seen


@click.command("serving")
@click.argument("target")
@click.option("--json", "as_json", is_flag=True, help="One JSON line per poll.")
@click.option("--watch", is_flag=True, help="Poll until interrupted; latencies over a window.")
@click.option(
    "--window",
    type=click.Choice(sorted(WINDOWS)),
    default="60",
    show_default=True,
    help="--watch's latency window, s.",
)
@click.option("--api-key", envvar="GDNCONSOLE_API_KEY", help="For a URL of a server started with --api-key.")
@click.option(
    "--interval",
    type=click.FloatRange(min=FAST_S),
    default=QUIET_S,
    show_default=True,
    help="A URL's poll, s (each poll is an access-log line unless the server excludes it).",
)
def serving_cmd(
    target: str, as_json: bool, watch: bool, window: str, api_key: str | None, interval: float
) -> None:
    """Load, queue, pools and latencies of a host's server, or of any SGLang server by URL."""
    seconds = WINDOWS[window] if watch else None

    def show(feed: ServingFeed) -> None:
        _print(target, feed, seconds, as_json)

    runner: Coroutine[Any, Any, ServingFeed | None]
    if "://" in target:
        runner = _url_rounds(target, api_key, interval if watch else None, show)
    else:
        runner = _host_rounds(target, watch, show)
    feed = asyncio.run(runner)
    if feed is None or not feed.reached:
        sys.exit(EXIT_UNREACHABLE)
