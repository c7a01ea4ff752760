"""One host's tab: its status bar, its GPU panel, and the log pane on the session's mirror of the host's log
(the document the session parses as it reads the log: the pane only pages through it, when told)."""

from __future__ import annotations

from functools import cached_property

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical

from gdnconsole.host.link import LinkState
from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible, visible_lines
from gdnconsole.sglang.stages import Severity
from gdnconsole.ui.models.gpurows import gpu_rows
from gdnconsole.ui.theme import LogPalette
from gdnconsole.ui.widgets.gpupanel import GpuPanel
from gdnconsole.ui.widgets.logpane import LogPane
from gdnconsole.ui.widgets.servingstrip import ServingStrip
from gdnconsole.ui.widgets.statusbar import Clock, HostStatusBar, host_status, verdict
from gdnconsole.ui.widgets.timeline import Ending, TimelineData

_FAILED = (
    LinkState.DOWN,
    LinkState.AUTH_FAILED,
    LinkState.HOST_KEY_REFUSED,
    LinkState.NO_AGENT,
    LinkState.CRASHED,
)


def ending(session: HostSession, data: TimelineData) -> Ending | None:
    """What the host knows of the startup's server that its log cannot say: it ended (the agent saw it
    exit), or it is another process than the server on the host (a second writer to the same log)."""
    pid = data.pid
    ended = session.ended_words(pid)
    if ended is not None:
        return Ending("ended", ended)
    server = session.server
    if server is None or server.pid == pid:
        return None
    own = session.startup_of(server.pid)  # found by the pid its uvicorn line names, else the log's last
    if own is not None and own.pid == server.pid and own.index != data.index:
        who = f"pid {pid}" if pid is not None else "another process"
        return Ending(
            "foreign", f"written by {who}, not the server (pid {server.pid}, startup {own.index + 1})"
        )
    return None


def gpu_message(session: HostSession, palette: LogPalette) -> Text | None:
    """What to say above (or instead of) the GPU rows (in the theme's colours, as the status bar)."""
    error, warning = palette.severities[Severity.ERROR], palette.severities[Severity.WARNING]
    if session.link in _FAILED and session.link_message:
        return Text(visible_lines(session.link_message), error)  # what SSH or the host said
    if session.link is LinkState.UNKNOWN_HOST:
        return Text(visible_lines(session.link_message or "unknown host key"), warning)
    if session.gpus:
        return None
    if session.hello is not None and session.nvml_source == "none":
        reason = session.hello.nvml.reason or "neither NVML nor nvidia-smi answers"
        return Text.assemble(("no GPU data", warning + Style(bold=True)), f": {visible(reason)}")
    if session.link is LinkState.CONNECTED:
        return Text("waiting for the first GPU sample…", palette.dim)
    return Text(f"connecting to {session.host.name}…", palette.dim)


class HostPane(Vertical):
    DEFAULT_CSS = """
    HostPane { height: 1fr; }
    """

    def __init__(
        self,
        session: HostSession,
        palette: LogPalette,
        clock: Clock,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        if session.log.doc is None:
            raise ValueError("the dashboard shows a session's mirror file: create the session with one")
        self.session = session
        self.palette = palette
        self.clock = clock
        self.doc = session.log.doc
        self.launch_note: Text | None = None  # a launch in flight, or how the last one ended
        self._status: Text | None = None  # what the status bar shows
        self._gpu_title: str | None = None  # and the GPU panel's title
        self._own_pid: int | None = None  # the server whose startup the timeline shows

    def compose(self) -> ComposeResult:
        yield self.status_bar
        yield self.serving_strip
        yield self.gpu_panel
        yield self.log_pane

    # Held, not queried: a repaint on every change of the host must not search the tab's widgets.

    @cached_property
    def status_bar(self) -> HostStatusBar:
        return HostStatusBar(id="host-status")

    @cached_property
    def serving_strip(self) -> ServingStrip:
        return ServingStrip(id="serving-strip")

    @cached_property
    def gpu_panel(self) -> GpuPanel:
        return GpuPanel(self.palette, id="gpus")

    @cached_property
    def log_pane(self) -> LogPane:
        return LogPane(self.doc, self.palette, follow=True)

    def on_mount(self) -> None:
        self.log_pane.own_pid = lambda: self._own_pid
        self.log_pane.timeline.judge_by(lambda data: ending(self.session, data))
        self.refresh_host()
        self.refresh_figures()

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_host)  # the status bar fits its parts to the new width

    def refresh_figures(self) -> None:
        """The serving strip from the session's latest figures (each poll, while the tab is on screen)."""
        self.serving_strip.show(self.session.figures.feed, self.session.server is not None)

    def refresh_host(self) -> None:
        """Repaint from the session's state (cheap: called on every change the session reports)."""
        session = self.session
        bar = self.status_bar
        status = host_status(session, self.palette, self.clock(), bar.content_width(), self.launch_note)
        if status != self._status:  # an unchanged bar is not laid out and painted again
            self._status = status
            bar.update(status)
        server = session.server
        if server is None and self.serving_strip.display:
            self.refresh_figures()  # the server ended: its figures go with it, not at the next poll
        if (server.pid if server is not None else None) != self._own_pid:
            self._own_pid = server.pid if server is not None else None
            self.log_pane.retrack()  # its own startup, not another writer's later one
        self.log_pane.timeline.set_verdict(verdict(session))
        self.log_pane.timeline.rejudge()
        rows = gpu_rows(
            session.gpus,
            session.server,
            session.orphans,
            session.placements(),
            session.startup,
        )
        panel = self.gpu_panel
        title = f"GPUs · {session.nvml_source}" if session.hello else "GPUs"
        if title != self._gpu_title:  # setting a border title repaints the panel, even the same title
            self._gpu_title = panel.border_title = title
        panel.show(rows, gpu_message(session, self.palette))
