"""A bare AssertionError at argument processing, explained by the flag rule that foretold it."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.fatalrule import explained, foretold, is_bare_assertion, server_flags
from gdnconsole.sglang.stages import Stage

TOPK_ONLY = [
    "--model-path",
    "Qwen/Qwen3.6-27B",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-eagle-topk",
    "4",
]
FINE = [
    "--model-path",
    "Qwen/Qwen3.6-27B",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
]


@pytest.mark.parametrize(
    ("argv", "flags"),
    [
        (["python3", "-m", "sglang.launch_server", "--tp", "2"], ["--tp", "2"]),
        (["/opt/venv/bin/sglang", "serve", "--tp", "2"], ["--tp", "2"]),
        (["sglang", "serve", "--tp", "2"], ["--tp", "2"]),  # found on PATH
        (["-m", "sglang.launch_server", "--tp", "2"], ["--tp", "2"]),  # the interpreter left off
        (["--tp", "2"], ["--tp", "2"]),
        (["python3", "serve.py", "--tp", "2"], ["python3", "serve.py", "--tp", "2"]),  # not SGLang's entry
    ],
)
def test_the_server_flags_of_a_command_line(argv: list[str], flags: list[str]) -> None:
    assert server_flags(argv) == flags


@pytest.mark.parametrize(
    ("summary", "bare"),
    [("AssertionError", True), ("AssertionError: no_buffer only supports page_size=1.", True),
     ("  AssertionError ", True), ("RuntimeError: AssertionError", False), ("AssertionErrors", False)],
)  # fmt: skip
def test_what_a_bare_assertion_is(summary: str, bare: bool) -> None:
    assert is_bare_assertion(summary) is bare


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_topk_without_steps_is_the_rule_behind_the_assertion(version: str) -> None:
    rule = foretold(
        "AssertionError", Stage.STARTING, ["python3", "-m", "sglang.launch_server", *TOPK_ONLY], version
    )
    assert rule is not None and rule.id == "spec.topk_without_steps" and rule.raises == "AssertionError"
    text = explained("AssertionError", Stage.STARTING, TOPK_ONLY, version)
    assert text == f"AssertionError — the flags break rule spec.topk_without_steps: {rule.message}"
    assert "Fix: set --speculative-num-steps" in text


@pytest.mark.parametrize(
    ("summary", "stage", "argv", "version"),
    [
        ("AssertionError", Stage.STARTING, FINE, "0.5.11"),  # the flags break no such rule
        ("AssertionError", Stage.GRAPHS, TOPK_ONLY, "0.5.11"),  # not at argument processing
        ("RuntimeError: boom", Stage.STARTING, TOPK_ONLY, "0.5.11"),  # not an assertion
        ("AssertionError", Stage.STARTING, TOPK_ONLY, None),  # the host's SGLang unknown
    ],
)
def test_other_crashes_keep_their_own_summary(
    summary: str, stage: Stage, argv: list[str], version: str | None
) -> None:
    assert foretold(summary, stage, argv, version) is None
    assert explained(summary, stage, argv, version) == summary


def test_a_rule_that_raises_something_else_does_not_explain_an_assertion() -> None:
    argv = ["--model-path", "Q", "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "D"]
    argv += [
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "2",
        "--speculative-num-draft-tokens",
        "4",
    ]
    argv += ["--page-size", "16", "--attention-backend", "triton"]  # a ValueError in SGLang, not an assert
    assert foretold("AssertionError", Stage.STARTING, argv, "0.5.11") is None


@pytest.mark.parametrize(
    "argv",
    [
        ["python3", "-m", "vllm.entrypoints.openai.api_server", "--tp", "2"],  # another module after -m
        ["sglang.launch_server", "--tp", "2", "-m"],  # the module named first, not run by -m
        ["/usr/bin/sglang", "--help"],  # SGLang's command without serve
        ["serve", "--tp", "2", "sglang"],  # serve first: not `sglang serve`
        ["/opt/sglang/bin/python3", "serve.py", "--tp", "2"],
    ],
)
def test_a_command_line_that_is_not_sglangs_server_is_kept_whole(argv: list[str]) -> None:
    assert server_flags(argv) == argv
