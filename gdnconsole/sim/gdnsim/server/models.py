"""What the simulator knows about a model: its architecture class and the shapes that size its memory.

A local directory with ``config.json`` is read (``architectures`` and the usual shape keys, nested under
``text_config`` for multimodal checkpoints); otherwise the Hugging Face name is matched against a few
families and the size is taken from the ``NNB`` in the name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

GIB = 1 << 30
HYBRID_GDN_ARCHS = (
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration",
    "Qwen3NextForCausalLM",
)
# Archs whose mamba state supports extra_buffer (523 srt/arg_groups/overrides.py:401-435, abridged).
EXTRA_BUFFER_ARCHS = HYBRID_GDN_ARCHS


@dataclass(frozen=True)
class ModelSpec:
    arch: str  # the HF architecture class SGLang names in "Load weight end. … type=…"
    model_type: str
    params_b: float  # total parameters, billions
    hidden: int
    layers: int
    full_attn_layers: int  # layers with a KV cache (all of them on a dense model)
    kv_heads: int
    head_dim: int
    vocab: int
    context_len: int
    linear_k_heads: int = 0  # Gated DeltaNet layers (hybrid models only)
    linear_v_heads: int = 0
    linear_head_dim: int = 128
    conv_kernel: int = 4

    @property
    def hybrid_gdn(self) -> bool:
        return self.arch in HYBRID_GDN_ARCHS

    @property
    def linear_layers(self) -> int:
        return self.layers - self.full_attn_layers


# The reference model (ARCHITECTURE.md): Qwen3.6-27B, 48 Gated DeltaNet + 16 full-attention layers.
QWEN36_27B = ModelSpec(
    arch="Qwen3_5ForConditionalGeneration",
    model_type="qwen3_5",
    params_b=27.0,
    hidden=5120,
    layers=64,
    full_attn_layers=16,
    kv_heads=4,
    head_dim=256,
    vocab=248320,
    context_len=262144,
    linear_k_heads=16,
    linear_v_heads=48,
)


def describe(model_path: str) -> ModelSpec:
    """The spec of the model at ``model_path`` (a local directory or a Hugging Face name)."""
    config_file = Path(model_path) / "config.json"
    from_name = _from_name(model_path)
    if config_file.is_file():
        try:
            return _from_config(json.loads(config_file.read_text()), from_name)
        except (OSError, ValueError, TypeError):
            return from_name
    return from_name


def _params_from_name(name: str) -> float | None:
    """``Qwen3.6-27B`` → 27.0; ``Qwen3.5-35B-A3B`` → 35.0 (total, not active)."""
    match = re.search(r"(\d+(?:\.\d+)?)[Bb](?![a-zA-Z])", name)
    return float(match.group(1)) if match else None


def _dense_shape(params_b: float) -> tuple[int, int, int]:
    """(layers, hidden, kv_heads) typical of a dense decoder of this size."""
    for limit, shape in (
        (2, (28, 2048, 8)),
        (5, (36, 2560, 8)),
        (10, (32, 4096, 8)),
        (20, (40, 5120, 8)),
        (40, (64, 5120, 8)),
        (90, (80, 8192, 8)),
    ):
        if params_b <= limit:
            return shape
    return 96, 12288, 8


def _from_name(name: str) -> ModelSpec:
    params = _params_from_name(name) or 8.0
    lowered = name.lower()
    if re.search(r"qwen3\.[56]", lowered) or "qwen3-next" in lowered:
        arch = "Qwen3NextForCausalLM" if "next" in lowered else "Qwen3_5ForConditionalGeneration"
        if "-a" in lowered and re.search(r"-a\d+(\.\d+)?b", lowered) and "next" not in lowered:
            arch = "Qwen3_5MoeForConditionalGeneration"
        layers = 64 if params >= 20 else 48 if params >= 8 else 32
        return replace(QWEN36_27B, arch=arch, params_b=params, layers=layers, full_attn_layers=layers // 4)
    layers, hidden, kv_heads = _dense_shape(params)
    arch, model_type, vocab = "LlamaForCausalLM", "llama", 128256
    if "qwen3" in lowered:
        arch, model_type, vocab = "Qwen3ForCausalLM", "qwen3", 151936
    elif "qwen2" in lowered:
        arch, model_type, vocab = "Qwen2ForCausalLM", "qwen2", 152064
    return ModelSpec(
        arch=arch,
        model_type=model_type,
        params_b=params,
        hidden=hidden,
        layers=layers,
        full_attn_layers=layers,
        kv_heads=kv_heads,
        head_dim=128,
        vocab=vocab,
        context_len=131072 if "llama" in model_type else 40960,
    )


def _from_config(raw: dict[str, object], fallback: ModelSpec) -> ModelSpec:
    """Overlay what ``config.json`` says on the name-based guess."""
    text = raw.get("text_config") if isinstance(raw.get("text_config"), dict) else raw
    assert isinstance(text, dict)
    archs = raw.get("architectures") or [fallback.arch]
    arch = str(archs[0]) if isinstance(archs, list) and archs else fallback.arch
    layers = int(text.get("num_hidden_layers", fallback.layers))
    interval = int(text.get("full_attention_interval", 0) or 0)
    hybrid = arch in HYBRID_GDN_ARCHS
    full = layers // (interval or 4) if hybrid else layers  # hybrid: one full-attention layer in four
    return replace(
        fallback,
        arch=arch,
        model_type=str(raw.get("model_type", fallback.model_type)),
        hidden=int(text.get("hidden_size", fallback.hidden)),
        layers=layers,
        full_attn_layers=full,
        kv_heads=int(text.get("num_key_value_heads", fallback.kv_heads)),
        head_dim=int(text.get("head_dim", fallback.head_dim)),
        vocab=int(text.get("vocab_size", fallback.vocab)),
        context_len=int(text.get("max_position_embeddings", fallback.context_len)),
        linear_k_heads=int(text.get("linear_num_key_heads", fallback.linear_k_heads or 16)),
        linear_v_heads=int(text.get("linear_num_value_heads", fallback.linear_v_heads or 48)),
    )
