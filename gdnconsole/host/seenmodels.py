"""The config.json of each model a host last showed a console, kept beside its facts (``seenfacts``):
``config check`` checks a profile's context length and quantization without connecting, and says when the
host said so. A few models per host, newest first; the file is read back as untrusted."""

from __future__ import annotations

import contextlib
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gdnconsole import readback, safefile
from gdnconsole.host.journal import default_dir
from gdnconsole.readback import BadRecord

KEEP = 8  # models per host
FILE_MAX = 4 << 20  # KEEP configs of modelconfig.LIMIT at most, in practice a few tens of KiB


@dataclass(frozen=True)
class SeenConfig:
    config: dict[str, Any]
    time: float  # epoch seconds when the host showed it


def path_for(host: str, directory: Path | None = None) -> Path:
    return (directory or default_dir()) / f"{host}.models.json"


def _load(host: str, directory: Path | None) -> list[dict[str, Any]]:
    try:  # a FIFO is not waited on; damage of any kind is no configs
        raw = readback.loads_json(readback.read_regular(path_for(host, directory), FILE_MAX))
    except (OSError, BadRecord):
        return []
    entries = raw.get("models") if isinstance(raw, dict) else None
    return [e for e in entries if _valid(e)] if isinstance(entries, list) else []


def _valid(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    when = entry.get("time")
    if isinstance(when, bool) or not isinstance(when, int | float):
        return False
    try:
        finite = math.isfinite(float(when))
    except OverflowError:  # a 400-digit time
        return False
    return finite and isinstance(entry.get("model"), str) and isinstance(entry.get("config"), dict)


def remember(host: str, model: str, config: dict[str, Any], directory: Path | None = None) -> None:
    """Keep ``config`` as the host's newest for ``model``; written whole, never half. Best effort."""
    entries = [e for e in _load(host, directory) if e["model"] != model]
    entries.insert(0, {"model": model, "config": config, "time": time.time()})
    with contextlib.suppress(OSError):  # a state directory we cannot write loses the memory, not the check
        safefile.write_text(path_for(host, directory), json.dumps({"models": entries[:KEEP]}) + "\n")


def recall(host: str, model: str, directory: Path | None = None) -> SeenConfig | None:
    """The config ``host`` last showed for ``model``; None when none was kept (or the file is damaged)."""
    for entry in _load(host, directory):
        if entry["model"] == model:
            return SeenConfig(entry["config"], float(entry["time"]))
    return None
