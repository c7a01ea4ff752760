"""API keys and credential-looking environment values are masked wherever a command line is shown or
stored, with a stand-in that still changes when the value changes, and are put back from the real ones."""

from __future__ import annotations

from gdnconsole.sglang.launch import redact, redact_env, restore_env, restore_secrets

# the first 6 hex digits of each value's SHA-256
KEY = "sk-live-1234"
KEY_MASK = "<redacted:13c769>"
ADMIN = "admin-pw"
ADMIN_MASK = "<redacted:f63022>"
TOKEN = "hf_abc"
TOKEN_MASK = "<redacted:df3639>"
EMPTY_MASK = "<redacted:e3b0c4>"


def test_the_api_key_after_its_flag_is_masked_and_nothing_else_is() -> None:
    argv = ["python3", "-m", "sglang.launch_server", "--api-key", KEY, "--port", "30000"]
    assert redact(argv) == ["python3", "-m", "sglang.launch_server", "--api-key", KEY_MASK, "--port", "30000"]


def test_the_admin_api_key_is_masked_too() -> None:
    assert redact(["--admin-api-key", ADMIN, "--tp-size", "2"]) == [
        "--admin-api-key",
        ADMIN_MASK,
        "--tp-size",
        "2",
    ]


def test_a_key_written_with_an_equals_sign_is_masked_after_it() -> None:
    assert redact(["--api-key=" + KEY, "--admin-api-key=" + ADMIN, "--port=1"]) == [
        "--api-key=" + KEY_MASK,
        "--admin-api-key=" + ADMIN_MASK,
        "--port=1",
    ]


def test_an_empty_key_is_masked_as_well() -> None:
    assert redact(["--api-key=", "--api-key", ""]) == ["--api-key=" + EMPTY_MASK, "--api-key", EMPTY_MASK]


def test_a_key_that_looks_like_a_flag_is_still_masked() -> None:
    assert redact(["--api-key", "--port"]) == ["--api-key", "<redacted:08aaff>"]


def test_only_the_one_word_after_a_key_flag_is_masked() -> None:
    assert redact(["--api-key", KEY, KEY, "--model-path", "m"]) == [
        "--api-key",
        KEY_MASK,
        KEY,
        "--model-path",
        "m",
    ]


def test_a_key_flag_that_ends_the_command_line_is_kept() -> None:
    assert redact(["--tp-size", "1", "--api-key"]) == ["--tp-size", "1", "--api-key"]


def test_masking_twice_changes_nothing() -> None:
    argv = ["--api-key", KEY, "--admin-api-key=" + ADMIN]
    once = redact(argv)
    assert redact(once) == once == ["--api-key", KEY_MASK, "--admin-api-key=" + ADMIN_MASK]


def test_a_value_that_only_resembles_a_mask_is_masked() -> None:
    # a stand-in is exactly "<redacted:" + 6 lower-case hex digits + ">", nothing before or after
    for fake in ["<redacted:13c7690>", "<redacted:13C769>", "<redacted:13c769>x", "x<redacted:13c769>"]:
        assert redact(["--api-key", fake])[1] != fake
        assert redact(["--api-key=" + fake])[0] != "--api-key=" + fake


def test_other_flags_with_equals_signs_are_left_alone() -> None:
    argv = ['--json-model-override-args={"a": 1}', "--api-keys=x", "--apikey", "y", "api-key=z"]
    assert redact(argv) == argv


def test_when_a_key_flag_is_itself_the_value_of_one_the_word_after_it_is_masked_too() -> None:
    # "--api-key --api-key k" (argparse refuses it): masking both words after the first flag errs on the
    # side of hiding
    assert redact(["--api-key", "--api-key", KEY, "--port"]) == [
        "--api-key",
        "<redacted:6f1102>",
        KEY_MASK,
        "--port",
    ]


# -- the environment -------------------------------------------------------------------------------


def test_credential_looking_variables_are_masked_whatever_their_case() -> None:
    env = {
        "HF_TOKEN": TOKEN,
        "OPENAI_API_KEY": KEY,
        "my_secret": TOKEN,
        "DB_Password": TOKEN,
        "FTP_PASSWD": TOKEN,
        "AWS_CREDENTIALS": TOKEN,
    }
    assert redact_env(env) == {
        "HF_TOKEN": TOKEN_MASK,
        "OPENAI_API_KEY": KEY_MASK,
        "my_secret": TOKEN_MASK,
        "DB_Password": TOKEN_MASK,
        "FTP_PASSWD": TOKEN_MASK,
        "AWS_CREDENTIALS": TOKEN_MASK,
    }


def test_ordinary_variables_are_shown_as_they_are_in_their_order() -> None:
    env = {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "SGLANG_ENABLE_SPEC_V2": "1",
        "HF_TOKEN": TOKEN,
        "NCCL_DEBUG": "INFO",
    }
    redacted = redact_env(env)
    assert list(redacted) == ["CUDA_VISIBLE_DEVICES", "SGLANG_ENABLE_SPEC_V2", "HF_TOKEN", "NCCL_DEBUG"]
    assert redacted == {**env, "HF_TOKEN": TOKEN_MASK}


def test_an_environment_already_masked_stays_as_it_is() -> None:
    once = redact_env({"HF_TOKEN": TOKEN})
    assert redact_env(once) == once == {"HF_TOKEN": TOKEN_MASK}


def test_the_masked_environment_values_come_back_from_the_real_environment() -> None:
    shown = {"HF_TOKEN": TOKEN_MASK, "CUDA_VISIBLE_DEVICES": "0", "OTHER_KEY": "<redacted:000000>"}
    real = {"HF_TOKEN": TOKEN, "CUDA_VISIBLE_DEVICES": "1"}
    assert restore_env(shown, real) == {
        "HF_TOKEN": TOKEN,
        "CUDA_VISIBLE_DEVICES": "0",  # the shown value is the one kept: only masks are replaced
        "OTHER_KEY": "<redacted:000000>",  # no real value hashes to it: the mask stays
    }


def test_a_masked_value_comes_back_whichever_variable_held_it() -> None:
    assert restore_env({"NEW_TOKEN": TOKEN_MASK}, {"HF_TOKEN": TOKEN}) == {"NEW_TOKEN": TOKEN}


def test_masking_then_restoring_the_environment_gives_it_back() -> None:
    env = {"HF_TOKEN": TOKEN, "OPENAI_API_KEY": KEY, "CUDA_VISIBLE_DEVICES": "0,1"}
    assert restore_env(redact_env(env), env) == env


# -- restoring a command line ----------------------------------------------------------------------


def test_masked_keys_come_back_from_the_real_command_line() -> None:
    shown = ["python3", "--api-key", KEY_MASK, "--admin-api-key=" + ADMIN_MASK, "--port", "1"]
    real = ["python3", "--api-key", KEY, "--admin-api-key=" + ADMIN, "--port", "2"]
    assert restore_secrets(shown, real) == [
        "python3",
        "--api-key",
        KEY,
        "--admin-api-key=" + ADMIN,
        "--port",
        "1",
    ]


def test_a_key_comes_back_whether_the_real_line_wrote_it_with_or_without_an_equals_sign() -> None:
    assert restore_secrets(["--api-key=" + KEY_MASK], ["--api-key", KEY]) == ["--api-key=" + KEY]
    assert restore_secrets(["--api-key", KEY_MASK], ["--api-key=" + KEY]) == ["--api-key", KEY]


def test_a_key_after_an_equals_sign_that_itself_holds_an_equals_sign_comes_back_whole() -> None:
    real = ["--api-key=a=b"]
    assert redact(real) == ["--api-key=<redacted:42144f>"]
    assert restore_secrets(redact(real), real) == real


def test_a_mask_with_no_real_value_behind_it_stays_masked() -> None:
    shown = ["--api-key", KEY_MASK, "--admin-api-key=" + ADMIN_MASK]
    assert restore_secrets(shown, ["--api-key", "changed", "--admin-api-key=changed"]) == shown
    assert restore_secrets(shown, []) == shown


def test_words_that_are_not_masks_pass_through_unchanged() -> None:
    shown = ["--model-path", "m", "--x=y", "--z=<redacted:zz>", "<redacted:13c769"]
    assert restore_secrets(shown, ["--api-key", KEY]) == shown


def test_masking_then_restoring_a_command_line_gives_it_back() -> None:
    argv = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--api-key",
        KEY,
        "--admin-api-key=" + ADMIN,
        "--tp",
        "2",
    ]
    assert restore_secrets(redact(argv), argv) == argv


def test_a_mask_inside_another_flag_value_is_not_a_masked_key() -> None:
    # only a whole word, or the whole value after a flag's first "=", is a stand-in for a key
    shown = ["--json-model-override-args=k=" + KEY_MASK, "--api-key=" + KEY_MASK]
    real = ["--api-key", KEY]
    assert restore_secrets(shown, real) == ["--json-model-override-args=k=" + KEY_MASK, "--api-key=" + KEY]
