"""Under `make mutation` (mutmut sets MUTANT_UNDER_TEST), each test checks flags against rule tables built
afresh, so that a mutant of the code that builds them (the rules' conditions and messages) is the one the
test meets, and mutmut's call statistics tie each table builder to every test that runs the rules."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from gdnconsole.sglang import ruletables


@pytest.fixture(autouse=True)
def _rule_tables_built_under_the_mutant() -> Iterator[None]:
    if "MUTANT_UNDER_TEST" in os.environ:
        ruletables.rebuild()
    yield
