"""profilerules.model_of: the model SGLang loads for a command line, whose config.json the check wants
(issue 27): the last --model-path or --model, as argparse keeps it."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.profilerules import model_of


@pytest.mark.parametrize(
    ("args", "model"),
    [
        (["--model-path", "Qwen/Qwen3-8B", "--tp", "2"], "Qwen/Qwen3-8B"),
        (["--model", "Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),  # the alias
        (["--model-path=/models/m"], "/models/m"),
        (["--model-path", "a", "--model", "b"], "b"),  # the last one wins, whichever name it has
        (["--model", "a", "--model-path", "b"], "b"),
    ],
)
def test_the_last_model_flag_names_the_model(args: list[str], model: str) -> None:
    assert model_of(args) == model


@pytest.mark.parametrize("args", [[], ["--tp", "2"], ["--model-path"]])
def test_no_model_reads_as_empty(args: list[str]) -> None:
    assert model_of(args) == ""
