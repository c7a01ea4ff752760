"""What every `gdnconsole` command shares: its exit codes, its one-line errors, and finding a host."""

from __future__ import annotations

import sys
from typing import NoReturn

from gdnconsole.config import hosts as config_hosts
from gdnconsole.config import writer as config_writer
from gdnconsole.config.hosts import Config, ConfigError, Host

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3

THEME_HELP = "Colour theme (shipped: gdn-dark, gdn-light, gdn-high-contrast; or one of yours)."


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """One line on stderr, no traceback, the given exit code."""
    print(f"gdnconsole: error: {message}", file=sys.stderr)
    sys.exit(code)


def load_config() -> Config:
    try:
        return config_hosts.load()
    except ConfigError as exc:
        fail(str(exc))


def host_named(name: str, cfg: Config | None = None) -> Host:
    """A configured host, the built-in `demo`, or an ssh target / alias; a bad name or file exits 2."""
    try:
        return config_writer.resolve_host(cfg or load_config(), name)
    except ConfigError as exc:
        fail(str(exc))
