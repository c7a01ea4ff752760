"""Hand mutants for the code mutmut cannot reach in the SGLang core: properties and a cached function.

mutmut mutates plain functions only (tests/tools/mutation.py says which code it skips). These few edits,
each what a slip in that code could look like, are applied one at a time to a copy of the package in a
temporary folder, and the tests mutmut uses run against the copy: each edit must make a test fail.
A clean copy is run first and must pass, or nothing here would mean anything.

    python tests/tools/hand_mutants.py [--only PATH ...]     (part of `make mutation`)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRACKER = "gdnconsole/sglang/tracker.py"
LOGLINE = "gdnconsole/sglang/logline.py"
TESTS = ["tests/sglang"]

# (file, what is there, what a slip would make of it, what the slip means)
MUTANTS: list[tuple[str, str, str, str]] = [
    (
        TRACKER,
        "return self.stage >= Stage.READY and self.fatal is None",
        "return self.stage >= Stage.READY",
        "Startup.ready: a server that crashed after ready is still ready",
    ),
    (
        TRACKER,
        "return self.stage >= Stage.READY and self.fatal is None",
        "return self.stage > Stage.READY and self.fatal is None",
        "Startup.ready: only once serving",
    ),
    (
        TRACKER,
        "return next((p for p in fatals if not p.wrapper), fatals[0] if fatals else None)",
        "return fatals[0] if fatals else None",
        "Startup.fatal: a SIGQUIT notice hides the root cause",
    ),
    (
        TRACKER,
        "return next((p for p in fatals if not p.wrapper), fatals[0] if fatals else None)",
        "return next((p for p in fatals if not p.wrapper), None)",
        "Startup.fatal: a crash reported only by a wrapper line is no crash",
    ),
    (
        TRACKER,
        "return [p for p in self.problems if p.severity is Severity.WARNING]",
        "return [p for p in self.problems if p.severity >= Severity.WARNING]",
        "Startup.warnings: errors and the fatal counted as warnings",
    ),
    (
        TRACKER,
        "return self.startups[-1] if self.startups else None",
        "return self.startups[0] if self.startups else None",
        "StageTracker.current: the first startup, not the running one",
    ),
    (
        LOGLINE,
        "return self.stamp is not None",
        "return self.rank is not None",
        "LogLine.framed: only ranked lines",
    ),
    (
        LOGLINE,
        "return _epoch(self.stamp) + (self.ms or 0) / 1000.0",
        "return _epoch(self.stamp)",
        "LogLine.time: milliseconds dropped",
    ),
    (
        LOGLINE,
        "    if len(stamp) == 14:",
        "    if len(stamp) == 15:",
        "_epoch: the diffusion runtime's MM-DD stamp not read",
    ),
]


def copy_tree(work: Path) -> None:
    skip = shutil.ignore_patterns("__snapshots__", "__pycache__")  # no bytecode: each edit is compiled anew
    shutil.copytree(ROOT / "gdnconsole", work / "gdnconsole", symlinks=True, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", work / "pyproject.toml")
    shutil.copytree(ROOT / "tests", work / "tests", ignore=skip)


def passes(work: Path) -> bool:
    env = {**os.environ, "PYTHONPATH": str(work), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)  # ../shared is not beside the copy: its one check skips
    argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *TESTS]
    return subprocess.run(argv, cwd=work, env=env, capture_output=True).returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="PATH", help="only the hand mutants of these modules")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or m[0] in args.only]
    if not chosen:
        return 0
    survived: list[str] = []
    with tempfile.TemporaryDirectory(prefix="gdn-hand-mutants-") as tmp:
        work = Path(tmp)
        copy_tree(work)
        if not passes(work):
            print("hand mutants: the tests fail on an unchanged copy; nothing checked")
            return 1
        for path, before, after, meaning in chosen:
            target = work / path
            original = target.read_text()
            if before not in original:
                print(f"hand mutant out of date (the code changed): {meaning}")
                survived.append(meaning)
                continue
            target.write_text(original.replace(before, after, 1))
            try:
                if passes(work):
                    survived.append(meaning)
                    print(f"  survived: {meaning}")
            finally:
                target.write_text(original)
    killed = len(chosen) - len(survived)
    print(f"hand mutants (what mutmut cannot reach): {killed} killed of {len(chosen)}")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
