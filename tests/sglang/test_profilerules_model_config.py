"""A profile checked with the model's config.json, as a host that holds the model gives it (issue 26): the
checkpoint's context length and quantization reach the rules; without it, no finding of them."""

from __future__ import annotations

from gdnconsole.config.hosts import Profile
from gdnconsole.sglang.profilerules import check_profile

CONFIG = {
    "architectures": ["Qwen3ForCausalLM"],
    "max_position_embeddings": 40960,
    "quantization_config": {"quant_method": "fp8"},
}


def test_the_models_config_reaches_the_rules() -> None:
    profile = Profile(
        name="p", model="Qwen/Qwen3-8B-FP8", args=("--context-length", "65536", "--quantization", "awq")
    )
    known = check_profile(profile, sglang="0.5.23", compute_capability="9.0", gpus=1, model_config=CONFIG)
    assert [e.id for e in known.errors] == ["model.context_length_above_model", "model.quantization_mismatch"]
    assert known.errors[0].sglang_first
    unknown = check_profile(profile, sglang="0.5.23", compute_capability="9.0", gpus=1)
    assert unknown.ok
