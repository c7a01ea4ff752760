"""Which of SGLang's chat-endpoint extensions the console may ask a server for, by its version."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.chatext import meta_info, spec_details


@pytest.mark.parametrize(
    ("version", "asked"),
    [
        (None, False),
        ("0.5.11", False),
        ("0.5.22", False),
        ("0.5.23", True),
        ("0.5.24", True),
        ("0.6.0", True),
        ("1.0.0", True),
    ],
)
def test_meta_info_and_spec_details_are_asked_from_0_5_23_on(version: str | None, asked: bool) -> None:
    assert meta_info(version) is asked
    assert spec_details(version) is asked
