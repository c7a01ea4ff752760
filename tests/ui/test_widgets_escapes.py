"""The widgets that show what a log, a host, a server or a file said, as text: the timeline's fatal
summary, a burst's errors, the journal screen's attempt and the host picker's lines keep every escape
visible (the real terminal's view of them: tests/terminal/test_escapes.py)."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.chat.burst import BurstResult
from gdnconsole.chat.model import ChatResult
from gdnconsole.config import hosts as config_hosts
from gdnconsole.host.journal import Attempt, Fatal
from gdnconsole.sglang.tracker import StageTracker
from gdnconsole.ui import theme
from gdnconsole.ui.screens.hostpicker import HostPickerScreen
from gdnconsole.ui.screens.journal import attempt_row, detail_text
from gdnconsole.ui.tones import Tones
from gdnconsole.ui.widgets.burstview import errors_text
from gdnconsole.ui.widgets.timeline import render_timeline, timeline_data
from tests.sglang.test_tracker import CRASH_TAIL, CT129_STARTUP

HOSTILE = "boom \x1b]0;PWNED\x07 \x1b[2J \x9b2J \u202edesrever"
SHOWN = "boom ^[]0;PWNED^G ^[[2J \\x9b2J \\u202edesrever"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def test_the_timeline_shows_a_fatal_summary_s_escapes() -> None:
    tracker = StageTracker()
    crash = CRASH_TAIL.replace("Exception: Capture cuda graph failed:", f"Exception: {HOSTILE}:")
    for line in (CT129_STARTUP + crash).split("\n"):
        tracker.feed(line)
    _, palette = theme.load()
    text = render_timeline(timeline_data(tracker.startups), palette).plain
    assert not [c for c in RAW if c in text], repr(text)
    assert f"Exception: {SHOWN}" in text.replace("\n", " ")


def test_a_burst_s_errors_show_their_escapes() -> None:
    burst = BurstResult(3, 10.0, [ChatResult(error=f"HTTP 500: {HOSTILE}") for _ in range(3)])
    loaded, _palette = theme.load()
    text = errors_text(burst, Tones.of_theme(loaded)).plain
    assert not [c for c in RAW if c in text], repr(text)
    assert f"HTTP 500: {SHOWN}" in text


def test_a_damaged_journal_s_attempt_is_listed_and_detailed_escaped() -> None:
    """A journal read back may be damaged or written by anyone: its strings are data too."""
    attempt = Attempt(
        number=3,
        time=0.0,
        host="box",
        profile="p\x1b]0;PWNED\x07",
        argv=["python", "-m", "sglang.launch_server", "--served-model-name", "x\x1b[2J"],
        env={"NOTE": "a\u202eb"},
        stages={"graphs\x1b[2J": 1.0},
        outcome="crashed",
        fatal=Fatal(9, HOSTILE),
        stage="graphs\x9b2J",
        warnings=["warn \x1b]0;W\x07"],
    )
    loaded, _palette = theme.load()
    tones = Tones.of_theme(loaded)
    row = " | ".join(cell.plain for cell in attempt_row(attempt, tones))
    detail = detail_text(attempt, 100, tones).plain
    for text in (row, detail):
        assert not [c for c in RAW if c in text], repr(text)
    assert "p^[]0;PWNED^G" in row and "graphs\\x9b2J" in row and SHOWN in row
    assert "$'x\\x1b[2J'" in detail and "NOTE=$'a\\u202eb'" in detail and "warn ^[]0;W^G" in detail


def test_the_host_picker_shows_a_simulated_gpu_s_reversed_name_escaped(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[hosts.box]\nsimulate = { gpu_name = "RTX\\u202eevil", sglang = "0.5.11\\u200b" }\n')
    picker = HostPickerScreen(list(config_hosts.load(hosts).hosts.values()))
    text = picker._prompt(0).plain
    assert "RTX\\u202eevil" in text and "0.5.11\\u200b" in text and "\u202e" not in text
