"""One host in one line: the status bar above its GPUs, and its row in the overview of every open host.

Built from a HostSession's state and a clock (uptime and "down since" depend on the time; tests pass a
fixed one). Everything that comes from the host is appended as plain text, never parsed as markup. The
colours are those of the log palette that the dashboard shares (and the app changes in place with the
theme), as in the stage timeline beside the log: good in the ready stage's colour, bad in the error
severity's, waiting in the warning severity's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from gdnconsole.chat.model import Health
from gdnconsole.host.link import LinkState
from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible
from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.timefmt import duration, span
from gdnconsole.ui.models.textfit import Part, fit_parts
from gdnconsole.ui.theme import LogPalette

Clock = Callable[[], float]
SEP = " │ "
BOLD = Style(bold=True)


def good(palette: LogPalette) -> Style:
    return palette.stages[Stage.READY] + BOLD


def bad(palette: LogPalette) -> Style:
    return palette.severities[Severity.ERROR] + BOLD


def waiting(palette: LogPalette) -> Style:
    return palette.severities[Severity.WARNING] + BOLD


def clock_time(epoch: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(epoch))


def link_text(
    session: HostSession,
    palette: LogPalette,
    *,
    short: bool = False,
    rtt: bool = True,
    now: float | None = None,
) -> Text:
    """The link state, e.g. ``● connected 3 ms`` (the round trip unless not ``rtt``) or ``✖ down since
    10:04:05, retry in 4s`` (the first failure; the next try, given the time ``now``)."""
    link = session.link
    if link is LinkState.CONNECTED:
        rtt = rtt and session.rtt_ms is not None
        return Text.assemble(("● connected", good(palette)), f" {session.rtt_ms:.0f} ms" if rtt else "")
    if link is LinkState.CONNECTING:
        return Text("◌ connecting…", waiting(palette))
    if link is LinkState.DOWN:
        since = session.down_since
        out = Text("✖ down" + (f" since {clock_time(since)}" if since is not None else ""), bad(palette))
        if not short and now is not None and session.retry_at is not None:
            out.append(f", retry in {duration(max(0.0, session.retry_at - now))}")
        return out
    if link is LinkState.UNKNOWN_HOST:
        return Text("? unknown host key" + ("" if short else " (r: decide)"), waiting(palette))
    labels = {
        LinkState.AUTH_FAILED: "✖ auth failed",
        LinkState.HOST_KEY_REFUSED: "✖ host key refused",
        LinkState.NO_AGENT: "✖ no agent",
        LinkState.CRASHED: "✖ gdnconsole bug (r: retry)",
    }
    return Text(labels.get(link, link.value), bad(palette))


def stage_text(session: HostSession, palette: LogPalette) -> Text | None:
    """Where the last startup in the log got to, when a server runs or the log says it failed."""
    startup = session.startup
    if startup is None:
        return None
    fatal = startup.fatal
    if fatal is not None:
        return Text(f"✖ failed in {fatal.stage.label}", palette.severities[Severity.FATAL])
    if session.server is None:
        return None
    style = palette.stages[startup.stage]
    if startup.stage >= Stage.READY:
        return Text(f"● {startup.stage.label}", style + BOLD)
    return Text(f"◐ {startup.stage.label}…", style)


def verdict(session: HostSession) -> tuple[bool | None, str] | None:
    """Whether the current server answered (True: VERIFIED, False: failed or lost), with its detail;
    None while nothing is known (no server, not yet asked)."""
    serving = session.serving_now
    if serving is None:
        return None
    if serving.verifying:
        return None, "verifying…"
    if serving.verified is True:
        latency = f" {span(serving.latency_ms / 1000)}" if serving.latency_ms is not None else ""
        return True, f"answered in{latency}" if latency else "answered"
    if serving.verified is False:
        return False, visible(serving.reason or "no answer")  # the server's or the link's words
    if serving.health is Health.STARTING:
        return None, "health 503: warming up"
    if serving.health is Health.REFUSED:
        return None, "health: nothing listens yet"
    return None


def verify_text(session: HostSession, palette: LogPalette, *, short: bool = False) -> Text | None:
    """``✔ VERIFIED 406 ms``, ``✖ VERIFY FAILED: <reason>``, ``◌ verifying…``."""
    known = verdict(session)
    if known is None:
        return None
    ok, detail = known
    if ok is True:
        latency = session.serving.latency_ms
        return Text(
            "✔ VERIFIED" + ("" if short or latency is None else f" {span(latency / 1000)}"), good(palette)
        )
    if ok is False:
        lost = session.serving.lost
        label = "✖ VERIFIED LOST" if lost else "✖ VERIFY FAILED"
        return Text(label if short else f"{label}: {detail[:80]}", bad(palette))
    return Text(f"◌ {detail}", waiting(palette))


def server_text(session: HostSession, now: float) -> Text:
    server = session.server
    if server is None:
        return Text("no server", Style(dim=True))
    out = Text(f"server pid {server.pid}")
    if server.start_time:
        out.append(f" up {duration(now - server.start_time)}")
    return out


def decode_text(session: HostSession, *, accept: bool = True) -> Text | None:
    """Throughput and (unless not ``accept``) accept length from the latest Decode line."""
    startup = session.startup
    if startup is None or startup.gen_throughput is None or session.server is None:
        return None
    out = Text(f"{startup.gen_throughput:.1f} tok/s")
    if accept and startup.accept_len is not None:
        out.append(f" accept {startup.accept_len:.2f}")
    return out


# How long each part of the status bar stays as the terminal narrows (textfit.fit_parts): the version goes
# first, then the server's pid and uptime, the throughput; the rest is shortened, never dropped.
KEEP = {"name": 100, "link": 90, "verify": 85, "stage": 80, "note": 70, "decode": 30, "server": 20,
        "version": 10}  # fmt: skip


def host_status(
    session: HostSession,
    palette: LogPalette,
    now: float,
    width: int | None = None,
    note: Text | None = None,
) -> Text:
    """The host's one line, with ``note`` (a launch's progress) after it; parts give way by priority
    until it fits ``width`` cells, and a line still too wide ends in "…"."""
    parts = [Part(Text(visible(session.host.name), BOLD), KEEP["name"])]
    link = link_text(session, palette, now=now)
    parts.append(Part(link, KEEP["link"], link_text(session, palette, short=True, rtt=False, now=now)))
    if session.hello is not None:
        version = session.hello.sglang
        said = f"SGLang {visible(version)}" if version else "SGLang not installed"  # as the host said
        parts.append(Part(Text(said), KEEP["version"]))
        parts.append(Part(server_text(session, now), KEEP["server"]))
    stage = stage_text(session, palette)
    if stage is not None:
        parts.append(Part(stage, KEEP["stage"]))
    verified = verify_text(session, palette)
    if verified is not None:
        parts.append(Part(verified, KEEP["verify"], verify_text(session, palette, short=True)))
    decode = decode_text(session)
    if decode is not None:
        parts.append(Part(decode, KEEP["decode"], decode_text(session, accept=False)))
    if note is not None:
        parts.append(Part(note, KEEP["note"]))
    return fit_parts(parts, width, SEP)


def gpus_used(session: HostSession) -> Text:
    """``2/2 GPUs 88.4/96.0 GiB``: how many GPUs hold memory, and how much of all of it."""
    gpus = session.gpus
    if not gpus:
        return Text("no GPU data" if session.hello else "", Style(dim=True))
    used = [g.used_mib or 0 for g in gpus]
    total = sum(g.total_mib or 0 for g in gpus)
    busy = sum(1 for g in gpus if g.processes)
    return Text(f"{busy}/{len(gpus)} GPUs {sum(used) / 1024:.1f}/{total / 1024:.1f} GiB")


def overview_cells(session: HostSession, palette: LogPalette, *, short: bool = False) -> list[Text]:
    """One host's overview columns: link, stage (✔/✖ when verified or not), GPUs in use, throughput;
    ``short`` leaves out the link's round trip and the accept length."""
    stage = stage_text(session, palette)
    verified = verify_text(session, palette, short=True)
    if stage is not None and verified is not None and verdict(session) != (None, "verifying…"):
        stage = Text.assemble(stage, " ", verified[:1])  # ✔ or ✖ after the stage
    decode = decode_text(session, accept=not short)
    # The selected host's bar has the round trip.
    link = link_text(session, palette, short=True, rtt=not short)
    return [link, stage or Text(), gpus_used(session), decode or Text()]


def overview_rows(
    sessions: Sequence[HostSession], palette: LogPalette, labels: Sequence[str], width: int | None
) -> list[Text]:
    """One row per host, aligned in columns as wide as their widest cell; on a narrow screen the
    columns close up, the link loses its round trip and the throughput its accept length; a row still too
    wide ends in "…"."""
    names = [Text(visible(s.host.name), BOLD) for s in sessions]
    rows: list[Text] = []
    for short in (False, True):
        table = [
            [Text(f"{label} ", Style(dim=True)), name, *overview_cells(session, palette, short=short)]
            for label, name, session in zip(labels, names, sessions, strict=True)
        ]
        widths = [max(row[i].cell_len for row in table) for i in range(len(table[0]))]
        rows = [aligned(row, widths, gap=1 if short else 2) for row in table]
        if width is None or max(row.cell_len for row in rows) <= width:
            return rows
    for row in rows:
        row.truncate(width or 0, overflow="ellipsis")
    return rows


def aligned(cells: list[Text], widths: list[int], gap: int) -> Text:
    out = Text()
    for i, (cell, width) in enumerate(zip(cells, widths, strict=True)):
        last = i == len(cells) - 1
        if not last and width == 0:
            continue  # a column empty on every row takes no room
        out.append_text(cell)
        if not last:
            space = 0 if i == 0 else gap  # the label already ends in a space
            out.append(" " * (width - cell.cell_len + space))
    out.rstrip()
    return out


class HostStatusBar(Static):
    DEFAULT_CSS = """
    HostStatusBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    def content_width(self) -> int | None:
        """The cells the line may use (None before the first layout: no dropping yet)."""
        width = self.content_region.width
        return width if width > 0 else None
