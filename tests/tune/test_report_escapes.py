"""A sweep's exports and tables show what the host said, never send it: a fatal summary, a rule message,
a GPU name and a version holding an OSC title, a screen clear, a C1 CSI or a bidi override are written
escaped into the Markdown, the CSV and the text table (someone will `cat` them in a terminal)."""

from __future__ import annotations

import csv
import io

from gdnconsole.tune import report
from gdnconsole.tune.grid import Combo
from gdnconsole.tune.results import BatchFigures, ComboResult, Identity, set_speedups
from gdnconsole.tune.sweep import Sweep

EVIL = "boom \x1b]0;PWNED\x07 \x1b[2J \x9b2J \u202edesrever | pipe"
SHOWN = "boom ^[]0;PWNED^G ^[[2J \\x9b2J \\u202edesrever"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def figures(batch: int, tokens_per_s: float) -> BatchFigures:
    return BatchFigures(batch, 4, tokens_per_s, None, 6.0, 7.0, 8.0, None, None, None)


def hostile_sweep() -> Sweep:
    identity = Identity(
        "simbox", "0.5.11\x1b]0;V\x07", "Qwen/Qwen3.6-27B", ["RTX\x1b[2J"], "chat@abc", "f00", 64
    )
    sweep = Sweep(identity, (1,))
    sweep.results = [
        ComboResult(None, "measured", by_batch={1: figures(1, 400.0)}),
        ComboResult(Combo(2, 1, 3), "crashed", fatal=EVIL),
        ComboResult(Combo(2, 2, 300), "rejected", rule=("spec.topk", EVIL)),
    ]
    set_speedups(sweep.baseline, sweep.results)
    return sweep


def clean(text: str) -> None:
    assert not [c for c in RAW if c in text], repr(text)


def test_the_markdown_shows_the_host_s_words_escaped() -> None:
    text = report.markdown(hostile_sweep())
    clean(text)
    # Shown, then made table-safe: the escapes' backslashes doubled, the pipe escaped.
    assert SHOWN.replace("\\", "\\\\") + " \\| pipe" in text
    assert "SGLang 0.5.11^[]0;V^G" in text and "RTX^[[2J" in text


def test_the_csv_shows_the_host_s_words_escaped() -> None:
    text = report.csv_text(hostile_sweep())
    clean(text)
    rows = list(csv.DictReader(io.StringIO(text)))
    crashed = next(r for r in rows if r["status"] == "crashed")
    assert crashed["fatal"].startswith(SHOWN) and crashed["sglang"] == "0.5.11^[]0;V^G"
    rejected = next(r for r in rows if r["status"] == "rejected")
    assert rejected["rule"].startswith(f"spec.topk: {SHOWN}")


def test_the_text_table_shows_the_host_s_words_escaped() -> None:
    text = report.text_table(hostile_sweep())
    clean(text)
    assert SHOWN in text
