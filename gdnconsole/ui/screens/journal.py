"""The launch journal of one host (`j`): every attempt in a table, the selected one's argv, env and diff.
A tune sweep is one entry (its line: time, grid, best, how many combinations were measured, rejected or
crashed), with its attempts under it (from the tune store beside the journal, ``tune.store``).

Reading the journal file and writing the Markdown export are I/O: both run in thread workers. Re-run and
"load into the form" close the screen and tell the dashboard what to do. Outcomes are coloured in the
theme's tones, painted again when the theme changes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from gdnconsole import safefile
from gdnconsole.config.hosts import Profile
from gdnconsole.host.journal import Attempt, Journal
from gdnconsole.host.servingwords import served_words
from gdnconsole.logs.textsafe import shell_line, visible
from gdnconsole.sglang.launch import (
    launch_spec,
    redact,
    redact_env,
    restore_env,
    restore_secrets,
    secret_values,
    unmask,
)
from gdnconsole.sglang.profileargv import profile_from_argv
from gdnconsole.timefmt import span
from gdnconsole.tune.store import SweepEntry, TuneStore
from gdnconsole.ui import clipboard, screenlist
from gdnconsole.ui.dialogs.confirm import diff_text
from gdnconsole.ui.keybar import KeyBar
from gdnconsole.ui.models.textfit import hanging
from gdnconsole.ui.tones import Tones

DIM = Style(dim=True)
COLUMNS = ("#", "time", "profile", "outcome", "reached", "fatal / rule")
NOT_STARTED = frozenset({"rejected", "refused"})  # outcomes of attempts that started no server
LABEL_WIDTH = 6  # "argv  ", "stage "…
PAGE = 100  # attempts read at a time, from the journal's end (a screen shows about 25)
CELL_PADDING = 2  # DataTable's, one cell either side of each column
Entry = Attempt | SweepEntry  # a row of the table


@dataclass(frozen=True)
class JournalResult:
    """What the user asked for on closing: re-run an attempt, or load it into the form."""

    action: Literal["rerun", "form"]
    profile: Profile


def outcome_style(outcome: str, tones: Tones) -> Style:
    """Verified and crashed bold, ready and rejected not; a timeout is a warning, a stop nothing to see."""
    styles = {
        "verified": tones.good,
        "ready": tones.success,
        "crashed": tones.bad,
        "rejected": tones.error,
        "refused": tones.error,
        "timeout": tones.warn,
        "stopped": DIM,
        "running": tones.primary,
    }
    return styles.get(outcome, Style())


def failed(attempt: Attempt) -> bool:
    """The startup ended in an error (the stage it reached is where it failed, not where it runs)."""
    return attempt.fatal is not None and attempt.outcome == "crashed"


def reached_text(attempt: Attempt, tones: Tones) -> Text:
    """The furthest stage and the time the startup took to get there (each stage is in the detail);
    ``✖`` before a stage the startup failed in."""
    if attempt.outcome in NOT_STARTED:
        return Text("not started", DIM)  # its stage is the default one, which it never reached
    mark = ("✖ ", tones.error) if failed(attempt) else ("", DIM)
    stage = visible(attempt.stage)  # a journal read back may be damaged, or written by anyone
    if not attempt.stages:
        return Text.assemble(mark, (stage, DIM))
    return Text.assemble(mark, stage, (f" {span(sum(attempt.stages.values()))}", DIM))


def stages_text(attempt: Attempt, tones: Tones) -> Text:
    out = Text(visible(", ".join(f"{stage} {span(seconds)}" for stage, seconds in attempt.stages.items())))
    if not out.plain:
        out = Text(visible(attempt.stage), DIM)
    if failed(attempt):
        out.append(f"  ✖ failed in {visible(attempt.stage)}", tones.error)
    return out


def cause_text(attempt: Attempt, tones: Tones) -> Text:
    """The rule that rejected it, else the fatal summary with its log line, else why the server did not
    answer. None of these: only how many warnings the detail lists (a warning in this column read as
    the cause of a verified or timed-out attempt)."""
    rule, fatal = attempt.rule, attempt.fatal
    if rule:
        return Text(visible(f"rule {rule.id}: {rule.message}"), tones.error)
    if fatal:  # the log's words: shown, never obeyed
        return Text((f"L{fatal.line}: " if fatal.line else "") + visible(fatal.summary), tones.error)
    proof = attempt.verify
    if proof is not None and proof.ok is False:
        return Text(visible(f"no answer: {proof.reason or 'unknown'}"), tones.warning)
    count = len(attempt.warnings)
    return Text(f"{count} warning{'s' * (count != 1)} (below)", DIM) if count else Text("")


def attempt_row(attempt: Attempt, tones: Tones) -> tuple[Text, ...]:
    when = time.strftime("%m-%d %H:%M:%S", time.localtime(attempt.time))
    outcome = Text(visible(attempt.outcome), outcome_style(attempt.outcome, tones))
    cells = (str(attempt.number), when, visible(attempt.profile))
    return (*(Text(c) for c in cells), outcome, reached_text(attempt, tones), cause_text(attempt, tones))


def sweep_row(entry: SweepEntry, tones: Tones) -> tuple[Text, ...]:
    """A sweep's line: when, its profile, its counts, its best and its grid (cut first when narrow)."""
    when = time.strftime("%m-%d %H:%M:%S", time.localtime(entry.started))
    outcome = Text(
        "interrupted" if entry.interrupted else "tune sweep",
        tones.warn if entry.interrupted else tones.primary,
    )
    cause = Text((f"best {entry.best}" if entry.best else "no best") + f" · grid {entry.grid or '?'}")
    return (
        Text("tune"),
        Text(when),
        Text(entry.profile),
        outcome,
        Text(entry.counts_text or "nothing run"),
        cause,
    )


def arranged(attempts: list[Attempt], sweeps: list[SweepEntry]) -> list[tuple[Entry, str]]:
    """The rows in time order, each sweep followed by its attempts (marked ``├``/``└``): (entry, mark)."""
    numbers = {a.number: a for a in attempts}
    owned = {n for entry in sweeps for n in entry.attempts if n in numbers}
    groups: list[tuple[float, list[tuple[Entry, str]]]] = [
        (a.time, [(a, "")]) for a in attempts if a.number not in owned
    ]
    for entry in sweeps:
        mine = [numbers[n] for n in entry.attempts if n in numbers]
        marks = ["├ "] * (len(mine) - 1) + ["└ "] if mine else []
        groups.append((entry.started, [(entry, ""), *zip(mine, marks, strict=True)]))
    groups.sort(key=lambda group: group[0])
    return [row for _, rows in groups for row in rows]


def sweep_detail(entry: SweepEntry, width: int, tones: Tones) -> Text:
    out = Text(f"tune sweep · profile {entry.profile} · ", Style(bold=True))
    out.append(
        "interrupted" if entry.interrupted else "done", tones.warn if entry.interrupted else tones.good
    )
    took = span(entry.ended - entry.started) if entry.ended is not None else "?"
    fields = [
        ("grid", Text(entry.grid or "?")),
        ("batch", Text(", ".join(map(str, entry.batches)) or "?")),
        ("best", Text(entry.best or "none")),
        ("count", Text(f"{entry.counts_text or 'nothing run'} · took {took}")),
        *(
            (
                "",
                Text(
                    f"{label}  {status}" + (f"  attempt {n}" if n is not None else ""),
                    outcome_style(status, tones),
                ),
            )
            for label, status, n in entry.results
        ),
    ]
    for label, value in fields:
        line = Text(label.ljust(LABEL_WIDTH), DIM) + value
        out.append("\n")
        out.append_text(Text("\n").join(hanging(line, width, LABEL_WIDTH)))
    return out


def fitted_rows(rows: list[tuple[Text, ...]], width: int) -> list[tuple[Text, ...]]:
    """The rows with the last column (the cause, the one that can be long) cut with an ellipsis to what
    the other columns leave of ``width``: the table never needs a sideways scroll to show its columns."""
    fixed = sum(
        max([len(label), *(row[i].cell_len for row in rows)]) + CELL_PADDING
        for i, label in enumerate(COLUMNS[:-1])
    )
    room = max(len(COLUMNS[-1]), width - fixed - CELL_PADDING)
    fitted = []
    for row in rows:
        cause = row[-1].copy()
        cause.truncate(room, overflow="ellipsis")
        fitted.append((*row[:-1], cause))
    return fitted


def detail_text(attempt: Attempt, width: int, tones: Tones, secrets: tuple[str, ...] | None = None) -> Text:
    """The attempt's exact command, environment, stages and changes against the attempt before it, each
    value wrapped to ``width`` under its own start (the labels stay a column apart). API keys and tokens
    are masked (a journal written before masking may hold them), unless ``secrets``: the real values,
    revealed on purpose, that the masks stand for."""
    out = Text(f"attempt {attempt.number} · profile {visible(attempt.profile)} · ", Style(bold=True))
    out.append(attempt.outcome, outcome_style(attempt.outcome, tones))
    if secrets is None:
        argv, env_values = redact(attempt.argv), redact_env(attempt.env)
    else:
        argv = restore_secrets(attempt.argv, secrets)
        env_values = {name: unmask(value, secrets) for name, value in attempt.env.items()}
    env = " ".join(f"{k}={shell_line([v])}" for k, v in env_values.items())
    fields = [
        ("argv", Text(shell_line(argv))),  # an escape in an argument is written $'\x1b…', never sent
        ("env", Text(env) if env else Text("(none)", DIM)),
        ("stage", stages_text(attempt, tones)),
        (
            "diff",
            diff_text(attempt.diff, tones) if attempt.diff else Text("(first attempt, or no change)", DIM),
        ),
        *(("warn", Text(visible(warning), tones.warning)) for warning in attempt.warnings),
    ]
    if attempt.served is not None:  # what the server did while the console polled it (issue 28)
        fields.insert(3, ("load", Text(served_words(attempt.served))))
    for label, value in fields:
        # Each line of a value (a diff has several) starts in the value's column.
        lines = value.split("\n")
        first = Text(label.ljust(LABEL_WIDTH), DIM) + lines[0]
        rest = [Text(" " * LABEL_WIDTH) + line for line in lines[1:]]
        for line in [first, *rest]:
            out.append("\n")
            out.append_text(Text("\n").join(hanging(line, width, LABEL_WIDTH)))
    return out


class JournalScreen(Screen[JournalResult | None]):
    DEFAULT_CSS = """
    JournalScreen #journal-title { height: 1; background: $panel; padding: 0 1; }
    JournalScreen DataTable { height: 1fr; }
    JournalScreen #journal-detail { height: auto; max-height: 45%; border-top: solid $panel; padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("journal").own

    def __init__(self, journal: Journal, base: Profile | None, *, readonly: bool = False) -> None:
        """``base``: the host's profile that fills what an attempt's argv does not say (bind host…)."""
        super().__init__()
        self.journal = journal
        self.base = base
        self.readonly = readonly
        self.attempts: list[Attempt] = []  # those read so far, oldest first (a page at a time, from the end)
        self.sweeps: list[SweepEntry] = []
        self.cursor = journal.cursor()
        self._warned = 0  # the journal's warnings already shown
        self._paging = False  # a page before the oldest is being read (one at a time: one cursor)
        self.entries: list[Entry] = []  # the rows: attempts, and sweeps with theirs under them
        self.marks: list[str] = []  # per row: "├ "/"└ " under a sweep, else ""
        self.exported: Path | None = None  # the last Markdown export
        self._filled_width = 0  # the table width the rows were fitted to
        self.revealed = False  # the detail shows API keys and tokens masked until the operator asks

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Launch journal · {self.journal.host} · {self.journal.path}"), id="journal-title")
        yield DataTable(cursor_type="row", zebra_stripes=True, id="journal-table")
        with VerticalScroll(id="journal-detail"):
            yield Static(Text("no attempts yet", DIM), id="journal-argv")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        self.load()

    def _theme_changed(self, _theme: object) -> None:
        if self.entries:
            self._fill(self.query_one(DataTable).cursor_row)  # the rows and the detail, in the new colours

    @work(thread=True, exclusive=True, group="journal-read")
    def load(self) -> None:
        """The newest page at once (a journal of 100k attempts is read from its end, never whole)."""
        attempts = self.cursor.page(PAGE)[::-1]
        store = TuneStore(self.journal.host, self.journal.path.parent, warn=self.journal.warn)
        sweeps = store.entries()
        self.journal.warnings.extend(store.warnings)
        self.app.call_from_thread(self._show, attempts, sweeps)

    @work(thread=True, group="journal-page")
    def load_older(self) -> None:
        """The page before the oldest shown, when the cursor reaches the top row."""
        older = self.cursor.page(PAGE)[::-1]
        self.app.call_from_thread(self._prepend, older)

    def _show(self, attempts: list[Attempt], sweeps: list[SweepEntry] | None = None) -> None:
        self.attempts, self.sweeps = attempts, sweeps or []
        self._arrange()
        self._fill(len(self.entries) - 1)  # the latest entry is the one to look at
        self.query_one(DataTable).focus()
        self._say_damage()

    def _prepend(self, older: list[Attempt]) -> None:
        self._paging = False
        table = self.query_one(DataTable)
        selected = self.entries[table.cursor_row] if 0 <= table.cursor_row < len(self.entries) else None
        self.attempts = older + self.attempts
        self._arrange()
        row = next((i for i, e in enumerate(self.entries) if e is selected), 0)
        self._fill(row)  # the cursor stays on its entry, the older rows above it
        self._say_damage()

    def _arrange(self) -> None:
        """The rows of what is read: a sweep older than the oldest attempt read waits for its page."""
        oldest = self.attempts[0].time if self.attempts and not self.cursor.done else None
        sweeps = [s for s in self.sweeps if oldest is None or s.started >= oldest]
        rows = arranged(self.attempts, sweeps)
        self.entries, self.marks = [e for e, _ in rows], [m for _, m in rows]

    def _say_damage(self) -> None:
        """A damaged line of the journal or the tune store: said once, as the file said it."""
        for warning in self.journal.warnings[self._warned :]:
            self.notify(warning, severity="warning", timeout=10, markup=False)
        self._warned = len(self.journal.warnings)

    def _fill(self, row: int) -> None:
        """The rows, fitted to the table's width, with the cursor on ``row``."""
        table = self.query_one(DataTable)
        table.clear()
        self._filled_width = table.scrollable_content_region.width or self.app.size.width
        tones = Tones.of(self.app)
        rows = fitted_rows([self._row(i, tones) for i in range(len(self.entries))], self._filled_width)
        for index, (entry, cells) in enumerate(zip(self.entries, rows, strict=True)):
            key = entry.key if isinstance(entry, Attempt) else f"sweep {entry.started}"
            table.add_row(*cells, key=f"{index} {key}")  # unique even where two lines share a number
        if 0 <= row < len(self.entries):
            table.move_cursor(row=row)
            self._detail(row)

    def _row(self, index: int, tones: Tones) -> tuple[Text, ...]:
        entry = self.entries[index]
        if isinstance(entry, SweepEntry):
            return sweep_row(entry, tones)
        cells = attempt_row(entry, tones)
        mark = self.marks[index]
        return (Text.assemble((mark, DIM), cells[0]), *cells[1:]) if mark else cells

    def on_resize(self) -> None:
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        table = self.query_one(DataTable)
        if self.entries and table.scrollable_content_region.width != self._filled_width:
            self._fill(table.cursor_row)
        else:
            self._detail(table.cursor_row)  # re-wrapped to the new width

    @property
    def selected(self) -> Attempt | None:
        """The attempt on the cursor's row (None on a sweep's line)."""
        row = self.query_one(DataTable).cursor_row
        entry = self.entries[row] if 0 <= row < len(self.entries) else None
        return entry if isinstance(entry, Attempt) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.cursor_row)
        at_top = self.query_one(DataTable).cursor_row == 0  # now, not when a refill passed row 0
        if event.cursor_row == 0 and at_top and self.entries and not (self.cursor.done or self._paging):
            self._paging = True
            self.load_older()  # the top row: the page before it

    def _detail(self, row: int) -> None:
        if 0 <= row < len(self.entries):
            detail = self.query_one("#journal-argv", Static)
            width = detail.content_region.width or self.app.size.width - 2
            entry, tones = self.entries[row], Tones.of(self.app)
            if isinstance(entry, SweepEntry):
                detail.update(sweep_detail(entry, width, tones))
            else:
                detail.update(detail_text(entry, width, tones, self._secrets()))

    def _secrets(self) -> tuple[str, ...] | None:
        """The real values the masks may stand for, when revealed: the profile's own keys and tokens."""
        if not self.revealed:
            return None
        base = self.base or Profile(name="", model="")
        return secret_values(launch_spec(base).argv, base.env)

    def action_reveal(self) -> None:
        self.revealed = not self.revealed
        self._detail(self.query_one(DataTable).cursor_row)
        self.notify(
            "secrets shown, until the journal is left" if self.revealed else "secrets masked", timeout=3
        )

    def on_screen_suspend(self) -> None:
        """Leaving the journal (a dialog, the palette over it) masks them again."""
        if self.revealed:
            self.revealed = False
            self._detail(self.query_one(DataTable).cursor_row)

    def _profile_of(self, attempt: Attempt) -> Profile:
        base = self.base or Profile(name=attempt.profile, model="")
        argv = restore_secrets(attempt.argv, launch_spec(base).argv)  # the journal keeps keys masked
        env = restore_env(attempt.env, base.env)  # and tokens
        return profile_from_argv(attempt.profile, argv, env, base)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action == "rerun" and self.readonly)

    def action_rerun(self) -> None:
        attempt = self.selected
        if attempt is not None:
            self.dismiss(JournalResult("rerun", self._profile_of(attempt)))

    def action_load_form(self) -> None:
        attempt = self.selected
        if attempt is not None:
            self.dismiss(JournalResult("form", self._profile_of(attempt)))

    def action_export(self) -> None:
        self._export(self.journal.path.with_suffix(".md"))

    @work(thread=True, exclusive=True, group="journal-export")
    def _export(self, path: Path) -> None:
        text = self.journal.to_markdown()
        try:
            safefile.write_text(path, text)  # command lines: 0600 from the first byte, no planted link
        except OSError as exc:
            self.app.call_from_thread(self.notify, f"not exported: {exc}", severity="error", timeout=8)
            return
        self.app.call_from_thread(self._exported, path, text)

    def _exported(self, path: Path, text: str) -> None:
        self.exported = path
        sent = clipboard.send(self.app, text, "and")
        self.notify(f"journal written to {path}, {sent}", timeout=6)

    def action_close(self) -> None:
        self.dismiss(None)
