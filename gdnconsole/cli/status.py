"""`gdnconsole status HOST [--json]`: one look at a host, without the dashboard."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from rich.console import Group
from rich.table import Table
from rich.text import Text

from gdnconsole.cli.common import EXIT_UNREACHABLE, ask, host_named, output_console
from gdnconsole.config.hosts import Host
from gdnconsole.host import gpumem, launcher
from gdnconsole.host.link import LinkState
from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible, visible_lines
from gdnconsole.sglang.summary import BACKEND_NAMES, kernels
from gdnconsole.timefmt import span

if TYPE_CHECKING:
    from gdnconsole.host.state import Gpu

SETTLE_TIMEOUT_S = 30.0
FIGURES_TIMEOUT_S = 8.0  # the agent's round: three requests of at most 2 s each


def _settled(session: HostSession) -> bool:
    """Connected with a GPU sample, a process scan and the log read to its end; or failed."""
    if session.link is LinkState.CONNECTED:
        return session.complete
    return session.link is not LinkState.CONNECTING


def _serves(session: HostSession) -> bool:
    """Connected to a server whose log says it is ready: its own endpoints are worth a poll."""
    startup = session.startup
    return (
        session.link is LinkState.CONNECTED and session.server is not None and bool(startup and startup.ready)
    )


async def _poll_figures(session: HostSession) -> None:
    """One round of the server's own figures (load, queue, latencies), or none within FIGURES_TIMEOUT_S."""
    owner = object()
    session.figures.want(owner, True)
    try:
        await session.wait_until(lambda: session.figures.feed is not None, FIGURES_TIMEOUT_S)
    finally:
        session.figures.want(owner, False)


async def _run_until_settled(session: HostSession, timeout: float) -> None:
    runner = asyncio.create_task(session.run())
    try:
        await session.wait_until(lambda: _settled(session), timeout)
        if _serves(session):
            await _poll_figures(session)
    finally:
        await session.stop()
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):  # a bug in the session says so itself (run())
            await runner


async def look(
    host: Host, *, timeout: float = SETTLE_TIMEOUT_S, confirm: Callable[[str], bool] | None = None
) -> HostSession:
    """Connect, wait for a complete picture (or a failure), disconnect.

    An unknown host is connected only when ``confirm`` (shown the fingerprint) says yes.
    """
    session = HostSession(host, backoff=(timeout,), probe=False)  # a look sends no prompt
    await _run_until_settled(session, timeout)
    unknown = session.link is LinkState.UNKNOWN_HOST and session.fingerprint
    if unknown and confirm is not None and confirm(session.link_message or session.fingerprint or ""):
        session.accept_host_key(session.fingerprint or "")
        await _run_until_settled(session, timeout)
    launcher.recall_verification(session)
    return session


def _confirm_on_terminal(message: str) -> bool:
    click.echo(visible_lines(message), err=True)  # what the link said of the host's key
    return ask("Trust this host key and write it to known_hosts?")  # asked inside the event loop


def session_json(session: HostSession) -> dict[str, Any]:
    """What the session knows of its host, in the shape of `status --json` (``status_json`` adds what
    the log says)."""
    ranks = {p.gpu: p.rank for p in session.placements() if p.gpu is not None}
    hello, link = session.hello, session.link
    return {
        "host": session.host.name,
        # A host reached without a usable Python is, for scripts, a host that cannot be used.
        "link": LinkState.DOWN.value if link is LinkState.NO_AGENT else link.value,
        "message": session.link_message,
        "sglang_version": hello.sglang if hello is not None else None,
        "nvml": session.nvml_source,
        "gpus": [_gpu_json(gpu, ranks.get(gpu.index)) for gpu in session.gpus],
        "server": _server_json(session),
    }


def _server_json(session: HostSession) -> dict[str, Any] | None:
    server = session.server
    if server is None:
        return None
    startup = session.startup
    fatal = startup.fatal if startup else None
    return {
        "pid": server.pid,
        "pgid": server.pgid,
        "port": server.port,
        "stage": startup.stage.label if startup else "starting",
        "ready": bool(startup and startup.ready),
        "fatal": {"line": fatal.line, "summary": fatal.summary} if fatal else None,
        "log": session.log.path,
        **_serving_json(session),
        "figures": _figures_json(session),
    }


def _figures_json(session: HostSession) -> dict[str, Any] | None:
    """The server's own load and latency figures (`serving --json`'s shape) with their age and, when
    the last poll brought none, why; None when none were polled."""
    feed = session.figures.feed
    if feed is None:
        return None
    figures = feed.figures.to_json() if feed.figures is not None else None
    return {"now": figures, "age_s": feed.age(), "problem": feed.problem}


def _serving_json(session: HostSession) -> dict[str, Any]:
    serving = session.serving_now
    if serving is None:
        return {"health": None, "verified": None, "verify": None}  # nothing known of this server yet
    return {
        "health": serving.health.value if serving.health else None,
        "verified": serving.verified,
        "verify": serving.as_json() if serving.verified is not None else None,
    }


def _gpu_json(gpu: Gpu, rank: str | None) -> dict[str, Any]:
    return {
        "index": gpu.index,
        "uuid": gpu.uuid,
        "name": gpu.name,
        "total_mib": gpu.total_mib,
        "used_mib": gpu.used_mib,
        "util_pct": gpu.util_pct,
        "rank": rank,
        "processes": [{"pid": p.pid, "used_mib": p.used_mib, "name": p.name} for p in gpu.processes],
    }


def status_json(session: HostSession) -> dict[str, Any]:
    """The `status --json` object: the session's, and what the log says the server chose and holds (the
    kernels and backends, each GPU's memory split as the dashboard's GPU panel draws it, in MiB)."""
    data = session_json(session)
    split = gpumem.memory_split(session.gpus, session.server, session.placements(), session.startup)
    for gpu in data["gpus"]:
        gpu["memory"] = split.get(gpu["index"])
    server = data["server"]
    if server is not None:
        startup = session.startup
        server["kernels"] = kernels(startup)
        fatal = startup.fatal if startup is not None else None
        if server["fatal"] is not None and fatal is not None:
            server["fatal"]["hint"] = fatal.hint
    return data


def _split_text(split: dict[str, int] | None) -> str:
    """``weights 25.6 · KV 8.3 · … GiB``: the parts in the panel's order, free last."""
    if not split:
        return "–"
    names = {"weights": "weights", "kv": "KV", "mamba": "mamba", "graphs": "graphs", "other": "other"}
    names |= {"others": "others", "free": "free"}
    said = [f"{label} {split[part] / 1024:.1f}" for part, label in names.items() if part in split]
    return " · ".join(said) + " GiB"


def render(session: HostSession) -> Group:
    data = status_json(session)
    parts: list[Any] = []
    head = Text()
    # Every string below came from the hosts file, the host or its log: shown, never obeyed (ESC…).
    head.append(visible(data["host"]), style="bold")
    link_style = "green" if data["link"] == "connected" else "red"
    head.append("  ")
    head.append(data["link"], style=link_style)
    if session.rtt_ms is not None:
        head.append(f" ({span(session.rtt_ms / 1000)})")
    if session.hello:
        head.append(visible(f"  SGLang {data['sglang_version'] or 'not installed'}  NVML via {data['nvml']}"))
    parts.append(head)
    if session.link_message and data["link"] != "connected":
        parts.append(Text(visible(session.link_message), style="red"))
    if data["gpus"]:
        table = Table(box=None, pad_edge=False, header_style="bold")
        for column in ("gpu", "name", "rank", "used / total", "memory", "util", "processes"):
            table.add_column(column)
        for gpu in data["gpus"]:
            procs = ", ".join(f"{p['pid']} ({p['used_mib']} MiB)" for p in gpu["processes"]) or "–"
            util = "n/a" if gpu["util_pct"] is None else f"{gpu['util_pct']}%"
            table.add_row(
                str(gpu["index"]),
                visible(str(gpu["name"])),
                visible(gpu["rank"] or "–"),
                f"{gpu['used_mib']} / {gpu['total_mib']} MiB",
                _split_text(gpu["memory"]),
                util,
                procs,
            )
        parts.append(table)
    elif session.hello:
        reason = session.hello.nvml.reason or "no GPU data"
        parts.append(Text(visible(f"no GPU data: {reason}"), style="yellow"))
    server = data["server"]
    if server:
        line = Text(f"server pid {server['pid']} (group {server['pgid']}), port {server['port']}: ")
        line.append(visible(server["stage"]), style="green" if server["ready"] else "yellow")
        if server["verified"] is not None:
            line.append(
                "  VERIFIED"
                if server["verified"]
                else "  VERIFIED LOST"
                if (server["verify"] or {}).get("lost")
                else "  VERIFY FAILED",
                style="green" if server["verified"] else "red",
            )
            if server["verify"] and server["verify"].get("reason"):
                line.append(visible(f" ({server['verify']['reason']})"))
        if server["fatal"]:
            line.append(f"  fatal at line {server['fatal']['line']}: ", style="red")
            line.append(visible(server["fatal"]["summary"]))
        parts.append(line)
        if server["fatal"] and server["fatal"].get("hint"):
            parts.append(Text(visible(server["fatal"]["hint"]), style="yellow"))
        if server["kernels"]:
            chosen = "   ".join(f"{BACKEND_NAMES[k]} {v}" for k, v in server["kernels"].items())
            parts.append(Text(visible("kernels: " + chosen)))
    elif session.hello:
        parts.append(Text("no SGLang server running"))
    return Group(*parts)


@click.command("status")
@click.argument("host_name", metavar="HOST")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=SETTLE_TIMEOUT_S,
    show_default=True,
    help="Seconds to wait for the host.",
)
def status_cmd(host_name: str, as_json: bool, timeout: float) -> None:
    """Link, GPUs per rank and the SGLang server of HOST; exit 3 when the host cannot be reached."""
    host = host_named(host_name)
    confirm = _confirm_on_terminal if sys.stdin.isatty() and not as_json else None
    session = asyncio.run(look(host, timeout=timeout, confirm=confirm))
    if as_json:
        click.echo(json.dumps(status_json(session)))
    else:
        output_console().print(render(session))
    sys.exit(0 if session.link is LinkState.CONNECTED else EXIT_UNREACHABLE)
