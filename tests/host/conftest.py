"""Fixtures for the host layer's tests: real SSH servers to connect to (see ``tests/sshhosts.py``)."""

from __future__ import annotations

from tests.sshhosts import asyncssh_host, netns_host, sshd

__all__ = ["asyncssh_host", "netns_host", "sshd"]
