"""The timeline's stage marks: passed, current, failed, and passed without a line that shows it."""

from __future__ import annotations

from gdnconsole.sglang.tracker import StageTracker
from gdnconsole.ui import theme
from gdnconsole.ui.widgets.timeline import render_timeline, timeline_data

SITE = "/usr/lib/python3/site-packages/sglang/srt"


def marks(text: str) -> dict[str, str]:
    tracker = StageTracker()
    for line in text.split("\n"):
        tracker.feed(line)
    _, palette = theme.load()
    rendered = render_timeline(timeline_data(tracker.startups), palette).plain
    out: dict[str, str] = {}
    for row in rendered.split("\n"):
        parts = row.split()
        if len(parts) >= 2 and len(parts[0]) == 1:
            out[parts[1]] = parts[0]
    return out


def test_a_failed_stage_is_marked_failed_not_running() -> None:
    got = marks(
        "[2026-11-30 09:00:02 TP0] Init torch distributed begin.\n"
        "[2026-11-30 09:00:03 TP0] Load weight begin. avail mem=46.93 GB\n"
        "[2026-11-30 09:00:43 TP0] Load weight end. elapsed=40.12 s, type=X, avail mem=20.87 GB, mem usage=25.64 GB.\n"
        "[2026-11-30 09:00:44 TP0] Memory pool end. avail mem=16.44 GB\n"
        "[2026-11-30 09:00:46 TP0] Capture cuda graph begin. This can take up to several minutes.\n"
        "[2026-11-30 09:00:49 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        "Exception: Capture cuda graph failed: CUDA out of memory."
    )
    assert got["graphs"] == "✖" and got["memory"] == "✓" and got["distributed"] == "✓"
    assert "▶" not in got.values()


def test_stages_an_excerpt_never_showed_are_not_ticked() -> None:
    got = marks(
        f'  File "{SITE}/model_executor/model_runner.py", line 207, in init_memory_pool\n'
        "RuntimeError: NPU out of memory. Tried to allocate 98.71 GiB"
    )
    assert got["memory"] == "✖"
    assert got["distributed"] == got["loading"] == got["loaded"] == "·"  # passed, not seen
