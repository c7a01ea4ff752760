"""The host picker (plain `gdnconsole` with a hosts file): the configured hosts; space marks several,
enter opens the marked ones (or the highlighted one) in the dashboard."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from gdnconsole.config.hosts import Host
from gdnconsole.logs.textsafe import visible
from gdnconsole.ui import screenlist
from gdnconsole.ui.dialogs.help import HelpScreen
from gdnconsole.ui.keybar import KeyBar


def describe(host: Host) -> str:
    """How the host is reached, and what it is when simulated."""
    if host.simulate is not None:
        sim = host.simulate
        return f"simulated {sim.gpus}x {sim.gpu_name}, SGLang {sim.sglang}"
    return f"ssh {host.ssh.alias}" if host.ssh else "this machine"


class HostPickerScreen(Screen[list[Host]]):
    DEFAULT_CSS = """
    HostPickerScreen { align: center middle; }
    HostPickerScreen > Vertical { width: 90; max-width: 100%; height: auto; max-height: 100%; }
    HostPickerScreen OptionList { height: auto; max-height: 20; border: round $primary; }
    HostPickerScreen #picker-title { padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = screenlist.spec("host picker").own

    def __init__(self, hosts: Sequence[Host], config_path: str = "") -> None:
        super().__init__()
        self.hosts = list(hosts)
        self.config_path = config_path
        self.marked: set[int] = set()

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text("Open which hosts? ", Style(bold=True))
            title.append("space marks, enter opens", Style(dim=True))
            if self.config_path:
                title.append(f"   ({self.config_path})", Style(dim=True))
            yield Static(title, id="picker-title")
            yield OptionList(*(Option(self._prompt(i), id=f"pick-{i}") for i in range(len(self.hosts))))
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def _prompt(self, index: int) -> Text:
        host = self.hosts[index]
        out = Text("[x] " if index in self.marked else "[ ] ")
        out.append(f"{host.name:<16}", Style(bold=True))
        out.append(visible(describe(host)), Style(dim=True))  # the file's values: a bidi override shown
        return out

    def action_mark(self) -> None:
        options = self.query_one(OptionList)
        index = options.highlighted
        if index is None:
            return
        self.marked.symmetric_difference_update({index})
        options.replace_option_prompt_at_index(index, self._prompt(index))
        options.action_cursor_down()

    def action_open(self) -> None:
        chosen = sorted(self.marked) or [self.query_one(OptionList).highlighted or 0]
        self.dismiss([self.hosts[i] for i in chosen])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # a click on a host opens it (enter is the screen's binding)
        self.dismiss([self.hosts[event.option_index]])

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(screen="host picker"))

    def action_quit(self) -> None:
        self.app.exit()
