"""The flag checker on a launch profile: its argv and its environment, as the launcher would send them.
The model's architecture is read from that argv, as SGLang reads it: a --model-path in the profile's args
comes last and wins. One place for `config check`, the flag form and the launcher to share. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gdnconsole.config.hosts import Profile
from gdnconsole.sglang.launch import server_args
from gdnconsole.sglang.rules import CheckResult, check


def check_profile(
    profile: Profile,
    *,
    sglang: str,
    compute_capability: str | None,
    gpus: int | None,
    gpu_memory_mb: float | None = None,
    model_config: Mapping[str, Any] | None = None,
) -> CheckResult:
    """``model_config``: the model's config.json as the host holds it, when read (its context length,
    quantization and attention backends are checked only then)."""
    return check(
        server_args(profile),
        sglang=sglang,
        compute_capability=compute_capability,
        gpus=gpus,
        env=profile.env,
        gpu_memory_mb=gpu_memory_mb,
        model_config=model_config,
    )
