"""The simulated host's Hugging Face cache holds its Qwen3.6-27B's config.json (the simulator's declared
shape: max_position_embeddings 262144), and the simulated SGLang resolves a model name through it as SGLang
does, refusing a longer --context-length with ModelConfig's words (issue 26)."""

from __future__ import annotations

import pytest
from test_server_args_beyond import VERSIONS, last_line
from test_server_harness import run_args


@pytest.fixture(autouse=True)
def _the_hosts_own_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HOME", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)


@pytest.mark.parametrize("sim", VERSIONS, ids=["0.5.11", "0.5.23"])
def test_a_context_length_above_the_cached_configs_is_refused(sim_host, sim):
    result = run_args(sim_host, "--model-path", "Qwen/Qwen3.6-27B", "--context-length", "256Ki1", sim=sim)
    assert result.returncode == 2  # not a human_readable_int
    result = run_args(sim_host, "--model-path", "Qwen/Qwen3.6-27B", "--context-length", "262145", sim=sim)
    assert result.returncode == 1
    assert last_line(result.stderr).startswith(
        "ValueError: Warning: User-specified context_length (262145) is greater than the derived "
        "context_length (262144)."
    )
