"""What the screens need to show secrets masked and put them back: which values are secret (the TLS key
password too, any PASS/KEY/TOKEN/SECRET/CREDENTIAL environment name), and a mask's real value."""

from __future__ import annotations

from gdnconsole.sglang.launch import (
    is_masked,
    is_secret_env,
    mask_known,
    profile_secrets,
    redact,
    redact_env,
    secret_values,
    unmask,
)


def test_the_ssl_key_password_is_a_secret_flag() -> None:
    assert redact(["--ssl-keyfile-password", "pw", "--ssl-keyfile", "k.pem"])[1].startswith("<redacted:")
    assert redact(["--ssl-keyfile-password", "pw", "--ssl-keyfile", "k.pem"])[3] == "k.pem"


def test_credential_looking_environment_names() -> None:
    secret = ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY", "WANDB_API_KEY",
              "AWS_SECRET_ACCESS_KEY", "DB_PASS", "PGPASSWORD", "SMTP_PASSWD", "GCP_CREDENTIALS"]  # fmt: skip
    plain = ["SGLANG_ENABLE_SPEC_V2", "CUDA_VISIBLE_DEVICES", "HF_HOME", "NCCL_DEBUG"]
    assert [n for n in secret if not is_secret_env(n)] == []
    assert [n for n in plain if is_secret_env(n)] == []
    assert redact_env({"PGPASSWORD": "pw", "HF_HOME": "/h"})["PGPASSWORD"].startswith("<redacted:")


def test_secret_values_are_the_values_redact_masks() -> None:
    argv = ["--api-key", "k1", "--admin-api-key=k2", "--port", "1", "--api-key", "--k3"]
    env = {"HF_TOKEN": "t", "CUDA_VISIBLE_DEVICES": "0"}
    assert secret_values(argv, env) == ("k1", "k2", "--k3", "t")


def test_unmask_finds_the_real_value_or_keeps_the_mask() -> None:
    shown = redact(["--api-key", "k1"])[1]
    assert unmask(shown, ["other", "k1"]) == "k1"
    assert unmask(shown, ["other"]) == shown
    assert unmask("plain", ["plain"]) == "plain"  # only a mask is replaced


def test_a_damaged_mask_is_still_a_mask() -> None:
    assert is_masked("<redacted:13c769>") and is_masked("<redacted:13c7") and is_masked("x<redacted")
    assert not is_masked("sk-live-1234") and not is_masked("redacted")


def test_an_abbreviated_secret_flag_is_masked_as_argparse_takes_it() -> None:
    # SGLang's argparse takes an unambiguous prefix: `--api-k KEY` sets the API key
    argv = ["--api-k", "k1", "--admin-api=k2", "--ssl-keyfile-pass", "pw", "--ssl-keyfile", "key.pem"]
    shown = redact(argv)
    assert [w for w in shown if w in ("k1", "pw") or "k2" in w] == []
    assert shown[-1] == "key.pem"  # the key file's path is a flag of its own, not a secret
    assert redact(["--ap", "x", "--a", "y", "--api-keys", "z"])[::2] == ["--ap", "--a", "--api-keys"]
    assert redact(["--a", "y", "--api-keys", "z"])[1::2] == ["y", "z"]


def test_a_secret_environment_assignment_in_a_command_line_is_masked() -> None:
    argv = ["env", "HF_TOKEN=t", "CUDA_VISIBLE_DEVICES=0", "python3", "-m", "sglang.launch_server"]
    shown = redact(argv)
    assert shown[1].startswith("HF_TOKEN=<redacted:") and shown[2:] == argv[2:]
    assert secret_values(argv, {}) == ("t",)


def test_mask_known_masks_each_secret_wherever_it_occurs() -> None:
    text = "error: unrecognized arguments: --api-kee sk-live-1 x=sk-live-1 abc"
    masked = mask_known(text, ["sk-live-1", "abc", "sk-live-1"])
    assert "sk-live-1" not in masked and masked.count("<redacted:") == 2
    assert masked.endswith(" abc")  # under 4 characters: too common to look for
    assert mask_known("sk-live-12 sk-live-1", ["sk-live-1", "sk-live-12"]).count("<redacted:") == 2


def test_profile_secrets_are_every_profiles_keys_and_tokens() -> None:
    from gdnconsole.config.hosts import Profile

    one = Profile(name="a", model="m", args=("--api-key", "k-one"), env={"HF_TOKEN": "t-one", "X": "1"})
    two = Profile(name="b", model="m", args=("--admin-api-key=k-two",))
    assert profile_secrets([one, two]) == ("k-one", "t-one", "k-two")
