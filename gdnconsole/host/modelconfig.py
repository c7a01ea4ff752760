"""The model's config.json as the host holds it, for the rules that read the checkpoint (issue 26): its
context length (with RoPE scaling), its ``quant_method``, its architecture.

Read on the host where SGLang would find it (a local directory's config.json, else the Hugging Face cache's
snapshot: ``hostcheck.READ_SCRIPT``), at most ``LIMIT`` bytes. The text is untrusted: a damaged or hostile
file is no config and one warning, never a traceback and never a guess. Each config read is remembered
for the host (``seenmodels``), so ``config check`` can use the last one seen without connecting.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gdnconsole.config.hosts import Host
from gdnconsole.host.link import SshTarget
from gdnconsole.sglang.models import context_length_of, hf_cache_dir, quant_method_of

LIMIT = 1 << 20  # a config.json is a few KiB; a multimodal one some tens
TIMEOUT_S = 15.0


@dataclass(frozen=True)
class ModelConfig:
    """``config``: the parsed object, None when unknown; ``warning``: why a file found was not used."""

    config: dict[str, Any] | None = None
    warning: str | None = None


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: a number no checkpoint holds
        raise ValueError(f"{text[:20]} is out of range")
    return value


def parse(text: str | None, model: str) -> ModelConfig:
    """``text`` (None or empty: no file found) as a config; anything else than a sane JSON object warns."""
    if text is None or not text.strip():
        return ModelConfig()
    if len(text.encode("utf-8", "replace")) > LIMIT:
        return too_large(model)
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        return _damaged(model, "nested too deeply")
    except ValueError:  # JSONDecodeError, NaN/Infinity, an integer over Python's digit limit
        return _damaged(model, "not JSON")
    if not isinstance(data, dict):
        return _damaged(model, "not a JSON object")
    try:  # what the rules derive from it must be derivable: a RoPE factor of 1e308 is damage, not a limit
        context_length_of(data)
        quant_method_of(data)
    except (ArithmeticError, ValueError, TypeError, AttributeError, RecursionError):
        return _damaged(model, "its context length or quantization cannot be read")
    return ModelConfig(data)


def too_large(model: str) -> ModelConfig:
    return _damaged(model, f"over {LIMIT // 1024} KiB")


def _damaged(model: str, why: str) -> ModelConfig:
    return ModelConfig(None, f"the config.json of {model} is unusable ({why}); its checks were not run")


async def fetch(
    host: Host, model: str, *, timeout: float = TIMEOUT_S, ssh: SshTarget | None = None
) -> ModelConfig:
    """The config of ``model`` on ``host``, remembered for it when read; unknown when unreachable."""
    from gdnconsole.host import hostcheck, seenmodels

    if not model:
        return ModelConfig()
    text = await hostcheck.read_model_config_text(host, model, hf_cache_dir(model), timeout=timeout, ssh=ssh)
    read = parse(text, model)
    if read.config is not None:
        seenmodels.remember(host.name, model, read.config)
    return read


def warn_once(read: ModelConfig, say: Callable[[str], None]) -> dict[str, Any] | None:
    """Say the warning (if any) and give the config (if any)."""
    if read.warning:
        say(read.warning)
    return read.config
