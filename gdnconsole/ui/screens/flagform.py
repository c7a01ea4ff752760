"""The flag form (`e` on the dashboard): the active launch profile of one host, edited as a copy.

Every change re-derives the profile from the typed text (``formmodel``), shows the exact command line at
once, and, after a short pause in typing, runs our SGLang rules for the host's version on it: an error is
shown on the field it concerns. Nothing typed is ever reset; the hosts file is only touched by Save.
Saving and the host's own check are I/O and run in workers; the rules are pure and fast. The text is
painted in the theme's colours, and again when the theme changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from gdnconsole.config.hosts import ConfigError, Profile
from gdnconsole.config.writer import save_profile
from gdnconsole.errors import EXPLAINED
from gdnconsole.host import journal, modelconfig
from gdnconsole.host.consolelog import record_bug
from gdnconsole.host.jsonlines import write_private
from gdnconsole.host.modelconfig import ModelConfig
from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible
from gdnconsole.sglang import rules
from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.launch import launch_spec, mask_known, redact, secret_values, server_args
from gdnconsole.sglang.profilerules import check_profile, model_of
from gdnconsole.ui import clipboard, screenlist
from gdnconsole.ui.afterkeys import after_typing
from gdnconsole.ui.dialogs.askname import AskNameScreen
from gdnconsole.ui.dialogs.confirm import ConfirmScreen
from gdnconsole.ui.models import flagcheck
from gdnconsole.ui.models.formmodel import (
    ALGORITHMS,
    FIELD_NAMES,
    MAMBA_CHOICES,
    FormValues,
    Parsed,
    args_text,
    command_text,
    env_text,
    mamba_flag,
    parse,
    parse_args,
    parse_env,
    unmask_args,
    unmask_env,
    values_of,
)
from gdnconsole.ui.tones import Tones
from gdnconsole.ui.widgets.keybar import KeyBar

if TYPE_CHECKING:
    from gdnconsole.host.hostcheck import HostVerdict

DEBOUNCE_S = 0.2  # rules run once typing pauses this long
HOST_CHECK_TIMEOUT_S = 60.0
SHORT = 30  # rows below which the buttons give their place to the form (the footer has the same keys)
DIM = Style(dim=True)


def first_of_many(result: rules.CheckResult, tones: Tones) -> list[Text]:
    """With several errors, which one SGLang itself stops at: the others are what it says next."""
    if len(result.errors) < 2:
        return []
    first = result.errors[0]
    out = Text("✖ SGLang stops first at ", tones.bad)
    out.append(f"{first.flag or first.id} [{first.id}]", tones.bad)
    others = len(result.errors) - 1
    out.append(f"; the other {others} error{'s' if others > 1 else ''} it would raise once that is fixed.")
    return [out]


# (field, label, placeholder): the placeholder says which flag it is and what SGLang does when empty.
INPUTS: tuple[tuple[str, str, str], ...] = (
    ("model", "model", "--model-path: a path on the host or a Hugging Face id"),
    ("tp", "tp", "--tp-size"),
    ("port", "port", "--port"),
    ("mem_fraction", "mem fraction", "--mem-fraction-static (empty: SGLang picks)"),
)
SPEC_INPUTS: tuple[tuple[str, str, str], ...] = (
    ("num_steps", "num steps", "--speculative-num-steps (empty: auto)"),
    ("eagle_topk", "eagle topk", "--speculative-eagle-topk (empty: auto)"),
    ("num_draft_tokens", "num draft tokens", "--speculative-num-draft-tokens (empty: auto)"),
    ("draft_model", "draft model", "--speculative-draft-model-path (NEXTN uses the model's own heads)"),
)


@dataclass(frozen=True)
class FormResult:
    """How the form closed: the profile the dashboard should now use, and whether to launch it."""

    profile: Profile | None
    launch: bool = False


class FlagFormScreen(Screen[FormResult]):
    DEFAULT_CSS = """
    FlagFormScreen { layout: vertical; }
    FlagFormScreen #ff-head { height: 1; background: $panel; padding: 0 1; }
    FlagFormScreen #ff-head Static { width: auto; }
    FlagFormScreen #ff-profile { width: 32; margin: 0 1; }
    FlagFormScreen #ff-fields { height: 1fr; padding: 0 1; }
    FlagFormScreen .ff-row { height: auto; margin-bottom: 0; }
    FlagFormScreen .ff-label { width: 20; padding: 0 1 0 0; text-align: right; color: $text-muted; }
    FlagFormScreen .ff-row.-invalid .ff-label { color: $error; text-style: bold; }
    FlagFormScreen .ff-cell { height: auto; width: 1fr; }
    FlagFormScreen .ff-heading { margin-top: 1; text-style: bold; color: $primary; }
    FlagFormScreen .ff-error { display: none; height: auto; }
    FlagFormScreen .ff-error.-shown { display: block; }
    FlagFormScreen .ff-row.-invalid Input { background: $error 20%; }
    FlagFormScreen .ff-row.-invalid TextArea { background: $error 20%; }
    FlagFormScreen TextArea { height: 3; }
    FlagFormScreen #ff-args { height: 4; }
    FlagFormScreen #ff-args-parsed { height: auto; color: $text-muted; }
    FlagFormScreen #ff-bottom { height: auto; max-height: 45%; border-top: solid $panel; padding: 0 1; }
    FlagFormScreen #ff-command { height: auto; max-height: 5; background: $surface; }
    FlagFormScreen #ff-findings, FlagFormScreen #ff-verdicts { height: auto; }
    FlagFormScreen #ff-buttons { height: 1; margin-top: 1; padding: 0 1; }
    FlagFormScreen.-short #ff-buttons { display: none; }
    FlagFormScreen #ff-buttons Button { margin-right: 1; min-width: 8; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("flag form").own

    def __init__(
        self,
        session: HostSession,
        profile: Profile,
        *,
        config_path: Path | None,
        focus_field: str | None = None,
        readonly: bool = False,
    ) -> None:
        """``profile``: what to show (a saved profile, or unsaved edits such as a journal's attempt)."""
        super().__init__()
        self.session = session
        self.config_path = config_path
        self.focus_field = focus_field
        self.readonly = readonly
        self.facts = session.facts
        self.mamba = mamba_flag(self.facts.sglang)
        self.base = profile
        self.revealed = False  # API keys and tokens are masked in every field until the operator asks
        self.known: tuple[str, ...] = ()  # secrets typed while revealed, that a mask may stand for
        self.values = values_of(profile)
        self.parsed: Parsed = parse(self.values, profile, self.mamba)
        self.result: rules.CheckResult | None = None
        self.checked: tuple[str, ...] | None = None  # the argv ``result`` is about
        self.verdict: HostVerdict | None = None
        # The config.json of each model the form was checked for, as the host holds it (issue 26);
        # None while being read. Its context length and quantization reach the rules once read.
        self.model_configs: dict[str, ModelConfig | None] = {}
        self.verdict_argv: tuple[str, ...] | None = None
        self.host_running = False
        self._timer: Timer | None = None

    # -- layout ----------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="ff-head"):
            yield Static(Text(self.session.host.name, Style(bold=True)))
            yield Select(self._profile_options(), value=self.base.name, allow_blank=False, compact=True,
                         id="ff-profile")  # fmt: skip
            yield Static(id="ff-state")
        with VerticalScroll(id="ff-fields"):
            for name, label, hint in INPUTS:
                yield from self._row(name, label, Input(placeholder=hint, compact=True, id=f"ff-{name}"))
            yield Static("speculative decoding", classes="ff-heading")
            algorithm = Select[str]([], prompt="none", compact=True, id="ff-algorithm")
            yield from self._row("algorithm", "algorithm", algorithm)
            for name, label, hint in SPEC_INPUTS:
                yield from self._row(name, label, Input(placeholder=hint, compact=True, id=f"ff-{name}"))
            yield Static("memory and the rest", classes="ff-heading")
            mamba = Select[str]([(c, c) for c in MAMBA_CHOICES], prompt="not given", compact=True,
                                id="ff-mamba")  # fmt: skip
            yield from self._row("mamba", "mamba strategy", mamba)
            yield from self._row("env", "env (NAME=VALUE)", TextArea(compact=True, id="ff-env"))
            yield from self._row("args", "extra args", TextArea(compact=True, id="ff-args"))
        # The verdicts first: on a small terminal the rest scrolls, and the footer stands in for the buttons.
        with VerticalScroll(id="ff-bottom"):
            yield Static(id="ff-verdicts")
            yield Static(id="ff-command")
            yield Static(id="ff-findings")
        with Horizontal(id="ff-buttons"):
            yield Button("Save ^s", id="ff-save", compact=True, variant="primary")
            yield Button("Save as new ^n", id="ff-save-as", compact=True)
            yield Button("Copy command ^o", id="ff-copy", compact=True)
            yield Button("Check on host ^t", id="ff-check-host", compact=True)
            if not self.readonly:
                yield Button("Launch ^l", id="ff-launch", compact=True, variant="warning")
            yield Button("Close esc", id="ff-close", compact=True)
        yield KeyBar()

    def _row(self, name: str, label: str, widget: Widget) -> ComposeResult:
        with Horizontal(classes="ff-row", id=f"ff-row-{name}"):
            yield Label(label, classes="ff-label", id=f"ff-label-{name}")
            with Vertical(classes="ff-cell"):
                yield widget
                yield Static(classes="ff-error", id=f"ff-err-{name}")
                if name == "args":
                    yield Static(id="ff-args-parsed")
                if name == "mamba":  # the flag's name depends on the host's SGLang version
                    hint = f"{self.mamba} on SGLang {self.facts.sglang or '(version unknown)'}"
                    yield Static(Text(hint, DIM), id="ff-mamba-flag")

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < SHORT, "-short")

    def on_mount(self) -> None:
        self._fill(self.base)
        self._changed()
        self._run_rules()  # the first verdict without waiting
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        target = f"#ff-{self.focus_field}" if self.focus_field in FIELD_NAMES else "#ff-model"
        self.query_one(target).focus()

    def _profile_options(self) -> list[tuple[str, str]]:
        names = list(self.session.host.profiles)
        if self.base.name not in names:
            names.append(self.base.name)
        return [(n, n) for n in names]

    # -- widgets ⇄ values ------------------------------------------------------------------------------

    def _fill(self, profile: Profile) -> None:
        """Put a profile's values into the widgets (their Changed messages then re-read the same text)."""
        values = values_of(profile, secrets=self.revealed)
        for name, _label, _hint in (*INPUTS, *SPEC_INPUTS):
            self.query_one(f"#ff-{name}", Input).value = getattr(values, name)
        algorithms = [*ALGORITHMS, *([values.algorithm] if values.algorithm not in ALGORITHMS else [])]
        algorithm = self.query_one("#ff-algorithm", Select)
        algorithm.set_options([(a, a) for a in algorithms if a])
        self._select(algorithm, values.algorithm)
        mamba = self.query_one("#ff-mamba", Select)
        if values.mamba and values.mamba not in MAMBA_CHOICES:
            mamba.set_options([(c, c) for c in (*MAMBA_CHOICES, values.mamba)])
        self._select(mamba, values.mamba)
        self.query_one("#ff-env", TextArea).load_text(values.env)
        self.query_one("#ff-args", TextArea).load_text(values.args)
        self.values = values

    @staticmethod
    def _select(select: Select[str], value: str) -> None:
        if value:
            select.value = value
        else:
            select.clear()

    def _read(self) -> FormValues:
        values = FormValues()
        for name, _label, _hint in (*INPUTS, *SPEC_INPUTS):
            values = values.with_field(name, self.query_one(f"#ff-{name}", Input).value)
        for name in ("algorithm", "mamba"):
            chosen = self.query_one(f"#ff-{name}", Select).value
            values = values.with_field(name, chosen if isinstance(chosen, str) else "")
        for name in ("env", "args"):
            values = values.with_field(name, self.query_one(f"#ff-{name}", TextArea).text)
        return values

    def on_input_changed(self, event: Input.Changed) -> None:
        self._widget_changed(event.input)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._widget_changed(event.text_area)

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "ff-profile":
            self._profile_chosen(event.value)
        else:
            self._widget_changed(event.select)

    def _widget_changed(self, widget: Widget) -> None:
        if (widget.id or "").startswith("ff-") and self.is_mounted:
            self._sync()

    # -- deriving and painting -------------------------------------------------------------------------

    @property
    def saved(self) -> Profile | None:
        """The profile of this name as the hosts file has it (None: never saved)."""
        return self.session.host.profiles.get(self.base.name)

    @property
    def dirty(self) -> bool:
        saved = self.saved
        return saved is None or self.values != values_of(saved, secrets=self.revealed)

    def _changed(self) -> None:
        self.parsed = parse(self.values, self.base, self.mamba, self.known)
        self._paint()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE_S, self._run_rules)

    def _run_rules(self) -> None:
        profile = self.parsed.profile
        if profile is None:
            self.result, self.checked = None, None
        else:
            self.result = self._check(profile)
            self.checked = tuple(server_args(profile))
        self._paint()

    def _check(self, profile: Profile) -> rules.CheckResult | None:
        """Our rules for the host's SGLang and GPUs (their memory sets SGLang's chunked prefill size);
        None while the host's SGLang version is unknown."""
        if not self.facts.sglang:  # no rules to run: the model's config is not read for nothing
            return None
        model = model_of(server_args(profile))  # the one SGLang loads: the last --model-path wins
        if model not in self.model_configs:
            self.model_configs[model] = None
            self._read_model_config(model)
        read = self.model_configs[model]
        return check_profile(profile, self.facts, read.config if read is not None else None)

    @work(group="model-config", exit_on_error=False)
    async def _read_model_config(self, model: str) -> None:
        """The model's config.json on the host; the rules run again with it once read."""
        read = await modelconfig.fetch(self.session.host, model, ssh=self.session.ssh_target)
        self.model_configs[model] = read
        if read.warning:
            self.notify(visible(read.warning), severity="warning", timeout=8, markup=False)
        profile = self.parsed.profile
        if read.config is not None and profile is not None and model_of(server_args(profile)) == model:
            self._run_rules()

    def _current_argv(self) -> tuple[str, ...] | None:
        profile = self.parsed.profile
        return tuple(server_args(profile)) if profile is not None else None

    def _paint(self) -> None:
        tones = Tones.of(self.app)
        self._paint_state(tones)
        self._paint_fields(tones)
        self._paint_command(tones)
        self._paint_findings(tones)
        self._paint_verdicts(tones)

    def _theme_changed(self, _theme: object) -> None:
        self._paint()

    def _paint_state(self, tones: Tones) -> None:
        out = Text(f"{visible(self.facts.describe())} · ", DIM)  # what the host said of itself
        out.append("● unsaved changes" if self.dirty else "saved", tones.bad if self.dirty else DIM)
        if self.revealed:
            out.append(" · secrets shown", tones.warning)
        self.query_one("#ff-state", Static).update(out)

    def _rule_errors(self) -> dict[str, list[Finding]]:
        if self.result is None or self.checked != self._current_argv():
            return {}
        return flagcheck.findings_by_field(self.result.errors)

    def _paint_fields(self, tones: Tones) -> None:
        by_field = self._rule_errors()
        for name in FIELD_NAMES:
            problem = self.parsed.errors.get(name)
            if problem:
                text = Text(f"✖ {problem}", tones.bad)
            else:
                text = Text("\n").join(flagcheck.finding_text(f, tones) for f in by_field.get(name, []))
            self.query_one(f"#ff-err-{name}", Static).update(text)
            self.query_one(f"#ff-err-{name}").set_class(bool(text), "-shown")
            self.query_one(f"#ff-row-{name}").set_class(bool(text), "-invalid")
        parsed = Text(f"→ {len(self.parsed.args)} argument{'s' if len(self.parsed.args) != 1 else ''}: ")
        for arg in self.parsed.args if self.revealed else redact(self.parsed.args):  # keys masked
            parsed.append("‹")
            parsed.append(visible(arg), tones.primary)
            parsed.append("› ")
        self.query_one("#ff-args-parsed", Static).update(parsed)

    def _paint_command(self, tones: Tones) -> None:
        profile = self.parsed.profile
        if profile is None:
            text = Text("fix the marked fields to see the command line", tones.bad)
        else:
            text = Text("$ ", DIM)
            spec = launch_spec(profile, self.session.host.python)
            text.append(command_text(spec, secrets=self.revealed))
        self.query_one("#ff-command", Static).update(text)

    def _paint_findings(self, tones: Tones) -> None:
        lines: list[Text] = []
        if self.result is not None and self.checked == self._current_argv():
            lines += [Text(f"⚠ {warning}", tones.warning) for warning in self.result.warnings]
            lines += first_of_many(self.result, tones)
            lines += [flagcheck.finding_text(f, tones) for f in self._rule_errors().get("", [])]
            lines += [flagcheck.finding_text(f, tones) for f in self.result.notices]
        self.query_one("#ff-findings", Static).update(Text("\n").join(lines))

    def _paint_verdicts(self, tones: Tones) -> None:
        current = self._current_argv()
        result = self.result if self.checked == current else None
        ours = flagcheck.our_verdict(result, self.facts, tones, invalid=current is None)
        stale = self.verdict is not None and self.verdict_argv != current
        theirs = flagcheck.host_verdict_text(self._shown_verdict(), self.host_running, stale, tones)
        lines = [ours, theirs]
        disagree = flagcheck.disagreement(self.result, self.verdict, tones) if not stale else None
        if disagree is not None:
            lines.append(disagree)
        self.query_one("#ff-verdicts", Static).update(Text("\n").join(lines))

    def _shown_verdict(self) -> HostVerdict | None:
        """The host's verdict with the form's secrets masked: SGLang's argparse echoes what it refuses."""
        verdict = self.verdict
        if verdict is None or self.revealed:
            return verdict
        profile = self.parsed.profile or self.base
        real = (*secret_values(profile.args, profile.env), *secret_values(self.base.args, self.base.env))
        return replace(verdict, message=mask_known(verdict.message, real),
                       traceback_tail=mask_known(verdict.traceback_tail, real))  # fmt: skip

    # -- profiles --------------------------------------------------------------------------------------

    def _profile_chosen(self, value: object) -> None:
        if not isinstance(value, str) or value == self.base.name:
            return
        if not self.dirty:
            self._load(value)
            return
        question = ConfirmScreen(
            f"Discard the unsaved changes to {self.base.name} and open {value}?", yes="Discard", no="Keep"
        )
        self.app.push_screen(question, lambda yes: self._load(value) if yes else self._reselect())

    def _reselect(self) -> None:
        self.query_one("#ff-profile", Select).value = self.base.name

    def _load(self, name: str) -> None:
        profile = self.session.host.profiles.get(name)
        if profile is None:
            return
        self.base = profile
        self.verdict, self.verdict_argv = None, None
        self._fill(profile)
        self._changed()

    # -- actions ---------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action == "launch" and self.readonly)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        actions = {
            "ff-save": "save",
            "ff-save-as": "save_as",
            "ff-copy": "copy",
            "ff-check-host": "check_host",
            "ff-launch": "launch",
            "ff-close": "close",
        }
        action = actions.get(event.button.id or "")
        if action:
            await self.run_action(action)

    def _after_typing(self, act: Callable[[], object]) -> None:
        """Run ``act`` on the fields as typed, the keys sent just before it included (afterkeys)."""
        after_typing(self, lambda: self._synced(act))

    def _synced(self, act: Callable[[], object]) -> None:
        self._sync()
        act()

    def _sync(self) -> None:
        """Take the fields as they are now, whether or not their Changed messages have been handled."""
        values = self._read()
        if values != self.values:
            self.values = values
            self._changed()

    def _valid_profile(self) -> Profile | None:
        if self.parsed.profile is None:
            fields = ", ".join(self.parsed.errors)
            self.notify(f"fix the marked fields first ({fields})", severity="error", timeout=5)
        return self.parsed.profile

    def action_copy(self) -> None:
        self._after_typing(self._copy_now)

    def _copy_now(self) -> None:
        """The command line, to run it elsewhere: sent to the terminal's clipboard, which may drop it (tmux,
        SSH), and written to a file beside the journal that nothing drops (0600: it has the real keys)."""
        profile = self._valid_profile()
        if profile is not None:
            text = command_text(launch_spec(profile, self.session.host.python), secrets=True)
            self._write_command(text, clipboard.send(self.app, text, "command line"))

    @work(thread=True, group="form-copy")
    def _write_command(self, text: str, sent: str) -> None:
        path = journal.default_dir() / f"{self.session.host.name}-command.sh"
        try:
            write_private(path, text + "\n")
        except OSError as exc:
            said = f"{sent}; not written to {path}: {exc.strerror}"
        else:
            said = f"{sent}; also in {path}"
        self.app.call_from_thread(self.notify, said, timeout=6)

    def action_save(self) -> None:
        self._after_typing(self._save_now)

    def _save_now(self) -> None:
        profile = self._valid_profile()
        if profile is not None:
            self._save(profile)

    def action_save_as(self) -> None:
        self._after_typing(self._save_as_now)

    def _save_as_now(self) -> None:
        if self._valid_profile() is None:
            return
        taken = set(self.session.host.profiles)
        self.app.push_screen(AskNameScreen(f"{self.base.name}-2", taken), self._save_as_named)

    def _save_as_named(self, name: str | None) -> None:
        profile = self.parsed.profile
        if name and profile is not None:
            self._save(replace(profile, name=name))

    def _save(self, profile: Profile) -> None:
        if self.config_path is None:
            self.notify("no hosts file to save to (the console was opened without one)", severity="error")
            return
        self._write(self.config_path, profile)

    @work(thread=True, exclusive=True, group="save")
    def _write(self, path: Path, profile: Profile) -> None:
        """File I/O off the UI thread; the result comes back as a call on it."""
        try:
            saved = save_profile(path, self.session.host.name, profile)
        except (ConfigError, OSError) as exc:
            self.app.call_from_thread(self.notify, f"not saved: {exc}", severity="error", timeout=8)
            return
        host = saved.host(self.session.host.name)
        profiles = dict(host.profiles) if host is not None else {profile.name: profile}
        self.app.call_from_thread(self._saved, profile, profiles, path)

    def _saved(self, profile: Profile, profiles: dict[str, Profile], path: Path) -> None:
        self.session.host = replace(self.session.host, profiles=profiles)
        self.base = profiles.get(profile.name, profile)
        select = self.query_one("#ff-profile", Select)
        select.set_options(self._profile_options())
        select.value = self.base.name
        self._paint()
        self.notify(f"saved profile {profile.name} to {path}", timeout=4)

    def action_check_host(self) -> None:
        self._after_typing(self._check_host_now)

    def _check_host_now(self) -> None:
        argv = self._current_argv()
        if argv is None:
            self._valid_profile()
            return
        self._check_on_host(argv)

    @work(exclusive=True, group="host-check", exit_on_error=False)
    async def _check_on_host(self, argv: tuple[str, ...]) -> None:
        # Imported here: the host check loads only when asked for, and the form works without it.
        from gdnconsole.host.hostcheck import check_on_host

        self.host_running = True
        self._paint_verdicts(Tones.of(self.app))
        ssh = self.session.ssh_target
        try:
            verdict = await check_on_host(
                self.session.host, list(argv), timeout=HOST_CHECK_TIMEOUT_S, ssh=ssh
            )
        except EXPLAINED as exc:  # the link or the host failed: keep the form
            self.notify(f"could not run the check on the host: {exc}", severity="error", timeout=8)
            return
        except Exception as exc:  # a bug of ours: said as one, the form kept, the traceback logged
            self.notify(
                record_bug("check on host", exc), title="gdnconsole bug", severity="error", timeout=30
            )
            return
        finally:
            self.host_running = False
        self.verdict, self.verdict_argv = verdict, argv
        self._paint_verdicts(Tones.of(self.app))

    def action_reveal(self) -> None:
        self._after_typing(self._reveal_now)

    def _reveal_now(self) -> None:
        """Show the real keys and tokens in the env and extra args, or mask them again."""
        if self._show_secrets(not self.revealed):
            said = "secrets shown, until the form is left" if self.revealed else "secrets masked"
            self.notify(said, timeout=3)

    def _show_secrets(self, revealed: bool) -> bool:
        """Rewrite the env and extra args with their secrets shown or masked; False when those fields
        do not parse (their text is kept as typed, and so are the secrets in it)."""
        errors: dict[str, str] = {}
        real = (*secret_values(self.base.args, self.base.env), *self.known)
        env = unmask_env(parse_env(self.values.env, errors), real, errors)
        args = unmask_args(parse_args(self.values.args, errors), real, errors)
        if errors:
            self.notify(f"fix the {' and '.join(errors)} field first", severity="error", timeout=5)
            return False
        self.known = (*self.known, *secret_values(args, env))
        self.revealed = revealed
        self.query_one("#ff-env", TextArea).load_text(env_text(env, secrets=revealed))
        self.query_one("#ff-args", TextArea).load_text(args_text(args if revealed else tuple(redact(args))))
        self._sync()
        self._paint()
        return True

    def on_screen_suspend(self) -> None:
        """A dialog or another screen over the form: the secrets are masked again."""
        if self.revealed:
            self._show_secrets(False)

    def action_launch(self) -> None:
        self._after_typing(self._launch_now)

    def _launch_now(self) -> None:
        profile = self._valid_profile()
        if profile is not None:
            self.dismiss(FormResult(profile, launch=True))

    def action_close(self) -> None:
        self._after_typing(self._close_now)

    def _close_now(self) -> None:
        if not self.dirty:
            self.dismiss(FormResult(self.saved))
            return
        question = ConfirmScreen(
            f"Discard the unsaved changes to {self.base.name}?",
            [("", Text("The hosts file keeps the profile as it was saved."))],
            yes="Discard",
            no="Keep editing",
            dialog_id="confirm-discard",
        )
        self.app.push_screen(question, self._discard_answered)

    def _discard_answered(self, discard: bool | None) -> None:
        if discard:
            self.dismiss(FormResult(self.saved))
