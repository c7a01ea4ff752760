"""The emulated SGLang version and the dialect boundaries of FACTS §2.3."""

from __future__ import annotations

import re
from functools import cache

import gdnsim.config as config

Version = tuple[int, int, int]


def parse(text: str) -> Version:
    """``"0.5.11"`` → ``(0, 5, 11)``; suffixes such as ``.dev3`` or ``rc1`` are ignored."""
    parts = [int(p) for p in re.findall(r"\d+", text)[:3]]
    while len(parts) < 3:
        parts.append(0)
    return parts[0], parts[1], parts[2]


@cache
def current() -> Version:
    """The version this simulated host runs (``sglang`` in sim.json)."""
    return parse(config.load().sglang)


def at_least(text: str) -> bool:
    return current() >= parse(text)


# Dialect predicates, one per row of FACTS §2.3 (boundaries as the table gives them).
def spec_algorithm_has_choices() -> bool:
    return not at_least("0.5.12")  # free-form from 0.5.12


def radix_strategy_renamed() -> bool:
    return at_least("0.5.14")  # --mamba-radix-cache-strategy; the old name is an alias until 0.5.19


def old_flag_names_removed() -> bool:
    return at_least("0.5.20")  # --mamba-scheduler-strategy and --cuda-graph-max-bs gone


def kv_line_has_dtype() -> bool:
    return at_least("0.5.14")


def named_cuda_graphs() -> bool:
    return at_least("0.5.14")  # "Capture target decode CUDA graph begin. backend=…"


def init_parallel() -> bool:
    return at_least("0.5.22")  # "Init parallel begin." and the server_args dict dump


def resolution_pipeline() -> bool:
    return at_least("0.5.22")  # validation in ServerArgs.resolve_once() (srt/arg_groups/*_hook.py)
