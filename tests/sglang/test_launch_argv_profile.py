"""A profile becomes SGLang's exact command line: which flags, in which order, each value one argv word."""

from __future__ import annotations

import pytest

from gdnconsole.config.hosts import Profile, Speculative
from gdnconsole.sglang.launch import LaunchSpec, flag_value, launch_spec, server_args

MODEL = "/models/Qwen3.6-27B"


def test_a_bare_profile_gives_model_tp_host_and_port_in_that_order() -> None:
    assert server_args(Profile("p", MODEL)) == [
        "--model-path",
        MODEL,
        "--tp-size",
        "1",
        "--host",
        "127.0.0.1",
        "--port",
        "30000",
    ]


def test_a_full_profile_lists_memory_then_every_speculative_flag_then_its_own_args() -> None:
    profile = Profile(
        "mtp",
        MODEL,
        tp=2,
        port=30123,
        host="0.0.0.0",
        mem_fraction=0.85,
        speculative=Speculative(
            algorithm="NEXTN", num_steps=3, eagle_topk=1, num_draft_tokens=4, draft_model="/models/draft"
        ),
        args=("--enable-metrics", "--mamba-ssm-dtype", "float32"),
    )
    assert server_args(profile) == [
        "--model-path",
        MODEL,
        "--tp-size",
        "2",
        "--host",
        "0.0.0.0",
        "--port",
        "30123",
        "--mem-fraction-static",
        "0.85",
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "4",
        "--speculative-draft-model-path",
        "/models/draft",
        "--enable-metrics",
        "--mamba-ssm-dtype",
        "float32",
    ]


def test_only_the_speculative_settings_that_are_set_become_flags() -> None:
    profile = Profile("p", MODEL, speculative=Speculative(algorithm="EAGLE", num_draft_tokens=6))
    assert server_args(profile)[8:] == [
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-draft-tokens",
        "6",
    ]
    profile = Profile("p", MODEL, speculative=Speculative(eagle_topk=2, draft_model="d"))
    assert server_args(profile)[8:] == [
        "--speculative-eagle-topk",
        "2",
        "--speculative-draft-model-path",
        "d",
    ]


def test_a_value_with_spaces_or_shell_characters_stays_one_word() -> None:
    profile = Profile("p", "/models/my model", args=("--chat-template", "`rm -rf /`; echo $HOME"))
    args = server_args(profile)
    assert args[1] == "/models/my model"
    assert args[-2:] == ["--chat-template", "`rm -rf /`; echo $HOME"]


@pytest.mark.parametrize(
    ("fraction", "written"),
    [
        (0.85, "0.85"),
        (0.9, "0.9"),
        (0.5, "0.5"),
        (1.0, "1"),
        (1, "1"),
        (100.0, "100"),
        (0.30000000000000004, "0.30000000000000004"),
        (1e-05, "1e-05"),
        (1e-10, "1e-10"),
        (1e20, "1e+20"),
    ],
)
def test_the_memory_fraction_is_written_as_short_as_python_writes_it(fraction: float, written: str) -> None:
    args = server_args(Profile("p", MODEL, mem_fraction=fraction))
    assert args[8:] == ["--mem-fraction-static", written]


def test_a_zero_memory_fraction_is_still_passed() -> None:
    # 0.0 is a value, not "unset": only None leaves the flag out
    assert server_args(Profile("p", MODEL, mem_fraction=0.0))[8:] == ["--mem-fraction-static", "0"]
    assert "--mem-fraction-static" not in server_args(Profile("p", MODEL))


def test_a_zero_speculative_setting_is_still_passed() -> None:
    profile = Profile("p", MODEL, speculative=Speculative(num_steps=0))
    assert server_args(profile)[8:] == ["--speculative-num-steps", "0"]


def test_the_launch_spec_runs_the_server_module_with_the_profile_flags() -> None:
    profile = Profile("p", MODEL, tp=2, port=31000, env={"CUDA_VISIBLE_DEVICES": "0,1"})
    spec = launch_spec(profile, "/opt/venv/bin/python")
    assert spec.python == "/opt/venv/bin/python"
    assert spec.args == tuple(server_args(profile))
    assert spec.argv == ("/opt/venv/bin/python", "-m", "sglang.launch_server", *server_args(profile))
    assert spec.env == {"CUDA_VISIBLE_DEVICES": "0,1"}
    assert spec.port == 31000


def test_the_launch_spec_uses_python3_unless_told_otherwise() -> None:
    spec = launch_spec(Profile("p", MODEL))
    assert spec.argv[:3] == ("python3", "-m", "sglang.launch_server")
    assert spec.port == 30000
    assert spec.env == {}


def test_the_launch_spec_owns_a_copy_of_the_profile_environment() -> None:
    env = {"A": "1"}
    spec = launch_spec(Profile("p", MODEL, env=env))
    env["A"] = "2"
    assert spec.env == {"A": "1"}
    assert type(spec.env) is dict


def test_a_spec_built_by_hand_puts_the_interpreter_before_the_module() -> None:
    spec = LaunchSpec("python", ("--tp-size", "2"))
    assert spec.argv == ("python", "-m", "sglang.launch_server", "--tp-size", "2")
    assert spec.env == {} and spec.port == 30000


# -- flag_value ------------------------------------------------------------------------------------

TP = ("--tp-size", "--tp")


def test_a_flag_value_is_read_from_the_next_word() -> None:
    assert flag_value(["python3", "-m", "x", "--tp-size", "2", "--port", "1"], TP) == "2"


def test_a_flag_value_is_read_after_an_equals_sign() -> None:
    assert flag_value(["--port", "1", "--tp=4"], TP) == "4"


def test_an_equals_sign_splits_only_at_the_first_one() -> None:
    assert flag_value(["--chat-template=a=b"], ["--chat-template"]) == "a=b"


def test_an_empty_value_after_an_equals_sign_is_empty_not_absent() -> None:
    assert flag_value(["--tp=", "3"], TP) == ""


def test_the_last_occurrence_of_a_flag_wins_as_with_argparse() -> None:
    assert flag_value(["--tp-size", "2", "--tp=8", "--tp", "4"], TP) == "4"
    assert flag_value(["--tp-size", "2", "--tp", "4", "--tp=8"], TP) == "8"


def test_an_absent_flag_has_no_value() -> None:
    assert flag_value(["--port", "1", "--tp-sizes", "2", "--TP", "3"], TP) is None
    assert flag_value([], TP) is None


def test_a_flag_that_ends_the_command_line_has_no_value() -> None:
    assert flag_value(["--port", "1", "--tp-size"], TP) is None
    assert flag_value(["--tp-size", "2", "--tp-size"], TP) is None  # the last one wins, even valueless


def test_a_flag_value_is_the_word_after_the_flag_even_when_it_looks_like_a_flag() -> None:
    assert flag_value(["--tp-size", "--port", "1"], TP) == "--port"


def test_a_flag_name_only_matches_a_whole_name() -> None:
    assert flag_value(["--speculative-num-steps=3"], ["--speculative"]) is None
    assert flag_value(["x--tp", "2"], TP) is None
