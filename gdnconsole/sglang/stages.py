"""The startup stages of an SGLang server, in the order a healthy server passes them."""

from __future__ import annotations

from enum import IntEnum


class Stage(IntEnum):
    STARTING = 0  # argument processing, CLI notices, args dump, chat template detection
    DISTRIBUTED = 1  # torch distributed / parallel init, NCCL
    LOADING = 2  # Load weight begin, checkpoint shards
    LOADED = 3  # Load weight end
    MEMORY = 4  # KV / mamba pools, memory pool end
    GRAPHS = 5  # CUDA graph capture of any family
    SCHEDULER_READY = 6  # max_total_num_tokens=…
    LISTENING = 7  # uvicorn started
    WARMUP = 8  # warm-up requests
    READY = 9  # The server is fired up and ready to roll!
    SERVING = 10  # batch lines and requests after ready

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, label: str) -> Stage:
        return cls[label.upper()]


class Severity(IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2
    FATAL = 3

    @property
    def label(self) -> str:
        return self.name.lower()


# Stages that only the main process passes; the others are reached by every rank.
MAIN_STAGES = frozenset({Stage.STARTING, Stage.LISTENING, Stage.WARMUP, Stage.READY})
