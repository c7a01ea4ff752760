"""Whether a name that is no configured host can be an SSH target at all: an alias in the ssh config, or
a name this machine resolves. Said before a dashboard opens on it, so that a typo or a missing hosts file
is explained in words instead of a resolver's `[Errno -2]` in an empty tab."""

from __future__ import annotations

import fnmatch
import os
import socket
from pathlib import Path

SSH_CONFIG_ENV = "GDNCONSOLE_SSH_CONFIG"  # the link's own override (host/link.py), read the same way
DEFAULT_SSH_CONFIG = "~/.ssh/config"


def ssh_config_path() -> Path:
    return Path(os.environ.get(SSH_CONFIG_ENV) or DEFAULT_SSH_CONFIG).expanduser()


def _host_patterns(text: str) -> tuple[list[str], bool]:
    """The patterns of every `Host` line, and whether the file includes others (not read here)."""
    patterns: list[str] = []
    includes = False
    for raw in text.splitlines():
        words = raw.replace("=", " ", 1).split()
        if not words:
            continue
        keyword = words[0].lower()
        includes = includes or keyword == "include"
        if keyword == "host":
            patterns += words[1:]
    return patterns, includes


def configured_alias(name: str, config: Path | None = None) -> bool:
    """True when the ssh config may say where ``name`` is (a `Host` pattern other than a bare `*` matches
    it, or the file includes files this does not read): ssh then decides, not the resolver."""
    try:
        text = (config or ssh_config_path()).read_text(errors="replace")
    except OSError:
        return False
    patterns, includes = _host_patterns(text)
    if includes:
        return True
    return any(p != "*" and not p.startswith("!") and fnmatch.fnmatchcase(name, p) for p in patterns)


def unresolvable(hostname: str) -> str | None:
    """The resolver's reason when it knows no such name; None when it resolves or may later (a resolver
    that is down, EAI_AGAIN, is the link's to report)."""
    try:
        socket.getaddrinfo(hostname, None)
    except socket.gaierror as exc:
        if exc.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)):
            return exc.strerror or "unknown name"
    except (OSError, UnicodeError):
        return None
    return None
