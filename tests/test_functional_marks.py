"""How a test is found functional (tests/functional.py): by what its code calls, at any depth."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import functional, needs
from tests.host import launchkit
from tests.host.test_session import sim_host
from tests.sshhosts import free_loopback_port


def pure() -> int:
    return len("a test of a function")


def needs_tmux() -> None:
    needs.require("tmux")


def calls_a_helper_that_needs_tmux() -> None:
    needs_tmux()


def reads_shared_data(path: Path) -> None:
    needs.require_path(path, "data from ../shared")  # a file, not a real part


def makes_a_simulated_host(tmp_path: Path) -> None:
    sim_host(tmp_path)


def launches_on_one(tmp_path: Path) -> None:
    launchkit.launch_host(tmp_path)


def takes_a_free_port() -> int:
    return free_loopback_port()  # from tests/sshhosts.py, but it starts nothing


def defines_a_closure_that_launches(tmp_path: Path) -> None:
    def inner() -> None:
        launchkit.launch_host(tmp_path)

    inner()


# The tests below take these functions as parameters: calling them by name would make the tests
# themselves functional.
@pytest.mark.parametrize(
    "func",
    [
        needs_tmux,
        calls_a_helper_that_needs_tmux,
        makes_a_simulated_host,
        launches_on_one,
        defines_a_closure_that_launches,
    ],
)
def test_what_starts_a_real_part_is_found_through_the_helpers_it_calls(func: Callable[..., object]) -> None:
    assert functional.starts_a_part(func)


@pytest.mark.parametrize("func", [pure, reads_shared_data, takes_a_free_port])
def test_what_starts_nothing_is_not_functional(func: Callable[..., object]) -> None:
    assert not functional.starts_a_part(func)


REQUIRE = needs.require  # by a name of its own, for the same reason


def test_a_module_that_needs_a_tool_at_import_is_known() -> None:
    """tests/terminal/*.py call ``needs.require("tmux", module_level=True)``: their module is recorded
    before collection ends (where tmux is missing, the module is skipped and has no tests to mark)."""
    recorded = set(needs.modules_needing_tools)
    try:
        needs.modules_needing_tools.discard(__name__)
        # Recorded before it looks for tmux: where tmux is missing, the skip (or CI's failure) comes after.
        with contextlib.suppress(pytest.skip.Exception, pytest.fail.Exception):
            REQUIRE("tmux", module_level=True)
        assert __name__ in needs.modules_needing_tools
    finally:
        needs.modules_needing_tools.clear()
        needs.modules_needing_tools.update(recorded)
