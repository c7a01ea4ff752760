"""Opening the dashboard: what `gdnconsole HOST...` does once its arguments are known. Nothing here
imports click, so the everyday command can open the screen without loading it (see entry.py)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Collection, Sequence
from typing import Any

from gdnconsole.cli.common import fail, host_named, load_config
from gdnconsole.config.hosts import Config, ConfigError


def interactive() -> bool:
    """A terminal to draw the dashboard on (else: print, for pipes and scripts)."""
    return sys.stdout.isatty()


def theme_option(option: str | None, cfg: Config) -> dict[str, Any]:
    """The theme to open the UI in (``--theme``, else the one last picked in the palette, else
    ``[console] theme``, else the default), the user's themes folder, and how to remember a theme picked
    in the palette, as keyword arguments of the run_* functions; an unknown name exits 2."""
    from gdnconsole.ui import pickedtheme, theme

    try:
        name = theme.select(option, cfg)
    except (theme.UnknownThemeError, ConfigError) as exc:
        fail(str(exc))
    remember = functools.partial(pickedtheme.remember, over=cfg.console.theme)
    return {"theme_name": name, "user_themes": theme.user_themes_dir(cfg), "remember": remember}


def console_options(cfg: Config, readonly: bool) -> dict[str, Any]:
    """The dashboard's keymap (the [keys] table checked against the screens' bindings: a problem exits 2
    naming the file, line and key), bell and read-only mode (the flag, else [console] readonly)."""
    from gdnconsole.ui import keymap

    try:
        keys = keymap.checked(cfg, "dashboard")
    except ConfigError as exc:
        fail(str(exc))
    return {"keymap": keys, "bell": cfg.console.bell, "readonly": readonly or cfg.console.readonly}


def open_hosts(
    names: Sequence[str],
    theme: str | None = None,
    readonly: bool = False,
    commands: Collection[str] | None = None,
) -> None:
    """The dashboard on HOST... (one pane per host, duplicates once); a bad name or file exits 2, and so
    does a command line with no terminal to draw on (a pipe would get escape codes, and no end).
    ``commands``: the main group's command names (entry.py's, where click is not loaded)."""
    cfg = load_config(commands)
    themed = theme_option(theme, cfg)
    options = console_options(cfg, readonly)
    hosts = [host_named(name, cfg, commands) for name in dict.fromkeys(names)]
    if not interactive():  # after the checks: a wrong name or theme is said first
        fail("the dashboard needs a terminal; for scripts: `gdnconsole status HOST`")
    from gdnconsole.ui.app import run_dashboard  # Textual loads only when a screen is shown

    # The flag form saves profiles back into the hosts file the hosts came from.
    run_dashboard(hosts, config_path=str(cfg.path) if cfg.exists else "", **themed, **options)
