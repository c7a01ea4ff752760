"""The system tools some tests drive for real, and what to do when one is missing.

``make test`` installs them first when it can (``tests/tools/test-deps``: root with apt-get). Where it
cannot, a test that needs one is skipped with a line that names the Debian package to install, never an
error. Under CI (``CI`` set) a missing tool fails instead: there the install must have worked, and a
skip would hide that the SSH or terminal tests never ran. Data from outside the repository (``../shared``)
is treated the same way (``require_path``), and the end of the test run says what was skipped and why.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

# tool -> (how to find it, the Debian package that brings it)
SSHD = Path("/usr/sbin/sshd")
PACKAGES = {
    "sshd": "openssh-server",
    "tmux": "tmux",
    "ip": "iproute2",
    "prometheus": "prometheus",
    "promtool": "prometheus",
}


def have(tool: str) -> bool:
    if tool == "sshd":
        return SSHD.is_file()
    return shutil.which(tool) is not None


def missing_message(tool: str) -> str:
    package = PACKAGES[tool]
    return f"{tool} not found: install it with `apt-get install {package}` (`make test` does, as root)"


# Test modules that required a tool when imported: all their tests are functional (tests/functional.py).
modules_needing_tools: set[str] = set()


def require(tool: str, *, module_level: bool = False) -> None:
    """Skip the calling test (or module) when ``tool`` is missing; fail under CI."""
    if module_level:
        modules_needing_tools.add(sys._getframe(1).f_globals["__name__"])
    if have(tool):
        return
    _skip(missing_message(tool), module_level=module_level)


def require_path(path: Path, what: str) -> None:
    """Skip the calling test when ``path`` (data from outside the repository: ``what``) is missing; fail
    under CI, where ``shared/`` is laid beside the clone. What the suite itself needs lives in the
    repository; a test that needs ``path`` only checks that copy against its source."""
    if path.exists():
        return
    _skip(f"{what} not found at {path}", module_level=False)


def _skip(message: str, *, module_level: bool) -> None:
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message, allow_module_level=module_level)
