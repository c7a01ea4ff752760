"""Under `make mutation` (mutmut sets MUTANT_UNDER_TEST) the flag and rule tables, cached for the process,
are built afresh, so that a mutant of the code that builds them (the flags' rows, the rules' conditions and
messages) is the one the tests meet: once per run of a mutant's tests, and before each test while mutmut
records which tests call which function (its "stats" run), which ties each table builder to every test
that reads the tables."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from gdnconsole.sglang import flags, ruletables

_built_for: set[str] = set()  # the mutants whose tables this process has built


@pytest.fixture(autouse=True)
def _tables_built_under_the_mutant() -> Iterator[None]:
    mutant = os.environ.get("MUTANT_UNDER_TEST")
    if mutant == "stats" or (mutant and mutant not in _built_for):
        flags.flag_table.cache_clear()
        ruletables.rebuild()
        _built_for.add(mutant)
    yield
