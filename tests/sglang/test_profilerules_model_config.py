"""A profile checked with the model's config.json, as a host that holds the model gives it (issue 26): the
checkpoint's context length and quantization reach the rules; without it, no finding of them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gdnconsole.config.hosts import Profile
from gdnconsole.sglang.hostfacts import HostFacts
from gdnconsole.sglang.profilerules import check_profile
from gdnconsole.sglang.rules import CheckResult

CONFIG = {
    "architectures": ["Qwen3ForCausalLM"],
    "max_position_embeddings": 40960,
    "quantization_config": {"quant_method": "fp8"},
}


def checked(profile: Profile, facts: HostFacts, model_config: Mapping[str, Any] | None = None) -> CheckResult:
    result = check_profile(profile, facts, model_config)
    assert result is not None  # the version is known
    return result


def test_the_models_config_reaches_the_rules() -> None:
    profile = Profile(
        name="p", model="Qwen/Qwen3-8B-FP8", args=("--context-length", "65536", "--quantization", "awq")
    )
    known = checked(profile, HostFacts("0.5.23", "9.0", 1), CONFIG)
    assert [e.id for e in known.errors] == ["model.context_length_above_model", "model.quantization_mismatch"]
    assert known.errors[0].sglang_first
    unknown = checked(profile, HostFacts("0.5.23", "9.0", 1))
    assert unknown.ok
