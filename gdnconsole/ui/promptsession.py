"""The host as the prompt panel sees it: the session's changes passed on to the open panels, and whether
its server answers, in words."""

from __future__ import annotations

import weakref
from collections.abc import Callable

from rich.style import Style
from rich.text import Text
from textual.message import Message

from gdnconsole.chatmodel import Health
from gdnconsole.host.session import HostSession
from gdnconsole.ui.tones import Tones, ms


class SessionChanged(Message):
    """The session reported a change (log, serving state…); a newer one replaces a queued one."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SessionChanged)


class Relay:
    """One subscription per session for the life of the process (a session has no unsubscribe): it passes
    each change on to the prompt panels open on that session."""

    def __init__(self, session: HostSession) -> None:
        self.targets: list[Callable[[str], None]] = []
        session.subscribe(self)

    def __call__(self, topic: str) -> None:
        for target in list(self.targets):
            target(topic)


_RELAYS: weakref.WeakKeyDictionary[HostSession, Relay] = weakref.WeakKeyDictionary()


def relay(session: HostSession) -> Relay:
    relay = _RELAYS.get(session)
    if relay is None:
        relay = _RELAYS[session] = Relay(session)
    return relay


def serving_text(session: HostSession, tones: Tones) -> Text:
    """Whether the server answers: verified (with the proof's latency), its health, or why not."""
    state = session.serving
    if session.server is None:
        return Text("no server running", tones.muted)
    if state.verifying:
        return Text("◐ verifying…", tones.warn)
    if state.verified:
        return Text.assemble(("✔ verified", tones.good), (f" {ms(state.latency_ms)}", tones.muted))
    if state.verified is False:
        return Text.assemble(("✖ not verified", tones.bad), (f": {state.reason or 'no answer'}", tones.muted))
    health: dict[Health | None, tuple[str, Style]] = {
        Health.OK: ("● healthy", tones.good),
        Health.STARTING: ("◐ warming up (503)", tones.warn),
        Health.REFUSED: ("◌ not listening yet", tones.muted),
        Health.ERROR: (f"✖ {state.health_message}", tones.bad),
    }
    words, style = health.get(state.health, ("◌ health not checked yet", tones.muted))
    return Text(words, style)
