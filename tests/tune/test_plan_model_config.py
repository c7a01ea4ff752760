"""Tune's plan checks every combination with the model's config.json as the host holds it (issue 26): on
the simulated host, whose Qwen3.6-27B allows 262144 tokens, a profile asking for more is rejected whole
before anything is launched."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gdnconsole.host import seenmodels
from gdnconsole.tune.grid import parse_grid
from gdnconsole.tune.store import TuneStore
from gdnconsole.tune.sweep import Options, run
from tests.host.launchkit import connected, journal_for, launch_host
from tests.tune.test_sweep import FAST, load

RULE = "model.context_length_above_model"


@pytest.fixture(autouse=True)
def _the_hosts_own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HF_HOME", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setattr(seenmodels, "default_dir", lambda: tmp_path / "state")


async def test_a_context_length_above_the_models_rejects_every_combination(tmp_path: Path) -> None:
    host = launch_host(tmp_path, **FAST)
    final = host.profiles["final"]
    long = dataclasses.replace(final, args=(*final.args, "--context-length", "300000"))
    journal = journal_for(tmp_path, host)
    options = Options(
        tuple(parse_grid("num_steps=1 eagle_topk=1 num_draft_tokens=2,3")), load(), timeout=60.0
    )
    lines: list[str] = []
    async with connected(host) as session:
        done = await run(
            session, long, options, store=TuneStore(host.name, tmp_path / "journal"), journal=journal,
            say=lines.append,
        )  # fmt: skip
        assert session.server is None
    assert [p.rule.id if p.rule else None for p in done.planned] == [RULE, RULE, RULE]
    assert not journal.attempts() or all(a.outcome == "rejected" for a in journal.attempts())
