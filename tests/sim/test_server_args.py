"""Argument processing of the simulated ``sglang.launch_server``: argparse, and SGLang's rules in order."""

from __future__ import annotations

import pytest
from test_server_harness import run_args

QWEN = ["--model-path", "Qwen/Qwen3.6-27B", "--tp", "2"]
LLAMA = ["--model-path", "meta-llama/Llama-3.1-8B-Instruct"]
NEXTN = ["--speculative-algorithm", "NEXTN"]
MAMBA_ERROR = (
    "ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible with radix cache "
    "when using --mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, please use "
    "--mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1."
)


def last_line(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


def test_unknown_flag_is_argparse_error(sim_host):
    result = run_args(sim_host, *QWEN, "--bogus-flag", "1")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: ")
    assert "error: unrecognized arguments: --bogus-flag 1" in result.stderr


def test_0_5_11_spec_algorithm_has_choices(sim_host):
    result = run_args(sim_host, *QWEN, "--speculative-algorithm", "eagle")
    assert result.returncode == 2
    assert "argument --speculative-algorithm: invalid choice: 'eagle'" in result.stderr


def test_mamba_rule_comes_before_topk_assertion_on_0_5_11(sim_host):
    result = run_args(sim_host, *QWEN, *NEXTN, "--speculative-eagle-topk", "1")
    assert result.returncode == 1
    assert last_line(result.stderr) == MAMBA_ERROR
    assert "sglang/srt/server_args.py" in result.stderr
    assert "in _handle_mamba_radix_cache" in result.stderr


@pytest.mark.parametrize(
    "extra",
    [
        ["--mamba-scheduler-strategy", "extra_buffer"],
        ["--disable-radix-cache"],
        ["--mamba-sched", "extra_buffer"],  # an unambiguous prefix works, as in SGLang
    ],
)
def test_topk_without_num_steps_is_bare_assertion(sim_host, extra):
    result = run_args(sim_host, *QWEN, *NEXTN, "--speculative-eagle-topk", "1", *extra)
    assert result.returncode == 1
    assert last_line(result.stderr) == "AssertionError"
    assert "in _handle_eagle_family" in result.stderr
    assert 'sglang/srt/server_args.py", line' in result.stderr


def test_dense_model_gets_the_assertion_directly(sim_host):
    result = run_args(sim_host, *LLAMA, "--speculative-algo", "EAGLE", "--speculative-num-draft-tokens", "4")
    assert last_line(result.stderr) == "AssertionError"


def test_0_5_23_assertion_comes_first(sim_host):
    result = run_args(sim_host, *QWEN, *NEXTN, "--speculative-eagle-topk", "1", sim={"sglang": "0.5.23"})
    assert last_line(result.stderr) == "AssertionError"
    assert "sglang/srt/arg_groups/speculative_hook.py" in result.stderr
    assert "] server_args={" not in result.stderr  # resolution fails before the args dump


def test_num_steps_alone_is_type_error(sim_host):
    result = run_args(sim_host, *LLAMA, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3")
    assert (
        last_line(result.stderr) == "TypeError: '>' not supported between instances of 'NoneType' and 'int'"
    )


def test_trtllm_mha_hardware_rule_before_topk_rule(sim_host):
    args = [
        *LLAMA,
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "4",
        "--speculative-num-draft-tokens",
        "8",
        "--attention-backend",
        "trtllm_mha",
    ]
    result = run_args(sim_host, *args)
    assert "TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100)" in last_line(
        result.stderr
    )
    blackwell = run_args(sim_host, *args, sim={"compute_capability": "10.0"})
    assert last_line(blackwell.stderr) == (
        "ValueError: trtllm_mha backend only supports topk = 1 for speculative decoding."
    )


def test_topk_with_paged_attention_needs_flashinfer(sim_host):
    args = [
        *LLAMA,
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "4",
        "--speculative-num-draft-tokens",
        "8",
        "--page-size",
        "16",
        "--attention-backend",
        "triton",
    ]
    result = run_args(sim_host, *args)
    assert last_line(result.stderr).startswith(
        "ValueError: speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results"
    )


def test_extra_buffer_with_disabled_radix_cache(sim_host):
    result = run_args(sim_host, *QWEN, "--mamba-scheduler-strategy", "extra_buffer", "--disable-radix-cache")
    assert last_line(result.stderr) == (
        "ValueError: mamba extra_buffer is not compatible with --disable-radix-cache Overlap scheduling is already "
        "supported with no_buffer + disable_radix_cache. Please use --mamba-scheduler-strategy no_buffer instead."
    )


def test_extra_buffer_track_interval_against_draft_tokens(sim_host):
    args = [
        *QWEN,
        *NEXTN,
        "--mamba-scheduler-strategy",
        "extra_buffer",
        "--mamba-track-interval",
        "2",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "4",
    ]
    result = run_args(sim_host, *args)
    assert last_line(result.stderr) == (
        "AssertionError: mamba_track_interval 2 must be greater than or equal to speculative_num_draft_tokens 4"
    )


def test_0_5_23_renamed_flags(sim_host):
    new = {"sglang": "0.5.23"}
    old_name = run_args(sim_host, *QWEN, "--mamba-scheduler-strategy", "extra_buffer", sim=new)
    assert old_name.returncode == 2
    assert "error: unrecognized arguments: --mamba-scheduler-strategy extra_buffer" in old_name.stderr
    ambiguous = run_args(sim_host, *QWEN, "--cuda-graph-max-bs", "16", sim=new)
    assert ambiguous.returncode == 2
    assert (
        "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill"
        in (ambiguous.stderr)
    )
