"""What the dashboard's serving strip and the serving screen (`v`) show of a host's serving feed, without
Textual: parts of one line, the rows of the tables, and the accept length tune measured for the profile.

Every word and cell comes from host/servingwords.py, the `serving` command's, so that a value SGLang did
not collect reads "—" here as there, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gdnconsole.config.hosts import Profile
from gdnconsole.host.servingwords import (
    LATENCY_NAMES,
    NOT_COLLECTED,
    SOURCE_WORDS,
    binding_pool,
    headline,
    number,
    percent,
    rank_cells,
)
from gdnconsole.logs.textsafe import visible
from gdnconsole.timefmt import span

# tune's modules load with the serving screen, not with the dashboard's first frame (the strip).
if TYPE_CHECKING:
    from gdnconsole.host.servingfeed import ServingFeed
    from gdnconsole.sglang.servingfigures import Latency, RankFigures, ServingFigures
    from gdnconsole.tune.grid import Combo
    from gdnconsole.tune.results import ComboResult

Tone = Literal["label", "value", "muted", "warn"]
WINDOWS = ((60.0, "1 min"), (300.0, "5 min"))
SHORT_SOURCE = {"metrics": "/metrics", "loads": "/v1/loads", "log": "log"}
PROBLEM_WIDTH = 60  # the stale reason on the strip: one line, the screen says it whole


@dataclass(frozen=True)
class Piece:
    text: str
    tone: Tone


StripLine = tuple[Piece, ...]


# -- sums over DP ranks ---------------------------------------------------------------------------------


def _total(values: Iterable[int | None]) -> int | None:
    said = [v for v in values if v is not None]
    return sum(said) if said else None


def running_text(ranks: Sequence[RankFigures]) -> str:
    """``9/96``: running over every DP rank against the caps' sum (the running alone when a cap is not
    known), "—" when no rank says."""
    running = _total(r.running for r in ranks)
    if running is None:
        return NOT_COLLECTED
    caps = [r.max_running for r in ranks]
    return f"{running}/{sum(c for c in caps if c is not None)}" if None not in caps else str(running)


def binding(ranks: Sequence[RankFigures]) -> tuple[str, float] | None:
    """The pool nearest its end on any rank, and its usage: what caps new requests first."""
    found: list[tuple[float, str]] = []
    for rank in ranks:
        pool = binding_pool(rank)
        if pool is not None:
            use = {"KV": rank.token_usage, "SWA": rank.swa_usage, "mamba": rank.mamba_usage}[pool]
            assert use is not None
            found.append((use, pool))
    if not found:
        return None
    use, pool = max(found)
    return pool, use


def accept_mean(ranks: Sequence[RankFigures]) -> float | None:
    said = [r.accept_length for r in ranks if r.accept_length is not None]
    return sum(said) / len(said) if said else None


# -- the strip ------------------------------------------------------------------------------------------


# Which parts a narrow strip keeps first: the load, then a stale mark, then the rest.
PRIORITY = ("running", "stale", "queue", "pool", "tokens", "ttft", "source", "accept")


def strip_line(feed: ServingFeed | None, server_up: bool, width: int | None = None) -> StripLine | None:
    """The strip's one line, None (hidden) while there is no server or no figures yet; parts given way
    by PRIORITY until it fits ``width`` columns."""
    if not server_up or feed is None or feed.figures is None:
        return None
    parts = _parts(feed)
    while width is not None and len(parts) > 1 and len(plain(_joined(parts))) > width:
        drop = max(parts, key=lambda name: PRIORITY.index(name))
        del parts[drop]
    return _joined(parts)


def _joined(parts: dict[str, tuple[Piece, ...]]) -> StripLine:
    out: list[Piece] = []
    for name in parts:
        if out:
            out.append(Piece(" · ", "muted"))
        out.extend(parts[name])
    return tuple(out)


def _parts(feed: ServingFeed) -> dict[str, tuple[Piece, ...]]:
    """Each part of the strip, in the order it reads."""
    assert feed.figures is not None
    figures = feed.windowed(60.0) or feed.figures
    ranks = figures.ranks
    parts: dict[str, tuple[Piece, ...]] = {
        "running": (Piece("serving ", "label"), Piece(running_text(ranks), "value")),
        "queue": (Piece("queue ", "label"), Piece(number(_total(r.queued for r in ranks)), "value")),
    }
    pool = binding(ranks)
    if pool is not None:
        parts["pool"] = (
            Piece(f"{pool[0]} ", "label"),
            Piece(percent(pool[1]), "value"),
            Piece(" binds", "label"),
        )
    if figures.gen_throughput is not None:
        parts["tokens"] = (Piece(f"{figures.gen_throughput:.0f}", "value"), Piece(" tok/s", "label"))
    ttft, window = _strip_ttft(feed, figures)
    if ttft is not None and ttft.p90 is not None:
        parts["ttft"] = (
            Piece("TTFT p90 ", "label"),
            Piece(span(ttft.p90), "value"),
            Piece(f" ({window})", "label"),
        )
    accept = accept_mean(ranks)
    if accept is not None:
        parts["accept"] = (Piece("accept ", "label"), Piece(f"{accept:.2f}", "value"))
    parts["source"] = (Piece(SHORT_SOURCE[figures.source], "muted"),)
    stale = stale_text(feed)
    if stale is not None:
        parts["stale"] = (
            Piece(stale if len(stale) <= PROBLEM_WIDTH else stale[: PROBLEM_WIDTH - 1] + "…", "warn"),
        )
    return parts


def _strip_ttft(feed: ServingFeed, windowed: ServingFigures) -> tuple[Latency | None, str]:
    """TTFT over the last minute; since the server started when the minute saw no request."""
    if windowed.ttft_s is not None:
        return windowed.ttft_s, "1m"
    return (feed.figures.ttft_s if feed.figures is not None else None), "since start"


def stale_text(feed: ServingFeed) -> str | None:
    """``stale 12 s: /metrics: timed out``: the last poll brought nothing, and since when the figures
    are the same."""
    if feed.problem is None:
        return None
    if feed.figures is not None and feed.figures.source == "log":
        return f"polls fail ({visible(feed.problem)}): the log's last Decode line"
    age = feed.age()
    since = f" {span(age)}" if age is not None else ""
    return f"stale{since}: {visible(feed.problem)}"


def plain(line: StripLine) -> str:
    return "".join(piece.text for piece in line)


# -- the screen -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LatencyRow:
    """One latency over both windows: p50, p90, p99 and how many requests, per window."""

    name: str
    cells: tuple[str, ...]


def latency_cells(latency: Latency | None) -> tuple[str, ...]:
    """p50, p90, p99 and the count of one window; "—" for a quantile before any request in it."""
    if latency is None or latency.count == 0:
        return (NOT_COLLECTED, NOT_COLLECTED, NOT_COLLECTED, "0")
    quantiles = (latency.p50, latency.p90, latency.p99)
    return (*(span(q) if q is not None else NOT_COLLECTED for q in quantiles), str(latency.count))


def latency_rows(feed: ServingFeed) -> tuple[LatencyRow, ...] | None:
    """TTFT, ITL, end-to-end and queue time over the last 1 and 5 minutes; None when the source has no
    latencies (/v1/loads)."""
    if feed.figures is None or feed.figures.source != "metrics":
        return None
    windows = [feed.windowed(seconds) for seconds, _ in WINDOWS]
    rows = []
    for attr, label in LATENCY_NAMES:
        cells: list[str] = []
        for figures in windows:
            cells.extend(latency_cells(getattr(figures, attr) if figures is not None else None))
        rows.append(LatencyRow(label, tuple(cells)))
    return tuple(rows)


def no_latency_words(feed: ServingFeed) -> str:
    source = feed.figures.source if feed.figures is not None else "metrics"
    return f"no latencies from {SOURCE_WORDS[source]}: the server needs --enable-metrics"


def rank_rows(figures: ServingFigures) -> tuple[tuple[str, ...], ...]:
    return tuple(rank_cells(rank) for rank in figures.ranks)


def status_line(feed: ServingFeed) -> str:
    """``SGLang 0.5.23 · from /metrics · 2 DP ranks · 1.0 s old``, or why there are no figures yet."""
    if feed.figures is None:
        why = f": {visible(feed.problem)}" if feed.problem else ""
        return f"no figures yet{why}"
    return headline(feed.figures, feed.age())


def known(values: Iterable[float | None]) -> list[float]:
    """A history's points that were collected (a sparkline draws no gap for "not collected")."""
    return [v for v in values if v is not None]


# -- the accept length tune measured --------------------------------------------------------------------


@dataclass(frozen=True)
class Tuned:
    """An accept length tune measured for the profile: of the combination the profile runs, else of the
    sweep's best, at the sweep's first batch size that measured one."""

    accept_length: float
    combo: Combo
    batch: int
    which: Literal["these flags", "best"]

    @property
    def words(self) -> str:
        what = "the profile's flags" if self.which == "these flags" else "tune's best"
        return f"{self.accept_length:.2f} measured by tune ({what}: {self.combo.label}, batch {self.batch})"


def profile_combo(profile: Profile) -> Combo | None:
    from gdnconsole.tune.grid import Combo

    spec = profile.speculative
    if spec.num_steps is None or spec.eagle_topk is None or spec.num_draft_tokens is None:
        return None
    return Combo(spec.num_steps, spec.eagle_topk, spec.num_draft_tokens)


def tuned_accept(sweeps: Sequence[dict[str, Any]], profile: Profile, python: str) -> Tuned | None:
    """From the tune store's sweep records (oldest first): the newest sweep of this profile as it is now,
    its model and flags beside the speculative ones (``python``: the host's, part of the command line).
    A sweep of the profile before an edit measured another server."""
    from gdnconsole.tune.sweep import flags_digest, from_record

    digest = flags_digest(profile, python)
    for record in reversed(sweeps):
        if str(record.get("profile") or "") != profile.name or not isinstance(record.get("sweep"), dict):
            continue
        sweep = from_record(record)
        if sweep is None or sweep.identity.model != profile.model or sweep.identity.flags != digest:
            continue
        found = _accept_of(sweep.combos, sweep.batches, profile_combo(profile), "these flags")
        best = sweep.best
        if found is None and best is not None:
            found = _accept_of(sweep.combos, (best.batch, *sweep.batches), best.combo, "best")
        if found is not None:
            return found
    return None


def _accept_of(
    results: Sequence[ComboResult],
    batches: Sequence[int],
    combo: Combo | None,
    which: Literal["these flags", "best"],
) -> Tuned | None:
    result = next((r for r in results if r.combo == combo and r.status == "measured"), None)
    if result is None or result.combo is None:
        return None
    for batch in batches:
        figures = result.by_batch.get(batch)
        if figures is not None and figures.accept_length is not None:
            return Tuned(figures.accept_length, result.combo, batch, which)
    return None


def accept_words(figures: ServingFigures | None, tuned: Tuned | None) -> tuple[str, str]:
    """The live accept length and tune's, side by side."""
    live = accept_mean(figures.ranks) if figures is not None else None
    live_text = (
        f"{live:.2f} live" if live is not None else f"{NOT_COLLECTED} live (no speculative decoding said)"
    )
    return live_text, tuned.words if tuned is not None else "no tune sweep of this profile as it is"
