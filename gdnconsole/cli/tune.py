"""`gdnconsole tune HOST`: find the fastest speculative flags that work on HOST, measured (issue 19).

The grid is checked against the host's SGLang rules first; the baseline and each accepted combination
are launched, verified and measured at each batch size; results go to the tune store beside the journal
(``--resume`` reuses them) and to a Markdown/CSV export. Progress goes to stderr; stdout has the ranked
table and chart, or with --json exactly one object (issue 19's, with one result per requested
combination; a combination SGLang runs identically to another after its own adjustments, e.g. ``s2 k1 d2``
and ``s2 k1 d3`` with eagle_topk 1, is launched once, and the other's result has status "measured" with
the shared figures and ``same_as``: the combination it shares them with, else null). Ctrl-C stops the
sweep's server and keeps what was measured (exit 130). Exit 0 when the sweep ran to the end, 1 when no
combination could be measured, 2 for bad arguments.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import click

from gdnconsole.cli.common import EXIT_FAILED, EXIT_USAGE, ask, fail, host_named
from gdnconsole.cli.connect import connected
from gdnconsole.cli.launch import _profile as profile_of
from gdnconsole.config.hosts import ConfigError, Host, Profile, config_path
from gdnconsole.host.journal import Journal, default_dir
from gdnconsole.logs.textsafe import visible
from gdnconsole.tune import apply, prompts, report, sweep
from gdnconsole.tune.grid import DEFAULT_BATCHES, DEFAULT_GRID, GridError, parse_batches, parse_grid
from gdnconsole.tune.measure import Load
from gdnconsole.tune.results import Identity
from gdnconsole.tune.store import TuneStore

EXIT_INTERRUPTED = 130


async def _sweep(
    host: Host, profile: Profile, options: sweep.Options, held: sweep.Sweep | None, say: sweep.Say
) -> sweep.Sweep:
    async with connected(host) as session:
        return await sweep.run(
            session,
            profile,
            options,
            store=TuneStore(host.name),
            journal=Journal(host.name),
            say=say,
            sweep=held,
        )


def _held(host: Host, profile: Profile, load: Load) -> sweep.Sweep:
    """The sweep object the engine fills as it goes: what is left of it when Ctrl-C ends the run."""
    ident = Identity(host.name, None, profile.model, [], load.prompts.ident, "", load.max_tokens)
    return sweep.Sweep(ident, load.batches)


@click.command("tune")
@click.argument("host_name", metavar="HOST")
@click.option("--profile", "profile_name", help="Launch profile to tune (default: the host's default).")
@click.option("--grid", default=DEFAULT_GRID, show_default=True, help="Speculative settings to sweep.")
@click.option("--batch", "batch_text", default=DEFAULT_BATCHES, show_default=True, help="Requests in flight.")
@click.option(
    "--requests",
    type=click.IntRange(min=1, max=1024),
    default=8,
    show_default=True,
    help="Per batch size (two waves of the batch at least).",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=128,
    show_default=True,
    help="Tokens per answer (sent with ignore_eos: every answer is this long).",
)
@click.option(
    "--prompts", "prompt_set", default="chat", show_default=True, help="chat, code, or a file (one per line)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1.0),
    default=600.0,
    show_default=True,
    help="Seconds per combination to VERIFIED.",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Skip combinations measured before on the same host, model, version and prompts.",
)
@click.option("--apply", "apply_what", type=click.Choice(["best"]), help="Save the winner into the profile.")
@click.option("--yes", is_flag=True, help="With --apply: save without asking.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def tune_cmd(
    host_name: str,
    profile_name: str | None,
    grid: str,
    batch_text: str,
    requests: int,
    max_tokens: int,
    prompt_set: str,
    timeout: float,
    resume: bool,
    apply_what: str | None,
    yes: bool,
    as_json: bool,
) -> None:
    """Sweep speculative settings on HOST and rank them by measured tokens/s against the baseline.

    The grid is checked against the host's SGLang rules first: rejected combinations are listed with
    their rule and never launched; combinations SGLang runs identically once it has adjusted them are
    launched once and share their figures ("same as s2 k1 d3"). The baseline and each accepted
    combination are launched (replacing the server gdnconsole launched there), VERIFIED and measured at
    each batch size; the sweep's last server is stopped at the end. Ctrl-C stops the current server and
    keeps what was measured (exit 130). Exit 0 when the sweep ran to the end, 1 when no combination
    could be measured, 2 for bad arguments.
    """
    try:
        combos = parse_grid(grid)
        load = Load(prompts.load(prompt_set), tuple(parse_batches(batch_text)), requests, max_tokens)
    except GridError as exc:
        fail(str(exc), EXIT_USAGE)
    host = host_named(host_name)
    profile = profile_of(host, profile_name, ())
    options = sweep.Options(tuple(combos), load, timeout=timeout, resume=resume)

    def progress(message: str) -> None:
        if not as_json:
            click.echo(f"-- {visible(message)}", err=True)

    held = _held(host, profile, load)
    try:
        done = asyncio.run(_sweep(host, profile, options, held, progress))
    except KeyboardInterrupt:
        held.interrupted = True
        _print(held, as_json)
        click.echo(
            "gdnconsole: interrupted: the sweep's server was stopped; measured results are kept", err=True
        )
        sys.exit(EXIT_INTERRUPTED)
    _print(done, as_json)
    if apply_what and done.best is not None:
        _apply(host, profile, done, yes)
    sys.exit(0 if any(r.status == "measured" for r in done.combos) else EXIT_FAILED)


def _print(done: sweep.Sweep, as_json: bool) -> None:
    paths = _export(done)
    if as_json:
        click.echo(json.dumps(done.to_json()))  # one line, as every --json
        return
    click.echo(report.text_table(done))
    for notice in report.common_notices(done):
        click.echo(f"  for every combination: {visible(notice)}")
    click.echo("")
    for line in report.chart_lines(done):
        click.echo(line)
    best = done.best
    click.echo("")
    click.echo(
        f"best: {best.combo.label} at batch {best.batch}, {best.speedup:.2f}× the baseline"
        if best is not None
        else "best: none (no combination was measured against a measured baseline)"
    )
    if paths is not None:
        click.echo(f"exported: {paths[0]} and {paths[1]}")


def _export(done: sweep.Sweep) -> tuple[Path, Path] | None:
    """Markdown and CSV beside the journal (a failure is said, the sweep's figures are printed anyway)."""
    if not done.results:
        return None
    try:
        return report.export(done, default_dir())
    except OSError as exc:
        say(f"gdnconsole: the results were not exported: {exc}")
        return None


def say(message: str) -> None:
    click.echo(visible(message), err=True)  # errors and diffs carry what the host and the file said


def _apply(host: Host, profile: Profile, done: sweep.Sweep, yes: bool) -> None:
    best = done.best
    assert best is not None
    new, diff = apply.applied(profile, best.combo)
    if not diff:
        say(f"profile {profile.name} already has {best.combo.label}")
        return
    say(f"profile {profile.name} of {host.name}: " + "; ".join(diff))
    if not yes and not (sys.stdin.isatty() and ask("Save it?")):
        say("not saved" + ("" if sys.stdin.isatty() else " (no terminal to ask on: pass --yes)"))
        return
    path: Path = config_path()
    try:
        apply.save(path, host.name, new)
    except (ConfigError, OSError) as exc:
        say(f"not saved: {exc}")
        return
    say(f"saved into {path}")
