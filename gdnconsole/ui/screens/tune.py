"""Tune (`u` on the dashboard): sweep the speculative settings of one host and rank them, as
`gdnconsole tune` does, with the grid, the progress, the results table and the chart on one screen.

The sweep runs as an asyncio worker on the app's loop (the engine talks to the agent through the host's
session); it only posts messages, and the handlers repaint. Escape stops a running sweep (the engine stops
the server it launched and keeps what it measured), and closes the screen when none runs. ``ctrl+b``
saves the best combination into the profile, after a confirmation with the flag diff. On opening, the
screen shows the last sweep stored for the host and profile (the tune store beside the journal), so that
results outlive the screen; a new run replaces it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Input, Label, Static

from gdnconsole.config.hosts import ConfigError, Profile
from gdnconsole.errors import EXPLAINED
from gdnconsole.host.consolelog import record_bug
from gdnconsole.host.journal import Journal
from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible
from gdnconsole.sglang.launch import launch_spec, restore_env, restore_secrets
from gdnconsole.sglang.profileargv import profile_from_argv
from gdnconsole.tune import apply, prompts, report
from gdnconsole.tune.grid import (
    DEFAULT_BATCHES,
    DEFAULT_GRID,
    GridError,
    grid_text,
    parse_batches,
    parse_grid,
)
from gdnconsole.tune.measure import Load
from gdnconsole.tune.results import ComboResult, ranked
from gdnconsole.tune.store import TuneStore
from gdnconsole.tune.sweep import Options, Sweep, identity_of, run, stored
from gdnconsole.ui import screenlist
from gdnconsole.ui.afterkeys import after_typing
from gdnconsole.ui.dialogs.confirm import ConfirmScreen, diff_text
from gdnconsole.ui.tones import Tones
from gdnconsole.ui.widgets.keybar import KeyBar

DIM = Style(dim=True)
DEFAULT_REQUESTS = "8"
DEFAULT_MAX_TOKENS = 128
RELAUNCHES = "Each combination relaunches the server; the sweep's last one is stopped at its end."


class TuneProgress(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class TuneResult(Message):
    def __init__(self, result: ComboResult) -> None:
        super().__init__()
        self.result = result


class TuneEnded(Message):
    def __init__(self, sweep: Sweep, error: str | None = None) -> None:
        super().__init__()
        self.sweep = sweep
        self.error = error


def status_style(status: str, tones: Tones) -> Style:
    return {"measured": tones.good, "crashed": tones.bad, "rejected": tones.error, "timeout": tones.warn}.get(
        status, Style()
    )


def columns(batches: Sequence[int]) -> list[str]:
    head = ["combination", "status"]
    for batch in batches:
        head += [f"b{batch} tok/s", f"b{batch} ×"]
    return [*head, "accept", "TTFT p50", "startup", "KV tokens", "detail"]


def row_of(result: ComboResult, batches: Sequence[int], common: Sequence[str], tones: Tones) -> list[Text]:
    """One table row: tokens/s and speed-up per batch size, the first batch's accept length and TTFT."""

    def num(value: float | None, fmt: str) -> Text:
        return Text("–" if value is None else format(value, fmt), DIM if value is None else Style())

    cells = [Text(result.label), Text(result.status, status_style(result.status, tones))]
    for batch in batches:
        figures = result.by_batch.get(batch)
        cells += [num(figures.tokens_per_s if figures else None, ".1f")]
        speedup = figures.speedup if figures else None
        cells += [
            num(speedup, ".2f") if speedup is None or speedup < 1 else Text(f"{speedup:.2f}", tones.good)
        ]
    first = result.by_batch.get(batches[0]) if batches else None
    cells += [
        num(first.accept_length if first else None, ".2f"),
        num(first.ttft_p50_ms if first else None, ".0f"),
        num(result.startup_s, ".1f"),
        Text(str(result.kv_tokens) if result.kv_tokens else "–"),
        Text(report.detail(result, common), tones.error if result.rule or result.fatal else DIM),
    ]
    return cells


def ended_text(sweep: Sweep) -> str:
    """The progress line once a sweep has ended: how it ended, what it found."""
    best = sweep.best
    done = "interrupted" if sweep.interrupted else "done"
    winner = f" · best {best.combo.label} at batch {best.batch}, {best.speedup:.2f}×" if best else ""
    return f"{done}: {report.summary_line(sweep.results)}{winner}"


class TuneScreen(Screen[Profile | None]):
    """Dismissed with the profile saved by apply (the dashboard launches it from then on), else None."""

    DEFAULT_CSS = """
    TuneScreen #tune-title { height: 1; background: $panel; padding: 0 1; }
    TuneScreen #tune-form { height: 3; padding: 0 1; }
    TuneScreen #tune-form Label { padding: 1 1 0 0; }
    TuneScreen #tune-grid { width: 1fr; }
    TuneScreen #tune-batch, TuneScreen #tune-requests { width: 9; }
    TuneScreen #tune-prompts { width: 12; }
    TuneScreen #tune-progress { height: 1; padding: 0 1; }
    TuneScreen DataTable { height: 1fr; }
    TuneScreen #tune-chart-box { height: auto; max-height: 45%; border-top: solid $panel; padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("tune").own
    LAUNCHING: ClassVar[frozenset[str]] = screenlist.spec("tune").launching  # none in a read-only console

    def __init__(
        self,
        session: HostSession,
        profile: Profile,
        journal: Journal,
        *,
        config_path: Path | None = None,
        readonly: bool = False,
    ) -> None:
        super().__init__()
        self.session = session
        self.profile = profile
        self.journal = journal
        self.config_path = config_path
        self.readonly = readonly
        self.sweep: Sweep | None = None
        self.running = False
        self.ended = False  # a sweep run on this screen has ended
        self.last_message = ""
        self.applied: Profile | None = None
        self.before: Profile | None = None  # what ran when the sweep started: offered again at its end
        self.relaunch_asked: Profile | None = None  # the dashboard relaunches it once the screen closes

    def compose(self) -> ComposeResult:
        host = self.session.host.name
        yield Static(Text(f"Tune · {host} · profile {self.profile.name} · {self.session.facts.describe()}"),
                     id="tune-title")  # fmt: skip
        with Horizontal(id="tune-form"):
            yield Label("grid")
            yield Input(DEFAULT_GRID, id="tune-grid")
            yield Label("batch")
            yield Input(DEFAULT_BATCHES, id="tune-batch")
            yield Label("requests")
            yield Input(DEFAULT_REQUESTS, id="tune-requests")
            yield Label("prompts")
            yield Input("chat", id="tune-prompts")
        yield Static(Text("ctrl+r runs the sweep: the baseline, then each combination the rules accept", DIM),
                     id="tune-progress")  # fmt: skip
        yield DataTable(cursor_type="row", zebra_stripes=True, id="tune-table")
        with VerticalScroll(id="tune-chart-box"):
            yield Static(Text(""), id="tune-chart")
        yield KeyBar()

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._paint())
        self._load_stored()

    @work(thread=True, group="tune-stored", exit_on_error=False)
    def _load_stored(self) -> None:
        """The last sweep stored for this host and profile, shown unless a run (or a shown sweep) came
        first."""
        store = TuneStore(self.session.host.name, self.journal.path.parent)
        sweep = stored(store, self.profile.name)
        if sweep is not None and sweep.results:
            self.app.call_from_thread(self._show_stored, sweep)

    def _show_stored(self, sweep: Sweep) -> None:
        if self.sweep is not None or self.running:
            return
        self.show(sweep)
        combos = [r.combo for r in sweep.results if r.combo is not None]
        if combos:
            self.query_one("#tune-grid", Input).value = grid_text(combos)
        if sweep.batches:
            self.query_one("#tune-batch", Input).value = ",".join(map(str, sweep.batches))
        when = time.strftime("%m-%d %H:%M", time.localtime(sweep.started))
        self._progress(f"last sweep, {when}: {ended_text(sweep)} · ctrl+r runs a new one")
        self.refresh_bindings()

    # -- the sweep -------------------------------------------------------------------------------------

    def _options(self) -> Options:
        """What the fields say (GridError, ValueError: said as a toast, nothing runs)."""
        combos = parse_grid(self.query_one("#tune-grid", Input).value)
        batches = tuple(parse_batches(self.query_one("#tune-batch", Input).value))
        requests = int(self.query_one("#tune-requests", Input).value)
        if requests < 1:
            raise ValueError("requests: at least 1")
        load = Load(prompts.load(self.query_one("#tune-prompts", Input).value.strip()), batches, requests,
                    DEFAULT_MAX_TOKENS)  # fmt: skip
        return Options(tuple(combos), load)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run":
            return not self.readonly and not self.running
        if action == "relaunch":
            return not self.readonly and not self.running and self.before is not None and self.ended
        if action == "apply_best":
            return bool(self.sweep and self.sweep.best and not self.running and self.config_path is not None)
        return True

    def action_run(self) -> None:
        after_typing(self, self._run_now)  # the grid as typed, the keys just before ctrl+r included

    def _run_now(self) -> None:
        try:
            options = self._options()
        except (GridError, ValueError) as exc:
            self.notify(visible(str(exc)), severity="error", timeout=8)
            return
        pid = self.session.launched_pid if self.session.launched_alive else None
        if pid is None:
            self._start(options)
            return
        dialog = ConfirmScreen(
            f"Sweep on {self.session.host.name}? Its server (pid {pid}, gdnconsole's) is stopped first",
            [("", Text(RELAUNCHES))],
            yes="Sweep",
            no="Keep it running",
            dialog_id="confirm-tune-run",
        )
        self.app.push_screen(dialog, lambda yes: self._start(options) if yes else None)

    def _running_profile(self) -> Profile | None:
        """The profile of the server this console runs on the host now (None: none runs), from its own
        command line: the sweep will stop it, and its end offers it again."""
        record = self.session.launched if self.session.launched_alive else None
        if record is None or not record.argv:
            return None
        base = self.profile
        argv = restore_secrets(record.argv, launch_spec(base).argv)  # a masked key: the profile's own
        env = restore_env(record.env, base.env)
        return profile_from_argv(base.name, argv, env, base)

    def _start(self, options: Options) -> None:
        self.before = self._running_profile()
        self.ended = False
        self.sweep = Sweep(identity_of(self.session, self.profile, options.load), options.load.batches)
        self.running = True
        self._fill_columns()
        self._progress("starting the sweep")
        self.refresh_bindings()
        self._run(options, self.sweep)

    @work(group="tune", exclusive=True, exit_on_error=False)
    async def _run(self, options: Options, sweep: Sweep) -> None:
        error = None
        try:
            store = TuneStore(self.session.host.name, self.journal.path.parent)
            await run(self.session, self.profile, options, store=store, journal=self.journal, say=self._said,
                      on_result=self._measured, sweep=sweep)  # fmt: skip
        except EXPLAINED as exc:
            error = str(exc)
        except Exception as exc:  # a bug of ours, said as one, its traceback in the console's log
            error = record_bug(f"{self.session.host.name}: tune", exc)
        finally:
            self.post_message(TuneEnded(sweep, error))

    def _said(self, text: str) -> None:
        self.post_message(TuneProgress(text))

    def _measured(self, result: ComboResult) -> None:
        self.post_message(TuneResult(result))

    def on_tune_progress(self, message: TuneProgress) -> None:
        self._progress(message.text)

    def on_tune_result(self, _message: TuneResult) -> None:
        self._paint()

    def on_tune_ended(self, message: TuneEnded) -> None:
        self.running = False
        self.refresh_bindings()
        sweep = message.sweep
        if message.error:
            self.notify(visible(message.error), severity="error", timeout=10)
        self._paint()
        self.ended = True
        self.refresh_bindings()
        self._progress(f"{ended_text(sweep)} · {self._after_sweep()}")
        if sweep.results:
            self._export(sweep)

    def _after_sweep(self) -> str:
        """What runs once the sweep is over: nothing (it stops its last server), and how to get back."""
        if self.session.server is not None and not self.session.launched_alive:
            return "a server not started by this console runs on the host"
        if self.before is None or self.readonly:
            return "no server runs now: the sweep stopped its last one"
        return f"no server runs now · {self._relaunch_key()} relaunches {self.before.name} as it ran before"

    def _relaunch_key(self) -> str:
        """The key the operator has for it (the keymap may have moved it)."""
        keys = [
            key for key, active in self.app.active_bindings.items() if active.binding.action == "relaunch"
        ]
        return keys[0] if keys else "ctrl+l"

    def action_relaunch(self) -> None:
        if self.before is not None and self.ended and not self.running:
            self.relaunch_asked = self.before
            self.dismiss(self.applied)

    @work(thread=True, group="tune-export")
    def _export(self, sweep: Sweep) -> None:
        try:
            md, _csv = report.export(sweep, self.journal.path.parent)
        except OSError as exc:
            self.app.call_from_thread(self.notify, f"not exported: {exc}", severity="error", timeout=8)
            return
        self.app.call_from_thread(self.notify, f"results written to {md} (and .csv)", timeout=6)

    def show(self, sweep: Sweep) -> None:
        """Show a sweep's results without running it (an earlier sweep, a screenshot)."""
        self.sweep = sweep
        self._fill_columns()
        self._paint()
        self._progress(ended_text(sweep))

    def _progress(self, text: str) -> None:
        self.last_message = text
        self.query_one("#tune-progress", Static).update(Text(visible(text)))

    # -- painting --------------------------------------------------------------------------------------

    def _fill_columns(self) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        if self.sweep is not None:
            table.add_columns(*columns(self.sweep.batches))

    def _paint(self) -> None:
        sweep = self.sweep
        if sweep is None:
            return
        tones = Tones.of(self.app)
        table = self.query_one(DataTable)
        table.clear()
        common = report.common_notices(sweep)
        results = [r for r in [sweep.baseline] if r is not None]
        results += ranked(sweep.combos, sweep.batches[0])
        for result in results:
            table.add_row(*row_of(result, sweep.batches, common, tones))
        chart = Text("\n".join(report.chart_lines(sweep)))
        for notice in common:
            chart.append(f"\nfor every combination: {visible(notice)}", DIM)
        self.query_one("#tune-chart", Static).update(chart)

    # -- apply and close -------------------------------------------------------------------------------

    def action_apply_best(self) -> None:
        best = self.sweep.best if self.sweep is not None else None
        if best is None or self.config_path is None:
            return
        new, diff = apply.applied(self.profile, best.combo)
        dialog = ConfirmScreen(
            f"Save {best.combo.label} ({best.speedup:.2f}× at batch {best.batch}) "
            f"into profile {self.profile.name}?",
            [("what changes", lambda tones, _width: diff_text(diff, tones))],
            yes="Save",
            no="Keep the profile",
            dialog_id="confirm-tune-apply",
        )
        self.app.push_screen(dialog, lambda yes: self._answered(bool(yes), new))

    def _answered(self, yes: bool, profile: Profile) -> None:
        if yes:
            self._save(profile)

    @work(thread=True, group="tune-save")
    def _save(self, profile: Profile) -> None:
        assert self.config_path is not None
        try:
            apply.save(self.config_path, self.session.host.name, profile)
        except (ConfigError, OSError) as exc:
            self.app.call_from_thread(self.notify, f"not saved: {exc}", severity="error", timeout=8)
            return
        self.app.call_from_thread(self._saved, profile)

    def _saved(self, profile: Profile) -> None:
        self.profile = self.applied = profile
        self.notify(f"saved profile {profile.name} to {self.config_path}", timeout=4)

    def action_stop_or_close(self) -> None:
        if self.running:
            self._progress("stopping: the sweep's server is stopped, what was measured is kept")
            self.workers.cancel_group(self, "tune")
            return
        self.dismiss(self.applied)
