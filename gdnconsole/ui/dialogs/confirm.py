"""Yes/no dialogs: stop and relaunch (what will be stopped, and the flags that change), discarding
unsaved edits, opening the form on a rejected flag. The body is built by pure functions; the screen
only shows it (painted again in a new theme's colours) and returns the answer."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import ClassVar, TypeAlias

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gdnconsole.host.launcher import PlanProcess, StopPlan
from gdnconsole.logs.textsafe import visible
from gdnconsole.sglang.launch import redact
from gdnconsole.timefmt import duration
from gdnconsole.ui import screenlist
from gdnconsole.ui.keybar import KeyBar
from gdnconsole.ui.models.textfit import argument_lines
from gdnconsole.ui.tones import Tones

DIM = Style(dim=True)
BOLD = Style(bold=True)

# A section's body: text, or text built for the theme's colours and the body's width in cells (built
# again when the theme or the terminal's size changes).
Body: TypeAlias = Text | Callable[[Tones, int], Text]
DIALOG_WIDTH = 96  # cells, borders and padding included (4)
PID_WIDTH = 14  # "  pid 12345678"


def process_lines(process: PlanProcess, words: Sequence[str], width: int, style: Style) -> Text:
    """One process: its pid, then its command line wrapped at argument boundaries under its start."""
    out = Text(f"  pid {process.pid:<8}", style)
    shown = [visible(word) for word in words]  # a process title is data, never markup nor an escape
    out.append("\n".join(argument_lines(shown, width, PID_WIDTH)))
    return out


def processes_text(processes: Sequence[tuple[int, str]], width: int) -> Text:
    """(pid, command line) pairs, as the adopt question lists them: each wrapped between its words."""
    lines = [
        process_lines(PlanProcess(pid, what, None), what.split(), width, BOLD) for pid, what in processes
    ]
    return Text("\n").join(lines)


def plan_text(plan: StopPlan, grace_s: float, width: int = DIALOG_WIDTH - 4) -> Text:
    """The processes a stop will end (process group, uptime, each pid with its whole command line, keys
    masked), and the look-alikes it leaves alone."""
    out = Text()
    if plan.empty:
        out.append("gdnconsole launched or adopted no server that runs here: nothing will be stopped", DIM)
        return out
    head = f"server pid {plan.pid} · process group {plan.pgid if plan.pgid is not None else '?'}"
    if plan.uptime_s is not None:
        head += f" · up {duration(plan.uptime_s)}"
    if plan.adopted:
        head += " · adopted"
    out.append(head + "\n", BOLD)
    for process in plan.processes:
        # The server's own line from its whole argv: the title the plan holds is cut.
        server = process.pid == plan.pid and bool(plan.argv)
        words = [shlex.quote(w) for w in redact(plan.argv)] if server else redact(process.title.split())
        out.append_text(process_lines(process, words, width, BOLD))
        out.append("\n")
    out.append(f"SIGTERM first; SIGKILL to the process group after {grace_s:g} s.", DIM)
    if plan.untouched:
        out.append("\n  left alone:", DIM)
    for process in plan.untouched:
        out.append("\n")
        out.append_text(process_lines(process, redact(process.title.split()), width, DIM))
    return out


def diff_text(diff: Sequence[str], tones: Tones) -> Text:
    """The flag diff, one change a line, coloured by flag_diff's mark: "+" added, "-" removed, "~"
    changed."""
    out = Text()
    if not diff:
        out.append("the same flags and environment as the running server", DIM)
        return out
    marks = {"+": tones.success, "-": tones.error, "~": tones.warning}
    for n, line in enumerate(diff):
        style = marks.get(line[:1], Style())
        out.append(("\n" if n else "") + visible(line), style)
    return out


class ConfirmScreen(ModalScreen[bool]):
    """A question, a body, and two answers: y (or the yes button) returns True, n or escape False."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 96; max-width: 100%; height: auto; max-height: 100%;
        background: $panel; border: round $warning; padding: 0 1;
    }
    ConfirmScreen #confirm-title { text-style: bold; margin-bottom: 1; }
    ConfirmScreen VerticalScroll { height: auto; max-height: 20; }
    ConfirmScreen .confirm-heading { text-style: bold underline; margin-top: 1; }
    ConfirmScreen Horizontal { height: auto; margin-top: 1; }
    ConfirmScreen Button { margin: 0 1 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("confirmation").own

    def __init__(
        self,
        title: str,
        sections: Sequence[tuple[str, Body]] = (),
        *,
        yes: str = "Yes",
        no: str = "No",
        dialog_id: str | None = None,
    ) -> None:
        """``sections``: (heading, body) pairs; an empty heading shows the body alone."""
        super().__init__(id=dialog_id)
        self.title_text = title
        self.sections = list(sections)
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.title_text), id="confirm-title")
            with VerticalScroll():
                tones = Tones.of(self.app)
                for n, (heading, body) in enumerate(self.sections):
                    if heading:
                        yield Static(Text(heading), classes="confirm-heading")
                    yield Static(self._built(body, tones), id=f"confirm-body-{n}")
            with Horizontal():
                yield Button(f"{self.yes} (y)", id="confirm-yes", variant="warning")
                yield Button(f"{self.no} (n)", id="confirm-no", variant="primary")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # the safe answer is the default
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        self._rebuild()

    def on_resize(self) -> None:
        self._rebuild()

    def _rebuild(self) -> None:
        tones = Tones.of(self.app)
        for n, (_heading, body) in enumerate(self.sections):
            if not isinstance(body, Text):
                self.query_one(f"#confirm-body-{n}", Static).update(self._built(body, tones))

    def _built(self, body: Body, tones: Tones) -> Text:
        """The body for the dialog's width now: the terminal's, up to the dialog's own (the CSS above)."""
        width = min(DIALOG_WIDTH, self.app.size.width) - 4
        return body if isinstance(body, Text) else body(tones, width)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")


def stop_dialog(host: str, plan: StopPlan, grace_s: float) -> ConfirmScreen:
    return ConfirmScreen(
        f"Stop the SGLang server on {host}?",
        [("what will be stopped", lambda _tones, width: plan_text(plan, grace_s, width))],
        yes="Stop it",
        no="Keep it running",
        dialog_id="confirm-stop",
    )


def relaunch_dialog(
    host: str, profile: str, plan: StopPlan, diff: Sequence[str], grace_s: float
) -> ConfirmScreen:
    return ConfirmScreen(
        f"Relaunch SGLang on {host} with profile {profile}?",
        [
            ("what will be stopped", lambda _tones, width: plan_text(plan, grace_s, width)),
            ("flags that change", lambda tones, _width: diff_text(diff, tones)),
        ],
        yes="Relaunch",
        no="Cancel",
        dialog_id="confirm-relaunch",
    )
