"""The launcher checks the flags against the model's config.json as the host holds it (issue 26): the
simulated host serves its Qwen3.6-27B's config from its Hugging Face cache, a --context-length above the
model's maximum is refused before anything starts, and the simulator refuses the same flags with the same
words. A damaged config.json is no finding and one warning."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from gdnconsole.host import launcher, seenmodels, simulated
from gdnconsole.sglang.hostfacts import HostFacts
from gdnconsole.sglang.launch import launch_spec
from gdnconsole.sglang.profilerules import check_profile
from tests.host.launchkit import MODEL, connected, journal_for, launch_host, profile

ABOVE = ("--context-length", "300000")  # the simulator's Qwen3.6-27B: max_position_embeddings 262144
ABOVE_WORDS = (
    "Warning: User-specified context_length (300000) is greater than the derived context_length (262144). "
    "This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length may "
    "differ from max_position_embeddings in the model's config. To allow overriding this maximum, set the "
    "env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
)


@pytest.fixture(autouse=True)
def _no_cache_of_ours(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The simulated host's own cache, not this machine's; kept facts under the test's directory."""
    monkeypatch.delenv("HF_HOME", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setattr(seenmodels, "default_dir", lambda: tmp_path / "state")


async def test_a_context_length_above_the_models_is_refused_before_anything_starts(tmp_path: Path) -> None:
    host = launch_host(tmp_path)
    above = profile(args=(*profile().args, *ABOVE))
    journal = journal_for(tmp_path, host)
    async with connected(host) as session:
        attempt = await launcher.launch(session, above, journal=journal)
        assert session.server is None
    assert attempt.outcome == "rejected" and attempt.pid is None
    assert attempt.rule is not None and attempt.rule.id == "model.context_length_above_model"
    assert "--context-length 300000 is above what Qwen3_5ForConditionalGeneration allows (262144" in (
        attempt.rule.message
    )
    seen = seenmodels.recall(host.name, MODEL)
    assert seen is not None and seen.config["text_config"]["max_position_embeddings"] == 262144
    # SGLang's own words, as the rule holds them, are the simulator's when it meets the same flags.
    assert host.simulate is not None
    result = check_profile(above, HostFacts(host.simulate.sglang, "8.6", 2), seen.config)
    assert result is not None and result.errors[0].sglang_text == ABOVE_WORDS
    ran = subprocess.run(
        [sys.executable, "-m", "sglang.launch_server", "--model-path", MODEL, *ABOVE],
        env=simulated.environment(host),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 1
    assert ran.stderr.rstrip().splitlines()[-1] == f"ValueError: {ABOVE_WORDS}"


async def test_a_damaged_config_is_one_warning_and_no_finding(tmp_path: Path) -> None:
    model = tmp_path / "damaged"
    model.mkdir()
    (model / "config.json").write_text("[" * 100000)  # nesting deep enough to exhaust a parser's stack
    host = launch_host(tmp_path)
    damaged = dataclasses.replace(profile(), model=str(model), args=(*profile().args, *ABOVE))
    said: list[str] = []
    async with connected(host) as session:
        config = await launcher._model_config(session, damaged, True, said.append)
        rule = launcher.check_rules(session, launch_spec(damaged, host.python), config)
    assert config is None
    assert said == [f"the config.json of {model} is unusable (nested too deeply); its checks were not run"]
    assert rule is None or rule.id != "model.context_length_above_model"
    assert seenmodels.recall(host.name, str(model)) is None
