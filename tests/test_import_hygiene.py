"""What importing a piece loads, at run time: the promise beside the static layer contracts (lint-imports
sees the import graph, not which of its edges are deferred into functions).

Each check runs in a fresh ``python -I`` (no working directory, no PYTHON* variables) and reads
``sys.modules`` there, so no test order and no module another test imported can hide a load. Each also
checks that the names it watches are modules that exist: a misspelt name would pass for ever."""

from __future__ import annotations

import importlib.util
import json
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

FLAG_TABLES = "gdnconsole.sglang.flagtables"
# The rule tables and what builds them (rules.py reads ruletables, which reads coretables).
RULE_TABLES = ("gdnconsole.sglang.rules", "gdnconsole.sglang.ruletables", "gdnconsole.sglang.coretables")


def loaded_after(code: str, watched: tuple[str, ...], cwd: Path, env: dict[str, str] | None = None) -> object:
    """Run ``code`` in a fresh interpreter, then return what it printed last as JSON; ``code`` may call
    ``loaded()`` for which of ``watched`` are in ``sys.modules`` at that point."""
    for name in watched:
        assert importlib.util.find_spec(name) is not None, f"{name} is not a module: the check would pass"
    prelude = (
        f"import json, sys\ndef loaded():\n    return [m for m in {list(watched)!r} if m in sys.modules]\n"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-c", prelude + textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_importing_the_session_loads_no_ssh_no_http_and_no_flag_or_rule_tables(tmp_path: Path) -> None:
    # prometheus_client's parser: with the first serving poll, not with the session
    watched = ("asyncssh", "httpx", "prometheus_client", FLAG_TABLES, *RULE_TABLES)
    code = "import gdnconsole.host.session\nprint(json.dumps(loaded()))"
    assert loaded_after(code, watched, tmp_path) == []


DASHBOARD = """
import asyncio
from pathlib import Path
from gdnconsole.config import hosts as config_hosts
from gdnconsole.host.session import HostSession
from gdnconsole.ui.app import DashboardApp

path = Path("hosts.toml")
path.write_text('[hosts.ct129]\\nlocal = true\\n[hosts.ct129.profiles.p]\\nmodel = "Qwen/Qwen3.6-27B"\\ntp = 2\\n')
session = HostSession(config_hosts.load(path).hosts["ct129"], mirror=Path("mirror.log"))
gpus = [{"index": i, "uuid": f"GPU-{i}", "name": "NVIDIA RTX A6000", "total_mib": 49140,
         "compute_capability": "8.6"} for i in (0, 1)]
session.handle({"type": "hello", "hostname": "ct129", "python": "3.11.7", "sglang": "0.5.11",
                "nvml": {"source": "pynvml", "reason": None}, "gpus": gpus})
app = DashboardApp([session], start=False, config_path=str(path.resolve()))
seen = {}

async def main():
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        seen["first"] = [type(app.screen).__name__, loaded()]
        await pilot.press("e")
        for _ in range(200):  # the form is pushed by a handler of the key: wait for it, not for a time
            if type(app.screen).__name__ == "FlagFormScreen":
                break
            await pilot.pause(0.05)
        seen["form"] = [type(app.screen).__name__, loaded()]

asyncio.run(main())
print(json.dumps(seen))
"""


def test_the_dashboard_loads_the_flag_tables_only_when_the_flag_form_opens(tmp_path: Path) -> None:
    """Up to its first screen on a connected host, nothing of the flag or rule tables; `e` opens the form,
    which loads them (which also shows that this check sees a load)."""
    watched = (FLAG_TABLES, *RULE_TABLES)
    seen = loaded_after(DASHBOARD, watched, tmp_path)
    assert seen == {"first": ["DashboardScreen", []], "form": ["FlagFormScreen", list(watched)]}


def run_entry(argv: list[str]) -> str:
    """``gdnconsole ARGV`` as entry.py runs it, in the child; what it wrote is not the point."""
    return f"""
import contextlib, io
sys.argv = ["gdnconsole", *{argv!r}]
from gdnconsole.entry import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(json.dumps(loaded()))
"""


def test_the_help_loads_no_textual(tmp_path: Path) -> None:
    assert loaded_after(run_entry(["--help"]), ("textual", "gdnconsole.ui"), tmp_path) == []


def test_a_host_on_the_command_line_goes_past_click(tmp_path: Path) -> None:
    """entry.py's promise: `gdnconsole HOST` never loads click (here off a terminal, so it stops with its
    error where the screen would open; tests/cli/test_entry.py follows it up to the screen)."""
    config = tmp_path / "hosts.toml"
    config.write_text('[hosts.ct129]\nssh = "root@ct129"\n')
    env = {"GDNCONSOLE_CONFIG": str(config), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    assert loaded_after(run_entry(["ct129"]), ("click",), tmp_path, env) == []


SCREENS = tuple(
    f"gdnconsole.ui.screens.{m.name}"
    for m in pkgutil.iter_modules([str(Path(__file__).parent.parent / "gdnconsole/ui/screens")])
)
OPENED_BY_A_KEY = tuple(
    f"gdnconsole.ui.screens.{name}"
    for name in ("flagform", "journal", "promptpanel", "tune", "launchcontrol")
)


def test_listing_every_screen_s_keys_loads_no_screen(tmp_path: Path) -> None:
    """The keymap's check of a [keys] table, its merge, and every help page's sections read the registry
    (ui/screenlist.py): no screen module, so neither the flag tables."""
    code = """
    from gdnconsole.ui import keymap, screenlist
    keymap.screens()
    assert keymap.problems({"dash.tune": "U", "tune.close": "f9"}) == []
    keymap.merged({"dash.tune": "U"}, "dashboard")
    for item in screenlist.SCREENS:
        screenlist.help_sections(item.name, {"dash.tune": "U"}, [], readonly=True)
    print(json.dumps(loaded()))
    """
    assert loaded_after(code, (*SCREENS, FLAG_TABLES), tmp_path) == []


HELP_AND_PALETTE = """
import asyncio
from pathlib import Path
from gdnconsole.config.hosts import Host
from gdnconsole.host.session import HostSession
from gdnconsole.ui.app import DashboardApp

app = DashboardApp([HostSession(Host(name="ct129", ssh=None, local=True), mirror=Path("m.log"))], start=False)
seen = {}

async def main():
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("question_mark")
        for _ in range(200):  # help is pushed by a handler of the key: wait for it, not for a time
            if type(app.screen).__name__ == "HelpScreen":
                break
            await pilot.pause(0.05)
        seen["help"] = [type(app.screen).__name__, len(app.screen.sections), loaded()]
        await pilot.press("escape")
        await pilot.pause()
        commands = [c.title for c in app.get_system_commands(app.screen)]
        seen["palette"] = ["Tune speculative flags" in commands, loaded()]

asyncio.run(main())
print(json.dumps(seen))
"""


def test_the_dashboard_s_help_and_palette_load_no_screen_behind_a_key(tmp_path: Path) -> None:
    """Help lists every screen's keys, and the palette the dashboard's, without loading the screens they
    open (nor, with the flag form, the flag tables)."""
    seen = loaded_after(HELP_AND_PALETTE, (*OPENED_BY_A_KEY, FLAG_TABLES), tmp_path)
    assert isinstance(seen, dict) and seen["palette"] == [True, []]
    assert seen["help"][0] == "HelpScreen" and seen["help"][1] > 10 and seen["help"][2] == []


def test_the_dashboard_s_first_frame_loads_no_serving_parser(tmp_path: Path) -> None:
    """The serving strip is on every tab; the figures' modules and prometheus_client load with the first
    poll (host/servingwatch.py), not before the dashboard paints."""
    code = (
        "import gdnconsole.ui.screens.dashboard, gdnconsole.ui.widgets.servingstrip\n"
        "print(json.dumps(loaded()))"
    )
    watched = ("prometheus_client", "gdnconsole.sglang.servingfigures", "gdnconsole.host.servingfeed")
    assert loaded_after(code, watched, tmp_path) == []
