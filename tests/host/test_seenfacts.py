"""What a host says of itself is kept when a console reaches it, for the commands that do not connect."""

from __future__ import annotations

import time
from pathlib import Path

from gdnconsole.host import seenfacts
from gdnconsole.host.session import HostSession
from tests.host.test_session import FAST_BACKOFF, running, sim_host


async def test_a_session_keeps_the_hosts_version_and_gpus(tmp_path: Path) -> None:
    host = sim_host(tmp_path, sglang="0.5.23", gpus=2, gpu_mib=81559)
    before = time.time()
    async with running(HostSession(host, sample_interval=0.2, backoff=FAST_BACKOFF)) as session:
        assert await session.wait_until(lambda: session.gpus_seen, 20)
    seen = seenfacts.recall(host.name)
    assert seen is not None and seen.time >= before
    assert (seen.facts.sglang, seen.facts.gpus, seen.facts.gpu_memory_mb) == ("0.5.23", 2, 81559)
    assert seen.facts == session.facts


def test_nothing_kept_is_none_and_a_torn_file_is_nothing(tmp_path: Path) -> None:
    assert seenfacts.recall("nowhere", tmp_path) is None
    seenfacts.path_for("torn", tmp_path).write_text('{"sglang": "0.5.')
    assert seenfacts.recall("torn", tmp_path) is None
