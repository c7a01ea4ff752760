"""The journal screen's detail says what an attempt's server did while the console polled it (issue 28:
"each launch attempt in the journal gains its serving summary"); what was not measured is "—"."""

from __future__ import annotations

from gdnconsole.host.journal import Attempt, Served
from gdnconsole.ui import theme
from gdnconsole.ui.screens.journal import detail_text
from gdnconsole.ui.tones import Tones

ARGV = ["python", "-m", "sglang.launch_server", "--model-path", "m"]


def detail(served: Served | None) -> str:
    attempt = Attempt(2, 0.0, "box", "final", ARGV, {}, outcome="verified", served=served)
    loaded, _palette = theme.load()
    return detail_text(attempt, 100, Tones.of_theme(loaded)).plain


def test_the_load_line_sits_after_the_stages() -> None:
    text = detail(
        Served(peak_running=12, ttft_p90_s=0.41, mean_tokens_s=1163.4, accept_length=2.914, polls=240)
    )
    lines = text.splitlines()
    served = next(i for i, line in enumerate(lines) if line.startswith("load "))
    assert lines[served - 1].startswith("stage")
    assert lines[served].split(None, 1)[1] == (
        "peak 12 running · TTFT p90 410 ms · 1163 tok/s mean · accept 2.91 · 240 polls"
    )


def test_what_was_not_measured_is_a_dash_never_zero() -> None:
    text = detail(Served(peak_running=None, ttft_p90_s=None, mean_tokens_s=None, accept_length=None, polls=1))
    assert "peak — running · TTFT p90 — · — tok/s mean · accept — · 1 poll" in text


def test_an_attempt_never_polled_has_no_load_line() -> None:
    assert not [line for line in detail(None).splitlines() if line.startswith("load ")]
