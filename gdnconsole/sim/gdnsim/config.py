"""The simulated host's settings: ``$GDNSIM_HOME/sim.json`` holds the host's ``simulate`` table verbatim.

The console writes the table as the user wrote it; defaults and their meaning live here, in one place.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path

HOME_ENV = "GDNSIM_HOME"

SCENARIOS = (
    "ok",  # a healthy server
    "crash-serving",  # the scheduler hits an exception on the first real request
    "oom-graph",  # CUDA OOM during CUDA graph capture, with SGLang's hint block
    "nccl-error",  # NCCL error during distributed init
    "hang-graph",  # graph capture stops making progress; the process lives on
    "health-fail",  # ready, then /health answers 503 and requests never finish
    "port-in-use",  # uvicorn cannot bind the port after the model has loaded
)
CHAT_FAULTS = (  # how /v1/chat/completions misbehaves; read from sim.json on every chat request
    "none",  # answers as SGLang does
    "hang",  # reads the request, then sends nothing (not even a status line) until the client leaves
    "drop",  # closes the connection mid-answer: no terminating chunk (streamed), no response (not streamed)
    "bad-sse",  # streamed: one line after a few good chunks is not JSON; the stream then goes on to [DONE]
    "bad-json",  # not streamed: 200 with a truncated JSON body; streamed: as bad-sse
)


@dataclass(frozen=True)
class SimConfig:
    gpus: int = 2
    gpu_name: str = "NVIDIA RTX A6000"
    gpu_mib: int = 49140
    compute_capability: str = "8.6"
    sglang: str = "0.5.11"
    speed: float = 1.0  # scales the startup timeline: 10.0 runs it ten times faster
    ffmpeg: bool = True  # False: the torchcodec "Ignore import error" block appears (libavutil missing)
    scenario: str = "ok"
    tokens_per_s: float = 40.0  # decode rate of one request, in tokens per wall-clock second
    release_lag_s: float = 0.5  # GPU memory stays held this long after its process is gone
    # The ready line reaches the log this long after /health answers 200 (SGLang marks the server up,
    # then logs; a console reading the log sees it a moment after): 0 writes it at once.
    ready_log_lag_s: float = 0.0
    nvml: str = "ok"  # "ok", "no-driver" (NVMLError_LibraryNotFound at init) or "absent" (ImportError)
    nvidia_smi: bool = True  # whether the stand-in nvidia-smi on PATH answers
    driver_version: str = "580.95.05"
    cuda_version: str = "13.0"
    chat_fault: str = "none"  # one of CHAT_FAULTS; an unknown value counts as "none"
    extra: dict[str, object] = field(default_factory=dict)  # keys this version does not know

    def scaled(self, seconds: float) -> float:
        """Wall-clock seconds for a span of the simulated timeline."""
        return seconds / self.speed if self.speed > 0 else seconds


def home() -> Path:
    value = os.environ.get(HOME_ENV)
    if not value:
        raise RuntimeError(f"{HOME_ENV} is not set: the simulated host has no home directory")
    return Path(value)


def load(path: Path | None = None) -> SimConfig:
    """Read ``sim.json`` from the home directory (missing file: all defaults)."""
    path = path or home() / "sim.json"
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raw = {}
    known = {f.name for f in fields(SimConfig)} - {"extra"}
    kwargs = {k: v for k, v in raw.items() if k in known}
    extra = {k: v for k, v in raw.items() if k not in known}
    if "gpu_mib" in kwargs:
        kwargs["gpu_mib"] = int(kwargs["gpu_mib"])
    if "speed" in kwargs:
        kwargs["speed"] = float(kwargs["speed"])
    if "chat_fault" in kwargs:
        fault = kwargs["chat_fault"]
        kwargs["chat_fault"] = fault if fault in CHAT_FAULTS else "none"
    return SimConfig(**kwargs, extra=extra)
