"""What a refused human_readable_int value says (issue 27): SGLang's own words for a decimal with an IEC
suffix (511 srt/utils/common.py:2328-2363), and the fix the checker gives for a value argparse refuses."""

from __future__ import annotations

import pytest

from gdnconsole.sglang import flags as flagmod


@pytest.mark.parametrize("text", ["1.5Ki", "0.5Mi", "2.0Gi"])
def test_a_decimal_with_an_iec_suffix_is_refused_in_sglangs_words(text: str) -> None:
    suffix = text.lstrip("0123456789.")
    with pytest.raises(ValueError, match=rf"^Decimals are not allowed with IEC suffixes like '{suffix}'\.$"):
        flagmod.human_readable_int(text)


def test_a_decimal_with_an_si_suffix_is_read() -> None:
    assert flagmod.human_readable_int("1.5k") == 1500


@pytest.mark.parametrize("sglang", ["0.5.11", "0.5.23"])
def test_the_fix_for_a_bad_context_length_names_the_forms_sglang_reads(sglang: str) -> None:
    parsed = flagmod.parse_argv(["--model-path", "m", "--context-length", "lots"], sglang)
    [error] = parsed.errors
    assert error.id == "argv.invalid_value" and error.flag == "--context-length"
    assert error.message.endswith(
        "Fix: --context-length takes an integer, optionally with a suffix: 32k, 1M, 128Ki."
    )


def test_the_fix_for_a_bad_plain_integer_says_an_integer() -> None:
    parsed = flagmod.parse_argv(["--model-path", "m", "--port", "80k"], "0.5.23")
    [error] = parsed.errors
    assert error.message.endswith("Fix: --port takes an integer.")
