"""The system tools some tests drive for real, and what to do when one is missing.

``make test`` installs them first when it can (``tests/tools/test-deps``: root with apt-get). Where it
cannot, a test that needs one is skipped with a line that names the Debian package to install, never an
error. Under CI (``CI`` set) a missing tool fails instead: there the install must have worked, and a
skip would hide that the SSH or terminal tests never ran.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# tool -> (how to find it, the Debian package that brings it)
SSHD = Path("/usr/sbin/sshd")
PACKAGES = {"sshd": "openssh-server", "tmux": "tmux", "ip": "iproute2"}


def have(tool: str) -> bool:
    if tool == "sshd":
        return SSHD.is_file()
    return shutil.which(tool) is not None


def missing_message(tool: str) -> str:
    package = PACKAGES[tool]
    return f"{tool} not found: install it with `apt-get install {package}` (`make test` does, as root)"


def require(tool: str, *, module_level: bool = False) -> None:
    """Skip the calling test (or module) when ``tool`` is missing; fail under CI."""
    if have(tool):
        return
    if os.environ.get("CI"):
        pytest.fail(missing_message(tool), pytrace=False)
    pytest.skip(missing_message(tool), allow_module_level=module_level)
