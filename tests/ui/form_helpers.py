"""Helpers for the flag form's tests: a commented hosts file, a session with a fixed hello, reading what
the form shows."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, Static

from gdnconsole.config import hosts as config_hosts
from gdnconsole.host.session import HostSession
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.screens.flagform import FlagFormScreen
from tests.ui.dashboard_helpers import fixed_clock, hello, on_screen, until

HOSTS = """\
# ct129: the box in the incident note. Keep this comment.
[hosts.ct129]
local = true
log = "sglang_serve.log"
default_profile = "topk-only"

# The attempt that failed: topk and draft tokens without num steps.
[hosts.ct129.profiles.topk-only]
model = "Qwen/Qwen3.6-27B"
tp = 2
port = 30000  # the port the chat client uses
args = ["--mamba-scheduler-strategy", "extra_buffer"]
env = { SGLANG_ENABLE_SPEC_V2 = "1" }
speculative = { algorithm = "NEXTN", eagle_topk = 1, num_draft_tokens = 2 }

# What finally worked.
[hosts.ct129.profiles.final]
model = "Qwen/Qwen3.6-27B"
tp = 2
port = 30000
args = ["--mamba-scheduler-strategy", "extra_buffer"]
env = { SGLANG_ENABLE_SPEC_V2 = "1" }
speculative = { algorithm = "NEXTN", num_steps = 1, eagle_topk = 1, num_draft_tokens = 2 }
# trailing comment
"""


def hosts_file(tmp_path: Path) -> Path:
    path = tmp_path / "hosts.toml"
    path.write_text(HOSTS, encoding="utf-8")
    return path


def form_session(tmp_path: Path, path: Path, sglang: str = "0.5.11") -> HostSession:
    """ct129 from the file, connected as far as the form cares: its SGLang version and GPUs."""
    host = config_hosts.load(path).hosts["ct129"]
    session = HostSession(host, mirror=tmp_path / "mirror.log")
    message = hello("ct129")
    message["sglang"] = sglang
    for gpu in message["gpus"]:
        gpu["compute_capability"] = "8.6"
    session.handle(message)
    return session


def form_app(session: HostSession, path: Path | None) -> DashboardApp:
    return DashboardApp([session], start=False, clock=fixed_clock, config_path=str(path or ""))


def form_of(app: DashboardApp) -> FlagFormScreen:
    screen = app.screen
    assert isinstance(screen, FlagFormScreen), screen
    return screen


async def open_form(pilot: Pilot[None]) -> FlagFormScreen:
    await pilot.press("e")
    assert await until(pilot, lambda: on_screen(pilot.app, FlagFormScreen), 5)
    return form_of(pilot.app)  # type: ignore[arg-type]


def shown(form: FlagFormScreen, selector: str) -> str:
    return str(form.query_one(selector, Static).render())


def command(form: FlagFormScreen) -> str:
    return shown(form, "#ff-command")


def field_error(form: FlagFormScreen, name: str) -> str:
    """The error under a field ("" when its row is not marked)."""
    if not form.query_one(f"#ff-row-{name}").has_class("-invalid"):
        return ""
    return shown(form, f"#ff-err-{name}")


async def type_into(pilot: Pilot[None], form: FlagFormScreen, name: str, text: str) -> None:
    """Replace a field's text the way a user would: focus, clear, type."""
    field = form.query_one(f"#ff-{name}", Input)
    field.focus()
    field.value = ""
    await pilot.press(*text) if text else await pilot.pause()
