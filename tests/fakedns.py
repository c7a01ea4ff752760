"""Commands run where every name lookup stays on this machine: a network and mount namespace of the
test's own, whose resolver is a DNS server on its loopback that knows no name (NXDOMAIN for every query).
A test that proves "does not resolve" then sends no query to the machine's real resolver.

Needs root (namespaces, the bind mount of /etc/resolv.conf), util-linux's ``unshare`` and iproute2's ``ip``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests import needs

# The server: binds 127.0.0.1:53, says so through the FIFO, then answers each query with its own id and
# question, RCODE 3 (NXDOMAIN), no records.
SERVER = r"""
import socket, sys
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("127.0.0.1", 53))
with open(sys.argv[1], "w") as ready:
    ready.write("ready\n")
while True:
    query, peer = sock.recvfrom(512)
    if len(query) < 12:
        continue
    end = 12
    while end < len(query) and query[end] != 0:
        end += query[end] + 1
    question = query[12 : end + 5]
    header = query[:2] + bytes([0x81 | (query[2] & 0x01), 0x83]) + b"\x00\x01" + b"\x00" * 6
    sock.sendto(header + question, peer)
"""

SETUP = """
set -e
ip link set lo up
printf 'nameserver 127.0.0.1\\noptions attempts:1 timeout:2\\n' > "$FAKEDNS/resolv.conf"
mount --bind "$FAKEDNS/resolv.conf" /etc/resolv.conf
mkfifo "$FAKEDNS/ready"
"$FAKEDNS_PYTHON" "$FAKEDNS/server.py" "$FAKEDNS/ready" </dev/null >"$FAKEDNS/server.log" 2>&1 &
server=$!
read -r _ < "$FAKEDNS/ready"
set +e
"$@"
status=$?
kill "$server"
exit "$status"
"""


def require() -> None:
    """Skip (fail under CI) where namespaces cannot be made."""
    needs.require("ip")
    if shutil.which("unshare") is None or os.geteuid() != 0:
        message = "a network namespace needs root and util-linux's unshare"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def argv(command: Sequence[str], workdir: Path) -> list[str]:
    """``command`` wrapped to run in the namespaces; ``workdir`` holds the server and its files."""
    (workdir / "server.py").write_text(SERVER)
    script = f"FAKEDNS={shlex.quote(str(workdir))} FAKEDNS_PYTHON={shlex.quote(sys.executable)}\n" + SETUP
    return ["unshare", "--net", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command]
