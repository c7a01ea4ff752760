"""A command line SGLang's argument parser refuses: the server never starts, and that is fatal."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.summary import summary, track
from gdnconsole.sglang.tracker import StageTracker

USAGE = (
    "usage: sglang serve [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH]\n"
    "                    [--host HOST] [--port PORT] [--tp-size TP_SIZE]\n"
)


@pytest.mark.parametrize(
    "refusal",
    [
        "sglang serve: error: argument --tp-size/--tensor-parallel-size: invalid int value: 'two'",
        "sglang serve: error: unrecognized arguments: --speculative-num-stpes 3",
        "launch_server.py: error: the following arguments are required: --model-path/--model",
    ],
)
def test_an_argparse_refusal_is_the_fatal_error_of_a_startup_that_never_began(refusal: str) -> None:
    tracker = StageTracker()
    for number, text in enumerate((USAGE + refusal).splitlines(), 1):
        tracker.feed(text, number)
    startup = tracker.current
    assert startup is not None and startup.fatal is not None
    assert startup.fatal.summary == refusal and startup.fatal.line == 3
    assert not startup.ready


def test_summarize_names_the_refusal_and_calls_it_an_sglang_log() -> None:
    text = USAGE + "sglang serve: error: unrecognized arguments: --foo\n"
    result = summary(track(enumerate(text.splitlines(), 1)), file="serve.log", lines=3)
    assert result["sglang"] and "unrecognized arguments: --foo" in str(result["fatal"])


def test_another_programs_error_line_is_not_taken_for_sglangs() -> None:
    tracker = StageTracker()
    tracker.feed("curl: error: could not resolve host", 1)
    assert tracker.current is None or tracker.current.fatal is None
