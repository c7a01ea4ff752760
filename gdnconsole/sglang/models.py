"""Which architecture a model is, as SGLang would see it (``config.json`` ``architectures[0]``). Pure.

SGLang's rules differ by architecture: hybrid Gated-DeltaNet models (Qwen3.5/3.6, Qwen3-Next) carry mamba
state and meet the radix-cache rules of FACTS §4.3; Llama gets other speculative defaults (§4.1).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# Hybrid GDN classes whose mamba state supports extra_buffer (511 server_args.py:2198-2225;
# 523 arg_groups/overrides.py:369-435).
HYBRID_GDN_ARCHS = frozenset(
    {
        "Qwen3NextForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5ForCausalLM",
        "Qwen3_5MoeForCausalLM",
    }
)

# Every architecture whose mamba state the radix cache tracks (523 arg_groups/overrides.py:369-399).
MAMBA_RADIX_ARCHS = HYBRID_GDN_ARCHS | frozenset(
    {
        "KimiLinearForCausalLM",
        "KimiK3ForConditionalGeneration",
        "BailingMoeV2_5ForCausalLM",
        "BailingMoeV3ForCausalLM",
        "BailingMoeV3VLForConditionalGeneration",
        "InternS2PreviewForConditionalGeneration",
        "InternS2MobiusForConditionalGeneration",
        "Qwen4ExpForConditionalGeneration",
        "MiniCPMV4_6ForConditionalGeneration",
        "MiniCPMV4_7ForConditionalGeneration",
        "NemotronHForCausalLM",
        "NemotronHPuzzleForCausalLM",
        "NemotronH_Omni_Reasoning_V3",
        "FalconH1ForCausalLM",
        "JetNemotronForCausalLM",
        "JetVLMForConditionalGeneration",
        "Lfm2ForCausalLM",
        "Lfm2MoeForCausalLM",
        "ZayaForCausalLM",
        "Glm5NextForConditionalGeneration",
        "GraniteMoeHybridForCausalLM",
    }
)

# Name patterns, most specific first: (pattern on the lowercased name, architecture).
_BY_NAME: tuple[tuple[str, str], ...] = (
    (r"qwen3-next", "Qwen3NextForCausalLM"),
    (r"qwen3\.[56].*-a\d+(\.\d+)?b", "Qwen3_5MoeForConditionalGeneration"),
    (r"qwen3\.[56]", "Qwen3_5ForConditionalGeneration"),
    (r"qwen3.*-a\d+(\.\d+)?b", "Qwen3MoeForCausalLM"),
    (r"qwen3", "Qwen3ForCausalLM"),
    (r"qwen2", "Qwen2ForCausalLM"),
    (r"deepseek-v3\.2", "DeepseekV32ForCausalLM"),
    (r"deepseek-(v3|r1)", "DeepseekV3ForCausalLM"),
    (r"deepseek-v2", "DeepseekV2ForCausalLM"),
    (r"llama", "LlamaForCausalLM"),
    (r"mistral", "MistralForCausalLM"),
    (r"gpt-oss", "GptOssForCausalLM"),
    (r"glm-4\.[56]", "Glm4MoeForCausalLM"),
    (r"grok-1", "Grok1ForCausalLM"),
)


def architecture_of(model: str, config_json: Mapping[str, object] | None = None) -> str | None:
    """``architectures[0]`` of the model's config.json when given, else a guess from its name."""
    if config_json is not None:
        archs = config_json.get("architectures")
        if isinstance(archs, list) and archs and isinstance(archs[0], str):
            return archs[0]
    name = model.rstrip("/").lower()
    for pattern, arch in _BY_NAME:
        if re.search(pattern, name):
            return arch
    return None


def is_hybrid_gdn(architecture: str | None) -> bool:
    return architecture in HYBRID_GDN_ARCHS


def hf_cache_dir(model: str) -> str | None:
    """``ORG/NAME`` → ``models--ORG--NAME`` (the Hugging Face hub cache folder); None for a path."""
    parts = model.strip("/").split("/")
    if len(parts) != 2 or model.startswith(("/", ".", "~")):
        return None
    return "models--" + "--".join(parts)
