"""Run every benchmark in bench/ (files named bench_*.py) and print their figures."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path


def main() -> int:
    benches = sorted(Path(__file__).parent.glob("bench_*.py"))
    if not benches:
        print("no benchmarks yet")
        return 0
    for path in benches:
        print(f"== {path.stem}")
        runpy.run_path(str(path), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
