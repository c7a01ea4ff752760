"""The host as the prompt panel sees it: the message a session change becomes, and whether its server
answers, in words."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.message import Message

from gdnconsole.chat.model import Health
from gdnconsole.host.session import HostSession
from gdnconsole.logs.textsafe import visible
from gdnconsole.ui.tones import Tones, ms


class SessionChanged(Message):
    """The session reported a change (log, serving state…); a newer one replaces a queued one."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SessionChanged)


def serving_text(session: HostSession, tones: Tones) -> Text:
    """Whether the server answers: verified (with the proof's latency), its health, or why not."""
    if session.server is None:
        return Text("no server running", tones.muted)
    state = session.serving_now
    if state is None:  # the prober has not looked at this server yet
        return Text("◌ health not checked yet", tones.muted)
    if state.verifying:
        return Text("◐ verifying…", tones.warn)
    if state.verified:
        return Text.assemble(("✔ verified", tones.good), (f" {ms(state.latency_ms)}", tones.muted))
    if state.verified is False:
        reason = visible(state.reason or "no answer")  # what the server or the link said
        return Text.assemble(("✖ not verified", tones.bad), (f": {reason}", tones.muted))
    health: dict[Health | None, tuple[str, Style]] = {
        Health.OK: ("● healthy", tones.good),
        Health.STARTING: ("◐ warming up (503)", tones.warn),
        Health.REFUSED: ("◌ not listening yet", tones.muted),
        Health.ERROR: (f"✖ {visible(state.health_message or '')}", tones.bad),
    }
    words, style = health.get(state.health, ("◌ health not checked yet", tones.muted))
    return Text(words, style)
