"""Log text shown safely: control characters in caret notation, API keys masked, a tqdm bar's last state."""

from __future__ import annotations

import hashlib

import pytest

from gdnconsole.logs.textsafe import last_carriage_state, visible, without_secrets


def tag(value: str) -> str:
    """The six hex digits that tell two masked keys apart."""
    return hashlib.sha256(value.encode()).hexdigest()[:6]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x00", "^@"),
        ("\x01", "^A"),
        ("\x08", "^H"),
        ("\n", "^J"),
        ("\x0b", "^K"),
        ("\r", "^M"),
        ("\x1b[31mred\x1b[0m", "^[[31mred^[[0m"),
        ("\x1f", "^_"),
        ("\x7f", "^?"),
        ("\x80", "\\x80"),
        ("\x9b", "\\x9b"),
        ("\x9f", "\\x9f"),
    ],
)
def test_a_control_character_is_shown_in_caret_notation(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_tab_and_printable_text_are_shown_as_they_are() -> None:
    text = "a\tb ~ \xa0é ∑ [b]bold[/b] \x20"
    assert visible(text) == text


def test_controls_among_text_are_each_replaced_in_place() -> None:
    assert visible("one\x07two\x7fthree\x85four") == "one^Gtwo^?three\\x85four"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("api_key='s3cret', port=1", f"api_key='<redacted:{tag('s3cret')}>', port=1"),
        ('admin_api_key="adm1n")', f'admin_api_key="<redacted:{tag("adm1n")}>")'),
        ("api_key=bare next", f"api_key=<redacted:{tag('bare')}> next"),
        ("--api-key s3cret --port 1", f"--api-key <redacted:{tag('s3cret')}> --port 1"),
        ("--api-key=s3cret", f"--api-key=<redacted:{tag('s3cret')}>"),
        ("--admin-api-key 'k3y'", f"--admin-api-key '<redacted:{tag('k3y')}>'"),
        ("--admin-api-key=abc,def", f"--admin-api-key=<redacted:{tag('abc')}>,def"),
    ],
)
def test_api_keys_are_masked_with_a_tag_that_tells_them_apart(text: str, shown: str) -> None:
    assert without_secrets(text) == shown


def test_every_key_of_a_line_is_masked_and_two_keys_get_different_tags() -> None:
    line = "ServerArgs(api_key='one', admin_api_key='two')"
    assert without_secrets(line) == (
        f"ServerArgs(api_key='<redacted:{tag('one')}>', admin_api_key='<redacted:{tag('two')}>')"
    )
    assert tag("one") != tag("two")


def test_a_key_of_none_is_no_key_but_a_quoted_none_is_a_key() -> None:
    assert without_secrets("api_key=None, port=1") == "api_key=None, port=1"
    assert without_secrets("api_key='None'") == f"api_key='<redacted:{tag('None')}>'"
    assert without_secrets("api_key=Nonesuch") == f"api_key=<redacted:{tag('Nonesuch')}>"


def test_masking_twice_changes_nothing_more() -> None:
    once = without_secrets("api_key='s3cret' --api-key other")
    assert once == f"api_key='<redacted:{tag('s3cret')}>' --api-key <redacted:{tag('other')}>"
    assert without_secrets(once) == once


@pytest.mark.parametrize(
    "text",
    [
        "no keys here",
        "my_api_key_name is documented",
        "fooapi_key=visible",  # not the name api_key: another word that ends in it
        "--api-keys are described in the docs",
        "api_key=",
        "--api-key  ",
    ],
)
def test_text_without_a_key_is_left_as_it_is(text: str) -> None:
    assert without_secrets(text) == text


def test_a_line_without_carriage_returns_is_its_own_state() -> None:
    assert last_carriage_state("Loading 10%|#  |") == "Loading 10%|#  |"
    assert last_carriage_state("") == ""


def test_a_rewritten_bar_shows_its_last_state() -> None:
    assert last_carriage_state("Loading 10%\rLoading 50%\rLoading 100%") == "Loading 100%"
    assert last_carriage_state("Loading 10%\rLoading 100%\r") == "Loading 100%"
    assert last_carriage_state("\r\r") == ""
    assert last_carriage_state("\r") == ""


def test_log_lines_glued_to_earlier_states_are_kept_after_the_last_state() -> None:
    line = (
        "Loading 10%[2026-11-30 10:00:00] Load weight begin"
        "\rLoading 50%\rLoading 90%[2026-11-30 10:00:01 TP0] Memory pool end"
        "\rLoading 100%"
    )
    assert last_carriage_state(line) == (
        "Loading 100%[2026-11-30 10:00:00] Load weight begin[2026-11-30 10:00:01 TP0] Memory pool end"
    )


def test_a_state_that_starts_with_a_stamp_is_not_a_glued_line() -> None:
    assert last_carriage_state("[2026-11-30 10:00:00] Loading 10%\rLoading 100%") == "Loading 100%"
    assert last_carriage_state("x[2026-11-30 10:00]\rdone") == "done"  # a stamp needs its seconds


def test_a_stamp_one_character_into_a_state_is_a_glued_line() -> None:
    assert last_carriage_state("x[2026-11-30 10:00:00] hi\rdone") == "done[2026-11-30 10:00:00] hi"
