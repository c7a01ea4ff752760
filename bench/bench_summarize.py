"""`gdnconsole log summarize` on the 1 GB log, beside `grep -c "Decode batch"` on the same file.

Both run as separate processes, warm (the file is read once first so both find it in the page cache);
each figure is the best of three runs. Target from the issue: summarize within 1.5x of grep.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from biglog import big_log

RUNS = 3


def best_of(argv: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        # Not /dev/null: GNU grep notices that and stops at the first match.
        subprocess.run(argv, check=True, stdout=subprocess.PIPE)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    path = big_log()
    size_mb = path.stat().st_size / 2**20
    subprocess.run(["cat", str(path)], check=True, stdout=subprocess.DEVNULL)  # warm the page cache
    grep = shutil.which("grep") or "grep"
    gdn = str(Path(sys.executable).with_name("gdnconsole"))
    t_grep = best_of([grep, "-c", "Decode batch", str(path)])
    t_sum = best_of([gdn, "log", "summarize", "--json", str(path)])
    print(f"file: {path} ({size_mb:.0f} MiB)")
    print(f"grep -c 'Decode batch':        {t_grep:6.2f} s")
    print(f"gdnconsole log summarize --json: {t_sum:6.2f} s")
    print(f"ratio summarize / grep:          {t_sum / t_grep:6.2f}x   (target 1.5x)")


if __name__ == "__main__":
    main()
