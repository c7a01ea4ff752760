"""Which architecture a model is (models.architecture_of): its config.json's word when there is one, else
a guess from its name; which architectures are hybrid Gated-DeltaNet; and a model's Hugging Face cache
folder."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.models import HYBRID_GDN_ARCHS, architecture_of, hf_cache_dir, is_hybrid_gdn


def test_config_json_architectures_first_entry_wins_over_the_name() -> None:
    config = {"architectures": ["Qwen3NextForCausalLM", "LlamaForCausalLM"]}
    assert architecture_of("meta-llama/Llama-3.1-8B", config) == "Qwen3NextForCausalLM"


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"architectures": []},
        {"architectures": "Qwen3NextForCausalLM"},
        {"architectures": [None, "Qwen3NextForCausalLM"]},
        {"architectures": [3]},
        {"model_type": "qwen3_next"},
    ],
)
def test_a_config_without_a_usable_architecture_falls_back_to_the_name(config: dict[str, object]) -> None:
    assert architecture_of("meta-llama/Llama-3.1-8B", config) == "LlamaForCausalLM"
    assert architecture_of("some/unknown", config) is None


@pytest.mark.parametrize(
    ("model", "architecture"),
    [
        ("Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen3NextForCausalLM"),
        ("/models/qwen3-next-80b/", "Qwen3NextForCausalLM"),
        ("Qwen/Qwen3.5-35B-A3B", "Qwen3_5MoeForConditionalGeneration"),
        ("Qwen/Qwen3.6-27B", "Qwen3_5ForConditionalGeneration"),
        ("Qwen/Qwen3-30B-A3B", "Qwen3MoeForCausalLM"),
        ("Qwen/Qwen3-8B", "Qwen3ForCausalLM"),
        ("Qwen/Qwen2.5-7B-Instruct", "Qwen2ForCausalLM"),
        ("deepseek-ai/DeepSeek-V3.2-Exp", "DeepseekV32ForCausalLM"),
        ("deepseek-ai/DeepSeek-R1", "DeepseekV3ForCausalLM"),
        ("deepseek-ai/DeepSeek-V2-Lite", "DeepseekV2ForCausalLM"),
        ("meta-llama/Llama-3.1-8B", "LlamaForCausalLM"),
        ("mistralai/Mistral-7B-v0.3", "MistralForCausalLM"),
        ("openai/gpt-oss-120b", "GptOssForCausalLM"),
        ("zai-org/GLM-4.5-Air", "Glm4MoeForCausalLM"),
        ("xai-org/grok-1", "Grok1ForCausalLM"),
        ("some/unknown", None),
        ("", None),
    ],
)
def test_the_architecture_is_guessed_from_the_name_most_specific_first(
    model: str, architecture: str | None
) -> None:
    assert architecture_of(model) == architecture
    assert architecture_of(model, None) == architecture


def test_hybrid_gdn_is_exactly_the_hybrid_gated_deltanet_classes() -> None:
    assert all(is_hybrid_gdn(arch) for arch in HYBRID_GDN_ARCHS)
    assert is_hybrid_gdn("Qwen3NextForCausalLM") and is_hybrid_gdn("Qwen3_5MoeForCausalLM")
    assert not is_hybrid_gdn("Qwen3ForCausalLM")
    assert not is_hybrid_gdn("NemotronHForCausalLM")  # mamba state, but not Gated-DeltaNet
    assert not is_hybrid_gdn(None)


@pytest.mark.parametrize(
    ("model", "folder"),
    [
        ("Qwen/Qwen3-8B", "models--Qwen--Qwen3-8B"),
        ("Qwen/Qwen3-8B/", "models--Qwen--Qwen3-8B"),
        ("meta-llama/Llama-3.1-8B", "models--meta-llama--Llama-3.1-8B"),
        ("Xenova/all-MiniLM-L6-X", "models--Xenova--all-MiniLM-L6-X"),
        ("/models/qwen", None),
        ("./models/qwen", None),
        ("./qwen", None),
        ("~/qwen", None),
        ("a/b/c", None),
        ("qwen", None),
        ("", None),
    ],
)
def test_only_an_org_slash_name_has_a_hugging_face_cache_folder(model: str, folder: str | None) -> None:
    assert hf_cache_dir(model) == folder
