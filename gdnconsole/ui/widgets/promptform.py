"""The prompt panel's form: presets, the prompt box with its history, the system prompt, max tokens,
temperature, thinking, streaming and the burst size. It reads the widgets into a ChatRequest; it sends
nothing (the screen does)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Checkbox, Input, Label, Select, TextArea

from gdnconsole.chat.model import ChatRequest
from gdnconsole.errors import ConsoleError

MAX_TOKENS = 131_072
MAX_BURST = 512
DEFAULT_BURST = 8
THINKING = (("model default", "default"), ("on", "on"), ("off", "off"))
THINKING_VALUES: dict[str, bool | None] = {"default": None, "on": True, "off": False}


def _long_context() -> str:
    """Four hundred inventory records with one needle in the middle: about 6k tokens of context whose
    answer needs the whole of it read (a truncated or mis-cached context answers wrongly)."""
    colours = ("red", "green", "amber", "grey", "blue", "white", "black", "copper", "silver", "ochre")
    items = ("bolt", "gear", "valve", "spring", "washer", "bearing", "hinge", "pulley", "gasket", "rivet")
    lines = ["Below are 400 inventory records."]
    for i in range(1, 401):
        thing = "violet lantern" if i == 287 else f"{colours[i % 10]} {items[i * 7 % 10]}"
        lines.append(f"Record {i}: {thing}, shelf {i * 7 % 97}, count {i * 13 % 50}.")
    lines.append("Which record lists the violet lantern, and on which shelf is it? Answer in one sentence.")
    return "\n".join(lines)


@dataclass(frozen=True)
class Preset:
    name: str
    label: str
    prompt: str
    system: str = ""
    max_tokens: int | None = 256
    temperature: float | None = None
    thinking: bool | None = None  # only the reasoning preset turns thinking on


PRESETS: tuple[Preset, ...] = (
    Preset("sanity", "sanity", "Say hello in one short sentence.", max_tokens=32, temperature=0.0),
    Preset("long", "long context", _long_context(), max_tokens=64, temperature=0.0),
    Preset(
        "code",
        "code",
        "Write a Python function merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]] "
        "that merges overlapping intervals, with a docstring and two doctests. Reply with the code only.",
        system="You are a senior Python engineer. Answer with code, no commentary.",
        max_tokens=512,
        temperature=0.2,
    ),
    Preset(
        "reasoning",
        "reasoning",
        "A bat and a ball cost $1.10 in total. The bat costs $1.00 more than the ball. "
        "How much does the ball cost? Think it through, then give the answer in one line.",
        max_tokens=1024,
        temperature=0.6,
        thinking=True,
    ),
)
PRESET_BY_NAME = {p.name: p for p in PRESETS}


class FormError(ConsoleError, ValueError):
    """A field holds something a request cannot take; ``field`` is the widget's id."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class Recall:
    """Walking back and forth through earlier prompts, as a shell's history does: the text being typed is
    kept and comes back after the newest prompt."""

    def __init__(self, prompts: Iterable[str] = ()) -> None:
        self.items: list[str] = list(prompts)
        self.index: int | None = None  # the item shown, None: the draft
        self.draft = ""

    def older(self, current: str) -> str | None:
        """The prompt before the one shown (None at the oldest, or without history)."""
        if self.index is None:
            self.draft = current
            candidates = range(len(self.items) - 1, -1, -1)
        else:
            candidates = range(self.index - 1, -1, -1)
        for i in candidates:
            if self.items[i] != current:  # never "recall" the very text on screen
                self.index = i
                return self.items[i]
        return None

    def newer(self) -> str | None:
        """The prompt after the one shown, then the draft (None when the draft is shown)."""
        if self.index is None:
            return None
        if self.index >= len(self.items) - 1:
            self.index = None
            return self.draft
        self.index += 1
        return self.items[self.index]

    def add(self, prompt: str) -> None:
        """A prompt was run: it becomes the newest, and browsing starts over."""
        if prompt in self.items:
            self.items.remove(prompt)
        self.items.append(prompt)
        self.index = None

    def extend_older(self, prompts: Iterable[str]) -> None:
        """Prompts from the history file, older than any run since the panel opened."""
        kept = [p for p in prompts if p not in self.items]
        self.items[:0] = kept
        if self.index is not None:
            self.index += len(kept)


class PromptBox(TextArea):
    """The prompt: ↑ on the first line and ↓ on the last recall earlier prompts (alt+↑ / alt+↓ anywhere)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(compact=True, soft_wrap=True, show_line_numbers=False, id=id)
        self.recall = Recall()

    def _load(self, text: str, *, at_end: bool) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end if at_end else (0, 0))

    def recall_older(self) -> bool:
        text = self.recall.older(self.text)
        if text is None:
            return False
        self._load(text, at_end=False)  # the cursor stays on the first line: ↑ again goes further back
        return True

    def recall_newer(self) -> bool:
        text = self.recall.newer()
        if text is None:
            return False
        self._load(text, at_end=True)  # on the last line: ↓ again comes forward
        return True

    def action_cursor_up(self, select: bool = False) -> None:
        on_first = self.navigator.is_first_wrapped_line(self.cursor_location)
        if select or not on_first or not self.selection.is_empty or not self.recall_older():
            super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        on_last = self.navigator.is_last_wrapped_line(self.cursor_location)
        if select or not on_last or not self.selection.is_empty or not self.recall_newer():
            super().action_cursor_down(select)


class PromptForm(Vertical):
    DEFAULT_CSS = """
    PromptForm { height: 100%; }
    PromptForm .pf-row { height: 1; margin-bottom: 1; }
    PromptForm .pf-label { width: 11; color: $text-muted; }
    PromptForm .pf-label-inner { width: auto; padding: 0 1 0 2; color: $text-muted; }
    PromptForm #pf-preset { width: 1fr; }
    PromptForm #pf-system { width: 1fr; }
    PromptForm #pf-prompt { height: 1fr; min-height: 3; background: $surface; margin-bottom: 1; }
    PromptForm #pf-prompt-label { height: 1; color: $text-muted; }
    PromptForm .pf-number { width: 9; }
    PromptForm #pf-thinking { width: 19; }
    PromptForm #pf-stream { width: auto; margin-left: 2; }
    PromptForm Input.-invalid { background: $error 25%; }
    """

    PRESET_OPTIONS: ClassVar[list[tuple[str, str]]] = [(p.label, p.name) for p in PRESETS]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.preset = PRESETS[0].name

    def compose(self) -> ComposeResult:
        with Horizontal(classes="pf-row"):
            yield Label("preset", classes="pf-label")
            yield Select(self.PRESET_OPTIONS, value=self.preset, allow_blank=False, compact=True,
                         id="pf-preset")  # fmt: skip
        with Horizontal(classes="pf-row"):
            yield Label("system", classes="pf-label")
            yield Input(placeholder="system prompt (none)", compact=True, id="pf-system")
        yield Label("prompt  ↑/↓ on the first/last line: history", id="pf-prompt-label")
        yield PromptBox(id="pf-prompt")
        with Horizontal(classes="pf-row"):
            yield Label("max tokens", classes="pf-label")
            yield Input(type="integer", placeholder="server", compact=True, classes="pf-number", id="pf-max")
            yield Label("temperature", classes="pf-label-inner")
            yield Input(type="number", placeholder="server", compact=True, classes="pf-number", id="pf-temp")
        with Horizontal(classes="pf-row"):
            yield Label("thinking", classes="pf-label")
            yield Select(THINKING, value="default", allow_blank=False, compact=True, id="pf-thinking")
            yield Checkbox("stream", value=True, compact=True, id="pf-stream")
        with Horizontal(classes="pf-row"):
            yield Label("burst", classes="pf-label")
            yield Input(str(DEFAULT_BURST), type="integer", compact=True, classes="pf-number", id="pf-burst")
            yield Label("concurrent copies", classes="pf-label-inner")

    def on_mount(self) -> None:
        self.apply(PRESET_BY_NAME[self.preset])

    @property
    def box(self) -> PromptBox:
        return self.query_one(PromptBox)

    # -- presets and toggles ---------------------------------------------------------------------------

    def apply(self, preset: Preset) -> None:
        self.preset = preset.name
        self.query_one("#pf-preset", Select).value = preset.name
        self.box.load_text(preset.prompt)
        self.box.recall.index = None
        self.query_one("#pf-system", Input).value = preset.system
        self.query_one("#pf-max", Input).value = "" if preset.max_tokens is None else str(preset.max_tokens)
        temperature = "" if preset.temperature is None else f"{preset.temperature:g}"
        self.query_one("#pf-temp", Input).value = temperature
        self.thinking = preset.thinking

    def next_preset(self) -> None:
        names = [p.name for p in PRESETS]
        self.apply(PRESETS[(names.index(self.preset) + 1) % len(PRESETS)])

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "pf-preset" and isinstance(event.value, str) and event.value != self.preset:
            event.stop()
            self.apply(PRESET_BY_NAME[event.value])

    @property
    def thinking(self) -> bool | None:
        value = self.query_one("#pf-thinking", Select).value
        return THINKING_VALUES.get(value) if isinstance(value, str) else None

    @thinking.setter
    def thinking(self, value: bool | None) -> None:
        name = next(k for k, v in THINKING_VALUES.items() if v is value)
        self.query_one("#pf-thinking", Select).value = name

    def cycle_thinking(self) -> bool | None:
        """model default → on → off → model default."""
        order: list[bool | None] = [None, True, False]
        self.thinking = order[(order.index(self.thinking) + 1) % len(order)]
        return self.thinking

    # -- reading ---------------------------------------------------------------------------------------

    def _number(self, field: str, name: str, low: float, high: float, *, whole: bool) -> float | None:
        widget = self.query_one(f"#{field}", Input)
        text = widget.value.strip()
        widget.remove_class("-invalid")
        if not text:
            return None
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            widget.add_class("-invalid")
            kind = "a whole number" if whole else "a number"
            raise FormError(field, f"{name} must be {kind} from {low:g} to {high:g} (or empty: the server's)")
        return value

    def request(self, *, meta_info: bool = False) -> ChatRequest:
        """The request the form describes; FormError names the field that is wrong.
        ``meta_info``: ask a non-streamed answer for its own speculative figures (SGLang ≥ 0.5.23)."""
        prompt = self.box.text
        if not prompt.strip():
            raise FormError("pf-prompt", "the prompt is empty")
        max_tokens = self._number("pf-max", "max tokens", 1, MAX_TOKENS, whole=True)
        temperature = self._number("pf-temp", "temperature", 0.0, 2.0, whole=False)
        stream = self.query_one("#pf-stream", Checkbox).value
        system = self.query_one("#pf-system", Input).value
        return ChatRequest(
            prompt=prompt,
            system=system if system.strip() else None,
            max_tokens=None if max_tokens is None else int(max_tokens),
            temperature=temperature,
            stream=stream,
            thinking=self.thinking,
            return_meta_info=meta_info and not stream,
        )

    def burst_count(self) -> int:
        count = self._number("pf-burst", "the burst size", 1, MAX_BURST, whole=True)
        if count is None:
            self.query_one("#pf-burst", Input).add_class("-invalid")
            raise FormError("pf-burst", f"the burst size must be a whole number from 1 to {MAX_BURST}")
        return int(count)
