"""The stop and relaunch dialogs show the server's whole command line, keys masked, wrapped between
arguments (never inside a flag or its value) at any terminal width; a title the plan had to cut ends in
"…" between two words."""

from __future__ import annotations

import shlex

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from gdnconsole.host import launcher
from gdnconsole.host.launcher import PlanProcess, StopPlan
from gdnconsole.ui.dialogs.confirm import plan_text, processes_text, relaunch_dialog, stop_dialog
from gdnconsole.ui.models.textfit import argument_lines

KEY = "sk-live-123"
ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "/models/Qwen/Qwen3.6-27B-Instruct-FP8",
        "--tp-size", "2", "--host", "127.0.0.1", "--port", "30000", "--mem-fraction-static", "0.85",
        "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "2", "--mamba-scheduler-strategy", "extra_buffer",
        "--api-key", KEY, "--chat-template", "a b c", "--json-model-override-args", '{"rope": 1}']  # fmt: skip


def plan() -> StopPlan:
    title = " ".join(ARGV)[:200]  # what the plan held before: cut mid-flag
    return StopPlan(
        pid=4242, pgid=4242, uptime_s=60.0, argv=ARGV,
        processes=[PlanProcess(4242, title, 60.0), PlanProcess(4250, "sglang::scheduler_TP0", 59.0)],
        untouched=[PlanProcess(6001, launcher._cut_words(" ".join(ARGV), 200), 9.0)],
    )  # fmt: skip


def test_argument_lines_break_only_between_words() -> None:
    words = ["--a", "1", "--bbbb", "two words", "--c"]
    lines = argument_lines(words, 24, 4)
    assert lines == ["--a 1 --bbbb", "    two words --c"]
    assert argument_lines(["x" * 25], 24, 4) == ["x" * 20, "    " + "x" * 5]  # folded, nothing lost


def test_a_cut_title_ends_between_words_with_an_ellipsis() -> None:
    title = launcher._cut_words(" ".join(ARGV), 200)
    assert title.endswith(" …") and len(title) <= 201
    assert (" ".join(ARGV)).startswith(title[:-2]) and " ".join(ARGV)[len(title) - 2] == " "


@pytest.mark.parametrize("width", [76, 92])
def test_the_plan_shows_the_whole_masked_command_line_wrapped_between_arguments(width: int) -> None:
    lines = plan_text(plan(), 30.0, width).plain.splitlines()
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
    server = lines[1 : next(i for i, line in enumerate(lines) if line.startswith("  pid 4250"))]
    assert server[0].startswith("  pid 4242") and all(line.startswith(" " * 14) for line in server[1:])
    masked = [shlex.quote(w) for w in ARGV[:-5]] + ["'<redacted:"]
    assert " ".join(line[14:] for line in server).startswith(" ".join(masked))  # every word, in order
    assert " ".join(line[14:] for line in server).endswith(
        "--chat-template 'a b c' --json-model-override-args '{\"rope\": 1}'"
    )
    assert KEY not in "\n".join(lines)


class DialogApp(App[None]):
    def __init__(self, which: str) -> None:
        super().__init__()
        self.which = which

    def compose(self) -> ComposeResult:
        yield Static("")

    def on_mount(self) -> None:
        if self.which == "stop":
            self.push_screen(stop_dialog("ct129", plan(), 30.0))
        else:
            self.push_screen(relaunch_dialog("ct129", "final", plan(), ["~ --tp-size 2 → 4"], 30.0))


@pytest.mark.parametrize("which", ["stop", "relaunch"])
@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_the_dialogs_wrap_between_arguments_at_every_width(which: str, size: tuple[int, int]) -> None:
    app = DialogApp(which)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        body = app.screen.query_one("#confirm-body-0", Static)
        shown = str(body.render())
        assert KEY not in shown
        width = body.content_region.width
        lines = shown.splitlines()
        assert all(len(line) <= width for line in lines)
        joined = " ".join(line.strip() for line in lines)
        for pair in ("--api-key '<redacted:", "--port 30000", "--speculative-eagle-topk 1", "--tp-size 2"):
            assert pair in joined, pair
        assert "left alone:" in joined and "…" in joined  # the look-alike's cut title, marked


def test_the_adopt_question_wraps_each_process_and_escapes_it() -> None:
    hostile = " ".join([*ARGV[:-4], "--served-model-name", "x\x1b]0;pwned\x07"])
    text = processes_text([(7001, hostile), (7002, "sglang::scheduler_TP0")], 76).plain
    lines = text.splitlines()
    assert all(len(line) <= 76 for line in lines) and "\x1b" not in text and "\x07" not in text
    assert lines[0].startswith("  pid 7001") and lines[-1].startswith("  pid 7002")
    assert all(line.startswith(" " * 14) for line in lines[1:-1])
