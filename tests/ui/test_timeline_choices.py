"""The timeline says what SGLang chose (kernels, backends), who failed when no rank did, and the known fix
for a known failure: what an operator otherwise reads only in the raw log."""

from __future__ import annotations

from gdnconsole.sglang.tracker import GRAPH_OOM_HINT, StageTracker
from gdnconsole.ui import theme
from gdnconsole.ui.widgets.timeline import render_timeline, timeline_data


def shown(text: str) -> str:
    tracker = StageTracker()
    for line in text.split("\n"):
        tracker.feed(line)
    _, palette = theme.load()
    return render_timeline(timeline_data(tracker.startups), palette).plain


GDN = """\
[2026-11-30 09:00:00] Attention backend not specified. Use flashinfer backend by default.
[2026-11-30 09:00:41 TP0] Linear attention kernel backend: decode=triton, prefill=triton, verify=triton
[2026-11-30 09:00:41 TP0] Using hybrid linear attention backend for hybrid GDN models.
[2026-11-30 09:00:41 TP0] GDN kernel dispatcher: decode=TritonGDNKernel, extend=TritonGDNKernel, verify=TritonGDNKernel packed_decode=True"""


def test_the_timeline_lists_the_kernels_and_backends_in_sglangs_order() -> None:
    text = shown(GDN)
    block = text[text.index("\nkernels\n") :].split("\n")[2:6]
    assert block == [
        " attention   flashinfer",
        " linear attn decode=triton, prefill=triton, verify=triton",
        " GDN backend hybrid",
        " GDN kernels decode=TritonGDNKernel, extend=TritonGDNKernel, verify=TritonGDNKernel packed_decode=True",
    ]


def test_a_startup_that_chose_nothing_yet_shows_no_kernels() -> None:
    assert "kernels" not in shown("[2026-11-30 09:00:02 TP0] Init torch distributed begin.")


def test_kernel_text_from_the_log_is_shown_not_obeyed() -> None:
    text = shown("[2026-11-30 09:00:41 TP0] GDN kernel dispatcher: decode=\x1b]0;pwned\x07X")
    assert "\x1b" not in text and "\x07" not in text


def test_a_cuda_graph_oom_shows_the_known_fixes() -> None:
    text = shown(
        "[2026-11-30 09:00:46 TP0] Capture cuda graph begin. This can take up to several minutes.\n"
        "[2026-11-30 09:00:49 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB."
    )
    assert text.rstrip().endswith(GRAPH_OOM_HINT)


def test_a_collective_hang_and_a_rankless_scheduler_are_named() -> None:
    hang = shown(
        "\n".join(
            f"[2025-03-09 00:57:15 TP{r}] Watchdog timeout (self.watchdog_timeout=300)" for r in range(3)
        )
    )
    assert "\nall 3 ranks in serving\n" in hang
    alone = shown(
        "[2025-01-01 10:00:06] Scheduler hit an exception: Traceback (most recent call last):\nRuntimeError: boom"
    )
    assert "\nscheduler in starting\n" in alone  # no line said how far it got
