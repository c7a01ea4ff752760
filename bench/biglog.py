"""The 1 GB benchmark log: `$GDNCONSOLE_BENCH_LOG`, else bench/out/big1g.log (generated when missing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"


def big_log() -> Path:
    given = os.environ.get("GDNCONSOLE_BENCH_LOG")
    if given:
        return Path(given)
    path = OUT / "big1g.log"
    if not path.exists():
        OUT.mkdir(exist_ok=True)
        print(f"generating {path} (1 GB)…", flush=True)
        subprocess.run([sys.executable, str(HERE / "gen_log.py"), str(path), "--mb", "1024"], check=True)
    return path
