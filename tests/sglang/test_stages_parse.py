"""Startup stages read back from their labels (Stage.parse, the inverse of Stage.label), and severities'
labels."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.stages import Severity, Stage


@pytest.mark.parametrize("stage", list(Stage))
def test_every_stage_is_read_back_from_its_label(stage: Stage) -> None:
    assert Stage.parse(stage.label) is stage


def test_labels_are_the_lowercase_names() -> None:
    assert [s.label for s in Stage] == [
        "starting",
        "distributed",
        "loading",
        "loaded",
        "memory",
        "graphs",
        "scheduler_ready",
        "listening",
        "warmup",
        "ready",
        "serving",
    ]
    assert [s.label for s in Severity] == ["info", "warning", "error", "fatal"]


def test_a_label_is_read_in_any_case_and_an_unknown_one_is_refused() -> None:
    assert Stage.parse("Scheduler_Ready") is Stage.SCHEDULER_READY
    assert Stage.parse("READY") is Stage.READY
    with pytest.raises(KeyError):
        Stage.parse("booting")
