"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from gdnconsole.host.consolelog import LOG_ENV
from gdnconsole.host.journal import JOURNAL_DIR_ENV
from gdnconsole.host.prompthistory import PROMPTS_DIR_ENV
from gdnconsole.host.simhome import prepare_home
from tests import functional

SHARED = Path(__file__).resolve().parents[2] / "shared"
# Real SGLang log excerpts the suite reads: a copy in the repository (a plain clone has no ../shared);
# tests/sglang/test_real_logs.py checks it against its source when ../shared is there.
REAL_LOGS = Path(__file__).resolve().parent / "sglang" / "real_logs"
SHARED_LOGS = SHARED / "sglang" / "logs"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that bring up real parts ``functional`` (tests/functional.py): `make test-fast`
    runs the rest."""
    functional.mark(items)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say at the end what did not run here and why, one line per reason, however the skip was made."""
    reasons: Counter[str] = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = getattr(report, "longrepr", None)
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    if not reasons:
        return
    total = sum(reasons.values())
    terminalreporter.write_sep("-", f"{total} test{'' if total == 1 else 's'} skipped here, and why")
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"{count:4d} × {reason}")


@pytest.fixture(autouse=True)
def _prompts_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt panel's history files go to a folder of each test's own, never the user's data dir."""
    monkeypatch.setenv(PROMPTS_DIR_ENV, str(tmp_path_factory.mktemp("prompts")))


@pytest.fixture(autouse=True)
def _journal_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Launch journals too (a prompt's answer is recorded in the running server's attempt)."""
    monkeypatch.setenv(JOURNAL_DIR_ENV, str(tmp_path_factory.mktemp("journal")))


@pytest.fixture(autouse=True)
def _console_log(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The console's own log (the bugs it met) goes to each test's folder too; a test may read it."""
    path = tmp_path_factory.mktemp("console") / "console.log"
    monkeypatch.setenv(LOG_ENV, str(path))
    return path


@dataclass
class SimHost:
    """A simulated GPU host on this machine: its home and the environment that reaches it."""

    home: Path
    env: dict[str, str]  # the full environment for a subprocess (os.environ + the sim's variables)


SimHostFactory = Callable[..., SimHost]


@pytest.fixture
def sim_host(tmp_path: Path) -> SimHostFactory:
    """Make a simulated host; keyword arguments are keys of the hosts file's ``simulate`` table.

    Tests run the timeline fast (speed 50) and release GPU memory at once unless they ask otherwise.
    """
    count = 0

    def make(**simulate: object) -> SimHost:
        nonlocal count
        count += 1
        table: dict[str, object] = {"speed": 50.0, "release_lag_s": 0.0}
        table.update(simulate)
        home = tmp_path / f"simhost{count}"
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env.update(prepare_home(home, table))
        return SimHost(home=home, env=env)

    return make
