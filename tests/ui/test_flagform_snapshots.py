"""How the flag form looks with a rule error on its field, and the relaunch confirmation with its flag
diff (fixed content: a hosts file, a fixed hello, a fixed stop plan). Regenerate with
`pytest tests/ui --snapshot-update`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static

from gdnconsole.host.journal import flag_diff
from gdnconsole.host.launcher import PlanProcess, StopPlan
from gdnconsole.ui.dialogs.confirm import relaunch_dialog
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, until
from tests.ui.form_helpers import field_error, form_app, form_session, hosts_file, open_form

SnapCompare = Callable[..., bool]
SMALL = (80, 24)
OLD = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", "--tp-size", "2",
       "--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "4", "--speculative-num-steps", "3",
       "--mamba-scheduler-strategy", "no_buffer"]  # fmt: skip
NEW = [*OLD[:9], "--speculative-eagle-topk", "1", "--speculative-num-steps", "1",
       "--speculative-num-draft-tokens", "2", "--mamba-scheduler-strategy", "extra_buffer"]  # fmt: skip


def relaunch_plan() -> StopPlan:
    """The stop half of relaunching OLD: its process group, and a notebook kernel it leaves alone."""
    return StopPlan(
        pid=4242, pgid=4242, start_time=None, uptime_s=754.0, argv=OLD,
        processes=[PlanProcess(4242, " ".join(OLD), 754.0),
                   PlanProcess(4250, "sglang::scheduler_TP0", 751.0),
                   PlanProcess(4251, "sglang::scheduler_TP1", 751.0)],
        untouched=[PlanProcess(6001, "python3 my_notebook_kernel.py", 86400.0)],
    )  # fmt: skip


def form_with_error(tmp_path: Path) -> tuple[App[None], Callable[[Pilot[Any]], Any]]:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        form = await open_form(pilot)
        assert await until(pilot, lambda: bool(field_error(form, "eagle_topk")), 5)
        form.query_one("#ff-model").focus()
        await settle(pilot)

    return app, run_before  # type: ignore[return-value]


def test_form_with_a_rule_error(snap_compare: SnapCompare, tmp_path: Path) -> None:
    app, run_before = form_with_error(tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_form_with_a_rule_error_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    app, run_before = form_with_error(tmp_path)
    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


class DialogApp(App[None]):
    """The relaunch confirmation over a plain screen, from a fixed plan and diff."""

    def compose(self) -> ComposeResult:
        yield Static("ct129 dashboard")

    def on_mount(self) -> None:
        self.push_screen(relaunch_dialog("ct129", "final", relaunch_plan(), flag_diff(OLD, NEW), 30.0))


def test_relaunch_confirmation_with_its_diff(snap_compare: SnapCompare) -> None:
    assert snap_compare(DialogApp(), terminal_size=SIZE)
