"""Masking secrets at its edges (issue 27's mutation survivors in launch.py): a four-letter abbreviation
of a secret flag, a secret that holds another, a value that holds "=", the shortest value masked."""

from __future__ import annotations

from gdnconsole.sglang.launch import MASK_PREFIX, is_secret_flag, mask_known, redact, secret_values


def test_a_four_character_abbreviation_of_a_secret_flag_is_secret() -> None:
    # argparse's allow_abbrev takes --ap for --api-key and --ad for --admin-api-key (FACTS §4)
    assert is_secret_flag("--ap") and is_secret_flag("--ad")
    assert not is_secret_flag("--a")  # too short to be taken for one flag
    assert redact(["--ap", "sk-live-1"])[1].startswith(MASK_PREFIX)


def test_a_secret_holding_another_is_masked_whole() -> None:
    # the longer one is masked first: masking the shorter inside it would leave the rest of it shown
    text = "the key abcdef was refused"
    assert mask_known(text, ["bcde", "abcdef"]) == mask_known(text, ["abcdef"])
    assert "abcdef" not in mask_known(text, ["bcde", "abcdef"])
    assert mask_known("abcdef", ["bcde", "abcdef"]).startswith(MASK_PREFIX)


def test_values_of_four_characters_are_masked_and_shorter_ones_are_not() -> None:
    assert mask_known("pass abcd here", ["abcd"]).startswith("pass " + MASK_PREFIX)
    assert mask_known("pass abc here", ["abc"]) == "pass abc here"


def test_a_secret_value_holding_an_equals_sign_is_kept_whole() -> None:
    assert secret_values(["--api-key=a=b=c", "--tp", "2"], {}) == ("a=b=c",)
    assert secret_values(["--api-key", "x=y"], {"HF_TOKEN": "hf_1"}) == ("x=y", "hf_1")
