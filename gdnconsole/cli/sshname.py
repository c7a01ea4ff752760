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


# Keywords under which ssh reaches a host by another name or through another host: with them, whether
# this machine resolves the name says nothing.
ROUTING = frozenset({"hostname", "proxyjump", "proxycommand"})


def _blocks(text: str) -> tuple[list[tuple[list[str], set[str]]], bool]:
    """Each `Host` block's patterns and keywords, and whether the file has what this does not read
    (`Include`, `Match`)."""
    blocks: list[tuple[list[str], set[str]]] = [(["*"], set())]  # lines before any Host apply to all
    unread = False
    for raw in text.splitlines():
        words = raw.strip().replace("=", " ", 1).split()
        if not words or words[0].startswith("#"):
            continue
        keyword = words[0].lower()
        if keyword == "host":
            blocks.append((words[1:], set()))
        elif keyword in ("include", "match"):
            unread = True
        else:
            blocks[-1][1].add(keyword)
    return blocks, unread


def _matches(name: str, patterns: list[str]) -> bool:
    positive = any(fnmatch.fnmatchcase(name, p) for p in patterns if not p.startswith("!"))
    return positive and not any(fnmatch.fnmatchcase(name, p[1:]) for p in patterns if p.startswith("!"))


def configured_alias(name: str, config: Path | None = None) -> bool:
    """True when the ssh config may say where ``name`` is: a `Host` block for it (other than a bare
    `*`), a block that matches it and routes it (HostName, ProxyJump, ProxyCommand: a bastion reaches
    names this machine cannot resolve), or parts of the file this does not read. ssh decides then."""
    try:
        text = (config or ssh_config_path()).read_text(errors="replace")
    except OSError:
        return False
    blocks, unread = _blocks(text)
    if unread:
        return True
    return any(
        _matches(name, patterns) and (patterns != ["*"] or bool(keywords & ROUTING))
        for patterns, keywords in blocks
    )


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
