"""Stand-in for sglang/srt/configs/model_config.py: the two checks ``ModelConfig.__init__`` makes of the
checkpoint's config.json against the flags (511 configs/model_config.py:452-480, 1006-1119; 523 :1295-1316,
2000-2155): the context length, then the quantization method."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

CONTEXT_LENGTH_KEYS = (
    "max_sequence_length",
    "seq_length",
    "max_seq_len",
    "model_max_length",
    "max_position_embeddings",
)
COMPATIBLE = {
    "modelopt_fp8": ["modelopt"],
    "modelopt_fp4": ["modelopt"],
    "modelopt_mixed": ["modelopt"],
    "petit_nvfp4": ["modelopt"],
    "w8a8_int8": ["compressed-tensors", "compressed_tensors"],
    "w8a8_fp8": ["compressed-tensors", "compressed_tensors"],
}


def config_file(model_path: str) -> Path | None:
    """Where SGLang finds the checkpoint's config.json: a local directory's, else the Hugging Face cache's
    snapshot (``HF_HUB_CACHE``, else ``HF_HOME``/hub), the revision refs/main names first."""
    local = Path(model_path).expanduser() / "config.json"
    if local.is_file() or model_path.startswith(("/", ".", "~")) or model_path.count("/") != 1:
        return local if local.is_file() else None
    home = os.environ.get("HF_HOME") or os.path.expanduser("~/.cache/huggingface")
    repo = Path(os.environ.get("HF_HUB_CACHE") or os.path.join(home, "hub"))
    repo = repo.expanduser() / ("models--" + model_path.replace("/", "--"))
    try:
        revision = (repo / "refs" / "main").read_text().strip()
    except OSError:
        revision = ""
    snapshots = [repo / "snapshots" / revision] if revision and "/" not in revision else []
    snapshots += sorted((repo / "snapshots").glob("*"))
    return next((s / "config.json" for s in snapshots if (s / "config.json").is_file()), None)


def _config(model_path: str) -> dict[str, Any] | None:
    path = config_file(model_path)
    if path is None:
        return None
    try:
        loaded = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _text_config(config: dict[str, Any]) -> dict[str, Any]:
    text = config.get("text_config")
    return text if isinstance(text, dict) else config


def derived_context_length(config: dict[str, Any]) -> int | None:
    """``get_context_length`` (511 srt/utils/hf_transformers/common.py:365-382)."""
    text = _text_config(config)
    scaling = text.get("rope_scaling")
    factor = 1
    if isinstance(scaling, dict) and scaling:
        factor = scaling.get("factor", 1)
        if "original_max_position_embeddings" in scaling or scaling.get("rope_type") == "llama3":
            factor = 1
    for key in CONTEXT_LENGTH_KEYS:
        if isinstance(text.get(key), int):
            return int(factor * text[key])
    return None


def verify(model_path: str, context_length: int | None, quantization: str | None) -> str | None:
    """Raise as ModelConfig does; return the quantization SGLang then holds (the checkpoint's, if none)."""
    config = _config(model_path)
    if config is None:
        return quantization
    derived = derived_context_length(config)
    allowed = os.environ.get("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "").lower() in ("1", "true")
    if context_length is not None and derived is not None and context_length > derived and not allowed:
        raise ValueError(
            f"Warning: User-specified context_length ({context_length}) is greater than the derived "
            f"context_length ({derived}). This may lead to incorrect model outputs or CUDA errors. Note that "
            "the derived context_length may differ from max_position_embeddings in the model's config. To "
            "allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
        )
    quant = config.get("quantization_config")
    if not isinstance(quant, dict) or not isinstance(quant.get("quant_method"), str):
        return quantization
    method = quant["quant_method"].lower()
    if quantization is None:
        return method
    if quantization.lower() != method and method not in COMPATIBLE.get(quantization.lower(), []):
        raise ValueError(
            "Quantization method specified in the model config "
            f"({method}) does not match the quantization "
            f"method specified in the `quantization` argument "
            f"({quantization.lower()})."
        )
    return quantization
