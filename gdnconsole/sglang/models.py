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


# -- what a checkpoint's config.json says beyond its architecture (issue 26) -----------------------------

# The keys SGLang reads the context length from, first found wins (srt/utils/hf_transformers/common.py:356-362
# in 0.5.11, the same list in 0.5.23).
CONTEXT_LENGTH_KEYS = (
    "max_sequence_length",
    "seq_length",
    "max_seq_len",
    "model_max_length",
    "max_position_embeddings",
)


def text_config_of(config: Mapping[str, object]) -> Mapping[str, object]:
    """The language model's own config: ``text_config`` of a multimodal checkpoint, else the config."""
    text = config.get("text_config")
    return text if isinstance(text, Mapping) else config


def context_length_of(config: Mapping[str, object]) -> int | None:
    """SGLang's derived context length (``get_context_length``, 511 common.py:365-382): the first context
    key, times the RoPE scaling factor unless the scaling keeps the original length. None when the config
    names none of the keys (SGLang would then read the defaults of the config's class, which we lack)."""
    text = text_config_of(config)
    factor: float = 1
    scaling = text.get("rope_scaling")
    if isinstance(scaling, Mapping) and scaling:
        raw = scaling.get("factor", 1)
        factor = raw if isinstance(raw, int | float) and not isinstance(raw, bool) else 1
        if "original_max_position_embeddings" in scaling or scaling.get("rope_type") == "llama3":
            factor = 1
    for key in CONTEXT_LENGTH_KEYS:
        value = text.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                return None  # a damaged config: no guess
            return int(factor * value)
    return None


def quant_method_of(config: Mapping[str, object]) -> str | None:
    """The checkpoint's own ``quantization_config.quant_method``, lowercased, as SGLang reads it
    (511 model_config.py:1054-1066); None for an unquantized checkpoint or one we cannot read."""
    for where in (config, text_config_of(config)):
        for key in ("quantization_config", "compression_config"):
            quant = where.get(key)
            if isinstance(quant, Mapping):
                method = quant.get("quant_method")
                return method.lower() if isinstance(method, str) else None
    return None
