"""Whether the port a launch asks for is free on the host, asked before a startup of minutes (the agent
binds it and closes it at once, and names who listens there when /proc lets it see). A port held by the
server a relaunch replaces is fine: it is stopped first."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from gdnconsole.host.replies import AgentRefused
from gdnconsole.host.session import HostSession
from gdnconsole.sglang.launch import LaunchSpec, flag_value

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 30000  # SGLang's --host and --port defaults


def bind_address(spec: LaunchSpec) -> tuple[str, int]:
    """Where the server of ``spec`` will listen: its --host and --port (the last of each wins)."""
    host = flag_value(spec.args, ("--host",)) or DEFAULT_HOST
    port = flag_value(spec.args, ("--port",))
    return host.strip("[]"), int(port) if port is not None and port.isdigit() else DEFAULT_PORT


def _holders(reply: dict[str, Any]) -> list[tuple[int, str | None]]:
    found = reply.get("holders")
    pairs = (
        [(h.get("pid"), h.get("name")) for h in found if isinstance(h, dict)]
        if isinstance(found, list)
        else []
    )
    return [(pid, name if isinstance(name, str) else None) for pid, name in pairs if isinstance(pid, int)]


async def taken(session: HostSession, spec: LaunchSpec, ours: Collection[int] = ()) -> str | None:
    """Why the server of ``spec`` could not listen where it asks (one line naming the port and, where
    the host can tell, who holds it); None when it could, or when only ``ours`` (the server about to be
    replaced, its children) holds it."""
    host, port = bind_address(spec)
    try:
        reply = await session.request({"op": "port", "host": host, "port": port}, "port")
    except AgentRefused as exc:
        return f"cannot check port {port} on {session.host.name}: {exc}"
    if reply.get("free") is True:
        return None
    holders = _holders(reply)
    if holders and all(pid in ours for pid, _ in holders):
        return None
    if not holders and ours and any(s.pid in ours and s.port == port for s in session.servers):
        return None  # another user's fds are not ours to read: the port is our own server's
    others = [(pid, name) for pid, name in holders if pid not in ours]
    who = ", ".join(f"pid {pid}" + (f" ({name})" if name else "") for pid, name in others)
    reason = reply.get("reason") if isinstance(reply.get("reason"), str) else "cannot be bound"
    held = f"is held by {who}" if who else f"is not free ({reason})"
    return (
        f"port {port} on {session.host.name} ({host}) {held}: nothing was started; "
        "free it, or give the profile another port"
    )
