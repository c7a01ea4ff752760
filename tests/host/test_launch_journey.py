"""The seed's journey (ARCHITECTURE.md) replayed on the simulated ct129 over OpenSSH's sshd, then the journal."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gdnconsole.config.hosts import Speculative
from gdnconsole.host import launcher
from tests.host.launchkit import FINAL_ARGS, FINAL_ENV, connected, journal_for, launch_host, profile
from tests.sshhosts import SshdHost

TOPK_ONLY = Speculative(algorithm="NEXTN", eagle_topk=1, num_draft_tokens=2)


async def test_the_ct129_journey_is_journaled(tmp_path: Path, sshd: SshdHost) -> None:
    host = launch_host(tmp_path, ssh=sshd, ffmpeg=False)
    journal = journal_for(tmp_path, host)
    first = profile("mtp", speculative=TOPK_ONLY, args=(), env={})
    async with connected(host, sshd) as session:
        # 1. topk and draft tokens without num steps: our checker says no, nothing starts.
        rejected = await launcher.relaunch(session, first, journal=journal)
        assert rejected.outcome == "rejected" and rejected.rule and rejected.pid is None, rejected
        assert session.launched is None
        # 2. the same with the checker bypassed: SGLang's own AssertionError, recorded as a crash.
        crashed = await launcher.relaunch(session, first, check=False, journal=journal)
        crashed = await launcher.settle(session, crashed, timeout=30, journal=journal)
        assert crashed.outcome == "crashed" and crashed.fatal is not None
        assert "AssertionError" in crashed.fatal.summary or "speculative" in crashed.fatal.summary
        # 3. num steps and the mamba strategy (hybrid GDN + NEXTN on 0.5.11) added: the libavutil warning
        #    shows, and the server is ready anyway.
        steps = dataclasses.replace(
            first, speculative=dataclasses.replace(TOPK_ONLY, num_steps=1), args=FINAL_ARGS
        )
        warned = await launcher.relaunch(session, steps, journal=journal)
        warned = await launcher.settle(session, warned, timeout=30, journal=journal)
        assert warned.outcome == "ready" and any("Ignore import error" in w for w in warned.warnings), (
            warned.warnings
        )
        # 4. the flags that finally worked.
        final = dataclasses.replace(steps, env=FINAL_ENV)
        ready = await launcher.relaunch(session, final, journal=journal)
        ready = await launcher.settle(session, ready, timeout=30, journal=journal)
        assert ready.outcome == "ready"
        await launcher.stop(session, grace=5, journal=journal)
    attempts = journal.attempts()
    assert [a.outcome for a in attempts] == ["rejected", "crashed", "ready", "ready"]
    assert [a.number for a in attempts] == [1, 2, 3, 4]
    assert attempts[1].diff == []
    assert attempts[2].diff == ["+ --speculative-num-steps 1", "+ --mamba-scheduler-strategy extra_buffer"]
    assert attempts[3].diff == ["+ env SGLANG_ENABLE_SPEC_V2=1"]
    markdown = journal.to_markdown()
    assert markdown.count("\n| ") == 5  # the header and one row per attempt
    assert "**rejected**" in markdown and "**crashed**" in markdown and "Ignore import error" in markdown
