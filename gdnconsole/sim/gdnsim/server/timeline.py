"""How long each startup span takes at ``speed = 1.0`` (the ct129 profile adds up to about 20 s).

Every span is divided by ``speed`` from sim.json; only processes of the simulator sleep on these.
"""

from __future__ import annotations

import time

import gdnsim.config as config

SPANS = {
    "args": 0.3,  # argument processing and the args dump
    "tokenizer": 0.6,  # tokenizer, chat template, multimodal processor imports (main)
    "spawn": 1.5,  # a scheduler process imports torch and sglang
    "dist_init": 0.8,
    "weights_per_gib": 0.37,  # checkpoint loading rate: ~2.7 GB/s per rank
    "draft_weights": 0.6,
    "pools": 0.5,
    "attention": 0.2,
    "graph_per_bs": 0.35,  # one captured batch size
    "draft_graph": 1.0,
    "ready": 0.3,
    "uvicorn": 0.4,
    "warmup_wait": 0.5,  # the warm-up thread polls /model_info first
    "warmup": 0.5,
    "drain_log": 5.0,  # "Gracefully exiting…" interval
    "health_timeout": 20.0,  # SGLANG_HEALTH_CHECK_TIMEOUT
    "crash": 0.3,
}


def span(name: str, factor: float = 1.0) -> float:
    """Wall-clock seconds of a span (``factor`` scales it, e.g. by gigabytes)."""
    return config.load().scaled(SPANS[name] * factor)


def pause(name: str, factor: float = 1.0) -> None:
    time.sleep(span(name, factor))
