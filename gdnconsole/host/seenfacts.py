"""What each host said of itself the last time a console reached it (SGLang version, compute capability,
GPUs and their memory), kept beside the journal: `config check` runs the rules for a real host's profiles
without connecting to it, and says when the facts were seen."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

from gdnconsole import readback, safefile
from gdnconsole.host.journal import default_dir
from gdnconsole.host.state import HostFacts
from gdnconsole.readback import BadRecord

FILE_MAX = 64 << 10  # a few hundred bytes are written


@dataclass(frozen=True)
class Seen:
    facts: HostFacts
    time: float  # epoch seconds when the host said so


def path_for(host: str, directory: Path | None = None) -> Path:
    return (directory or default_dir()) / f"{host}.facts.json"


def remember(host: str, facts: HostFacts, directory: Path | None = None) -> None:
    """Keep ``facts`` (once the host named its SGLang version); written whole, never half."""
    if facts.sglang is None:
        return
    text = json.dumps({**facts.to_json(), "time": time.time()}) + "\n"
    safefile.write_text(path_for(host, directory), text)


def recall(host: str, directory: Path | None = None) -> Seen | None:
    """The facts last seen for ``host``; None when none were kept (or the file is not ours to read)."""
    try:  # a FIFO is not waited on; damage of any kind (deep nesting included) is no facts
        raw = readback.loads_json(readback.read_regular(path_for(host, directory), FILE_MAX))
    except (OSError, BadRecord):
        return None
    facts = HostFacts.parse(raw)
    when = raw.get("time") if isinstance(raw, dict) else None
    if facts.sglang is None or isinstance(when, bool) or not isinstance(when, int | float):
        return None
    try:
        seen = float(when)
    except OverflowError:  # a 400-digit time
        return None
    return Seen(facts, seen) if math.isfinite(seen) else None
