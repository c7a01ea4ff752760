"""Which tests are functional: they bring up real parts (sshd, an SSH server, a network namespace, tmux, a
simulated GPU host's processes), and `make test-fast` leaves them out (``-m "not functional"``).

tests/conftest.py marks them at collection, so a new test is sorted without anyone remembering to: a test
is functional when it uses a fixture of ``FIXTURES``, or when it, one of its fixtures, or a function of the
suite's that either calls (at any depth) refers to a helper of ``HELPERS`` or calls ``needs.require`` (a
system tool); when its module required a tool at import (``needs.require(..., module_level=True)``); or
when it says so itself with ``@pytest.mark.functional`` (a part this cannot see, such as a server
started by hand).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests import needs

MARK = "functional"
# Fixtures that start a real part (tests/sshhosts.py, tests/conftest.py).
FIXTURES = frozenset({"sshd", "asyncssh_host", "netns_host", "sim_host"})
# Modules (or single functions) that start one: a simulated host's agent and servers, a session run
# against it, a resolver in a namespace.
HELPERS = frozenset(
    {
        "tests.host.launchkit",
        "tests.fakedns",
        "gdnconsole.host.simulated",
        "gdnconsole.host.simhome",
        "tests.host.test_session.sim_host",
        "tests.host.test_session.sim_server",
        "tests.host.test_session.running",
        "gdnconsole.demo.player.StoryRun",  # a demo story: real sessions on simulated hosts
    }
)


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    """A function's code and the code of what it defines inside (closures, nested helpers)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def starts_a_part(func: Callable[..., Any], seen: set[types.CodeType] | None = None) -> bool:
    """Whether calling ``func`` starts a real part, as far as its code shows."""
    seen = set() if seen is None else seen
    func = getattr(func, "__wrapped__", func)
    code = getattr(func, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    module = getattr(func, "__globals__", {})
    for each in _codes(code):
        if "require" in each.co_names and module.get("needs") is needs:
            return True
        for name in each.co_names:
            value = module.get(name)
            if value is None:
                continue
            if isinstance(value, types.ModuleType):
                if value.__name__ in HELPERS:
                    return True
                continue
            owner = getattr(value, "__module__", None)
            if owner in HELPERS or f"{owner}.{getattr(value, '__qualname__', '')}" in HELPERS:
                return True
            # A helper of the suite's own (its module, tests/ui/form_helpers.py...): look inside it too.
            if isinstance(owner, str) and owner.startswith("tests.") and starts_a_part(value, seen):
                return True
    return False


def is_functional(item: pytest.Item) -> bool:
    if item.get_closest_marker(MARK) is not None:
        return True
    if not isinstance(item, pytest.Function):
        return False
    if FIXTURES & set(item.fixturenames) or item.module.__name__ in needs.modules_needing_tools:
        return True
    seen: set[types.CodeType] = set()
    funcs = [item.obj] + [d.func for defs in item._fixtureinfo.name2fixturedefs.values() for d in defs]
    return any(starts_a_part(func, seen) for func in funcs)


def mark(items: list[pytest.Item]) -> None:
    for item in items:
        if is_functional(item):
            item.add_marker(MARK)
