"""The simulated server stops where SGLang's argument processing stops for parallelism and chunk sizes,
and the console's checker says the same (issue 17): the simulator keeps its own copy of the rule."""

from __future__ import annotations

import pytest
from test_server_harness import run_args

from gdnconsole.sglang.rules import check

DENSE = ["--model-path", "Qwen/Qwen3-8B"]


def last_line(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


@pytest.mark.parametrize(
    ("version", "dp"),
    [
        ("0.5.11", ["--dp", "2", "--enable-dp-attention"]),
        ("0.5.23", ["--dp", "2", "--enable-dp-attention"]),
        ("0.5.23", ["--attn-dp-size", "2"]),
    ],
)
def test_dp_attention_with_the_default_tp_is_a_bare_assertion(sim_host, version, dp):
    result = run_args(sim_host, *DENSE, *dp, sim={"sglang": version})
    assert result.returncode == 1
    assert last_line(result.stderr) == "AssertionError"
    assert "in _handle_data_parallelism" in result.stderr
    ours = check([*DENSE, *dp], sglang=version, compute_capability="8.6", gpus=2)
    assert ours.errors[0].id == "parallel.tp_not_divisible_by_dp"


def test_a_page_size_that_does_not_divide_the_chunk(sim_host):
    argv = [*DENSE, "--page-size", "48"]  # 48 GiB: SGLang picks 4096
    result = run_args(sim_host, *argv)
    assert result.returncode == 1
    assert last_line(result.stderr) == "AssertionError: chunked_prefill_size must be divisible by page_size"
    ours = check(argv, sglang="0.5.11", compute_capability="8.6", gpus=2, gpu_memory_mb=49140)
    assert ours.errors[0].id == "memory.chunked_prefill_page_size"
