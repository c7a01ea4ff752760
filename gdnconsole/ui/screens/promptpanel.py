"""The prompt panel (`p` on the dashboard): test prompts against one host's server, streamed and timed,
bursts of concurrent copies with their percentiles, and the decode throughput and accept length over time.

Every request runs in a worker on the app's loop (the UI stays responsive, and Esc or ctrl+c cancels it);
the history file is read and written in thread workers. The session's changes arrive as messages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar, Literal

from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from gdnconsole.chat.burst import BurstResult
from gdnconsole.chat.model import ChatError, ChatRequest, ChatResult
from gdnconsole.host import prompting
from gdnconsole.host.prompthistory import PromptHistory
from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible
from gdnconsole.sglang import chatext
from gdnconsole.ui import screenlist
from gdnconsole.ui.afterkeys import after_typing
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.keybar import KeyBar
from gdnconsole.ui.screens.promptsession import SessionChanged, serving_text
from gdnconsole.ui.tones import Tones
from gdnconsole.ui.widgets.answerview import AnswerView
from gdnconsole.ui.widgets.burstview import BurstView
from gdnconsole.ui.widgets.promptform import FormError, PromptForm
from gdnconsole.ui.widgets.sparkpanel import SparkPanel

Clock = Callable[[], float]
TICK_S = 1 / 15  # the streamed answer and the elapsed times repaint this often while a request runs
NARROW = 100  # columns below which the form goes above the answer
SHORT = 30  # rows below which the panels lose their spacing

HINT = "ctrl+r or F5 runs the prompt · ctrl+g sends the burst · esc cancels a run"

# The prompt box's own ↑ / ↓ (TextArea keys), listed in help beside the panel's keys.
RECALL_KEYS: list[BindingType] = list(screenlist.RECALL_KEYS)


class PromptScreen(Screen[None]):
    DEFAULT_CSS = """
    PromptScreen { layout: vertical; }
    PromptScreen #prompt-head { height: 1; background: $panel; padding: 0 1; }
    PromptScreen #prompt-body { height: 1fr; }
    PromptScreen #prompt-form { width: 50; height: 100%; padding: 1 1 0 1; border-right: solid $panel; }
    PromptScreen #prompt-results { width: 1fr; height: 100%; padding: 1 1 0 1; }
    PromptScreen.-burst AnswerView { display: none; }
    PromptScreen.-burst BurstView { display: block; }
    PromptScreen.-narrow #prompt-body { layout: vertical; }
    PromptScreen.-narrow #prompt-form {
        width: 100%; height: auto; border-right: none; border-bottom: solid $panel; padding: 0 1;
    }
    PromptScreen.-narrow #prompt-results { height: 1fr; padding: 0 1; }
    PromptScreen.-narrow PromptForm { height: auto; }
    PromptScreen.-narrow PromptForm .pf-row { margin-bottom: 0; }
    PromptScreen.-narrow #pf-prompt-label { display: none; }
    PromptScreen.-narrow #pf-prompt { height: 4; margin-bottom: 0; }
    PromptScreen.-short PromptForm .pf-row { margin-bottom: 0; }
    PromptScreen.-short.-narrow #pf-prompt { height: 3; }
    PromptScreen.-short SparkPanel { border-top: none; }
    PromptScreen.-short AnswerView #answer-text-box { margin-top: 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("prompt panel").own

    def __init__(
        self, session: HostSession, *, clock: Clock = time.monotonic, history: PromptHistory | None = None
    ) -> None:
        """``clock``: for the elapsed times and the live figures (tests pass a fixed one);
        ``history``: where the runs are recorded (None: the host's file in the user data dir)."""
        super().__init__()
        self.session = session
        self.clock = clock
        self.history = history or PromptHistory(session.host.name, warn=self._history_damaged)
        self.running: Worker[None] | None = None
        self.kind: Literal["prompt", "burst"] = "prompt"
        self.started = 0  # runs and bursts started since the panel opened

    def compose(self) -> ComposeResult:
        yield Static(id="prompt-head")
        with Horizontal(id="prompt-body"):
            yield PromptForm(id="prompt-form")
            with Vertical(id="prompt-results"):
                yield AnswerView(id="prompt-answer")
                yield BurstView(id="prompt-burst")
        yield SparkPanel(id="prompt-sparks")
        yield KeyBar()

    def on_mount(self) -> None:
        self.session.subscribe(self._heard)
        self.ticker = self.set_interval(TICK_S, self._tick, pause=True)
        self.answer.idle(HINT)
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        self._paint_session()
        self._load_history()
        self.form.box.focus()

    def on_unmount(self) -> None:
        self.session.unsubscribe(self._heard)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")
        self.set_class(event.size.height < SHORT, "-short")

    # -- parts -----------------------------------------------------------------------------------------

    @property
    def form(self) -> PromptForm:
        return self.query_one(PromptForm)

    @property
    def answer(self) -> AnswerView:
        return self.query_one(AnswerView)

    @property
    def burst_view(self) -> BurstView:
        return self.query_one(BurstView)

    @property
    def sparks(self) -> SparkPanel:
        return self.query_one(SparkPanel)

    def _theme_changed(self, _theme: object) -> None:
        """Text is built in the theme's colours: build it again in the new ones."""
        self._paint_session()
        self.answer.repaint()
        self.burst_view.repaint()

    # -- the session -----------------------------------------------------------------------------------

    def _heard(self, topic: str) -> None:
        """Called by the session on the app's loop: post, never block."""
        self.post_message(SessionChanged())

    def on_session_changed(self, message: SessionChanged) -> None:
        self._paint_session()

    def _paint_session(self) -> None:
        session, tones = self.session, Tones.of(self.app)
        name = Text(visible(session.host.name), Style(bold=True))
        parts = [Text("Prompt", tones.primary + Style(bold=True)), name]
        profile = session.host.profile
        if profile is not None and profile.model:
            parts.append(Text(visible(profile.model)))
        version = session.facts.sglang
        if version:  # as the host said it
            parts.append(Text(f"SGLang {visible(version)}", tones.muted))
        parts.append(serving_text(session, tones))
        head = Text(" · ", tones.muted).join(parts)
        head.no_wrap, head.overflow = True, "ellipsis"
        self.query_one("#prompt-head", Static).update(head)
        self.sparks.show(list(session.decode_points))

    def _meta_info(self) -> bool:
        return chatext.meta_info(self.session.facts.sglang)

    # -- history ---------------------------------------------------------------------------------------

    @work(thread=True, group="history-read")
    def _load_history(self) -> None:
        prompts = self.history.prompts()
        self.app.call_from_thread(self._history_loaded, prompts)

    def _history_damaged(self, message: str) -> None:
        """Heard in the reading worker: the history's damaged lines, said as a toast (stderr is hidden)."""
        self.app.call_from_thread(self.notify, visible(message), severity="warning", timeout=8)

    def _history_loaded(self, prompts: list[str]) -> None:
        if self.is_mounted:
            self.form.box.recall.extend_older(prompts)

    @work(thread=True, group="history-write")
    def _record_run(self, request: ChatRequest, result: ChatResult, cancelled: bool) -> None:
        try:
            self.history.record_run(request, result, cancelled=cancelled)
        except OSError as exc:
            self.app.call_from_thread(self._not_recorded, exc)

    @work(thread=True, group="history-write")
    def _record_burst(self, request: ChatRequest, result: BurstResult) -> None:
        try:
            self.history.record_burst(request, result)
        except OSError as exc:
            self.app.call_from_thread(self._not_recorded, exc)

    def _not_recorded(self, exc: OSError) -> None:
        self.notify(f"not recorded in the prompt history: {exc}", severity="error", timeout=6)

    # -- actions ---------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        busy = self.running is not None
        if action == "cancel":
            return busy
        if action == "close":
            return not busy
        if action in ("run", "burst"):
            return None if busy else True  # shown dimmed while a request runs
        return True

    def _request(self, read: Callable[[], ChatRequest]) -> ChatRequest | None:
        try:
            return read()
        except FormError as exc:
            self._form_error(exc)
            return None

    def _form_error(self, exc: FormError) -> None:
        self.notify(str(exc), severity="error", timeout=5)
        self.query_one(f"#{exc.field}").focus()

    def _start(self, kind: Literal["prompt", "burst"], job: Worker[None]) -> None:
        self.kind, self.running = kind, job
        self.started += 1
        self.set_class(kind == "burst", "-burst")
        self.ticker.resume()
        self.refresh_bindings()

    def action_run(self) -> None:
        after_typing(self, self._run_now)  # the form as typed, the keys just before ctrl+r included

    def _run_now(self) -> None:
        request = self._request(lambda: self.form.request(meta_info=self._meta_info()))
        if request is None:
            return
        self.form.box.recall.add(request.prompt)
        self.answer.begin(request, self.clock())
        self._start("prompt", self._run(request))

    def action_burst(self) -> None:
        after_typing(self, self._burst_now)

    def _burst_now(self) -> None:
        request = self._request(self.form.request)
        if request is None:
            return
        try:
            count = self.form.burst_count()
        except FormError as exc:
            self._form_error(exc)
            return
        self.form.box.recall.add(request.prompt)
        self.burst_view.begin(count, self.clock())
        self._start("burst", self._burst(request, count))

    def action_cancel(self) -> None:
        if self.running is not None:
            self.running.cancel()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_thinking(self) -> None:
        value = self.form.cycle_thinking()
        self.notify(f"thinking: {'model default' if value is None else 'on' if value else 'off'}", timeout=2)

    def action_next_preset(self) -> None:
        self.form.next_preset()

    def action_recall_older(self) -> None:
        self.form.box.recall_older()

    def action_recall_newer(self) -> None:
        self.form.box.recall_newer()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(screen="prompt panel"))

    # -- running ---------------------------------------------------------------------------------------

    def _tick(self) -> None:
        now = self.clock()
        if self.kind == "prompt":
            self.answer.paint(now)
        else:
            self.burst_view.paint(now)

    def _delta(self, name: str, text: str) -> None:
        self.answer.delta(name, text, self.clock())

    @work(group="prompt", exit_on_error=False)
    async def _run(self, request: ChatRequest) -> None:
        try:
            result = await prompting.ask(self.session, request, on_delta=self._delta)
        except ChatError as exc:  # nothing to send it to: no server port known, or the link is down
            self.answer.fail(str(exc))
            return
        self.answer.finish(result)
        self._record_run(request, result, False)

    def _one_done(self, result: ChatResult) -> None:
        self.burst_view.one_done(result.ok)

    @work(group="prompt", exit_on_error=False)
    async def _burst(self, request: ChatRequest, count: int) -> None:
        try:
            outcome = await prompting.ask_burst(self.session, request, count, on_result=self._one_done)
        except ChatError as exc:
            self.burst_view.fail(str(exc))
            return
        self.burst_view.show(outcome.result, outcome.accept_length)
        self._record_burst(request, outcome.result)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self.running or event.state not in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            return
        view = self.answer if self.kind == "prompt" else self.burst_view
        if event.state is WorkerState.CANCELLED:
            self._cancelled()
        elif event.state is WorkerState.ERROR:  # a bug, not a server's answer: say it, keep the panel
            error = event.worker.error
            view.fail(f"the request failed unexpectedly: {type(error).__name__}: {error}")
        self.running = None
        self.ticker.pause()
        self.refresh_bindings()

    def _cancelled(self) -> None:
        now = self.clock()
        if self.kind == "burst":
            self.burst_view.cancel(now)
            return
        partial = self.answer.cancel(now)
        if partial is not None and self.answer.live is not None:
            self._record_run(self.answer.live.request, partial, True)
