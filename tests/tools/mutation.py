"""The score of `make mutation`: one line per mutated module, then the total, from mutmut's result files.

mutmut (pinned in pyproject.toml's test extra; [tool.mutmut] there) writes, per mutated module, a
``mutants/<path>.meta`` JSON whose ``exit_code_by_key`` maps each mutant to how its tests ended. A mutant
is *killed* when a test failed (or ran out of time); it *survived* when every test that calls the mutated
function passed; *no tests* when no selected test calls it (a survivor too, for the score). Survivors that
no test can tell apart from the original are listed with why in mutation-equivalents.toml: they leave the
denominator, and an entry that no longer names a survivor is reported, so the list cannot go stale.

mutmut mutates the bodies of plain functions and methods only. What it cannot reach is printed under
each module: functions with a decorator other than ``staticmethod``/``classmethod`` (properties, cached
functions), which tests/tools/hand_mutants.py mutates by hand, and code outside any function (regexes,
tables, enum values), which the tests of the functions that read them check instead.

    python -m tests.tools.mutation [--fail-under 90] [--survivors] [--only PATH ...]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENTS = ROOT / "mutation-equivalents.toml"

KILLED = {1, 3, 24, -24, 152, 255, 36}  # a failing test, pytest's internal error, or a timeout
SURVIVED = {0}
NO_TESTS = {5, 33}
SKIPPED = {34}


@dataclass
class Score:
    module: str
    killed: list[str] = field(default_factory=list)
    survived: list[str] = field(default_factory=list)
    no_tests: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    other: dict[str, object] = field(default_factory=dict)  # not checked, interrupted, suspicious

    @property
    def counted(self) -> int:
        return len(self.killed) + len(self.survived) + len(self.no_tests) + len(self.other)

    @property
    def percent(self) -> float:
        return 100.0 * len(self.killed) / self.counted if self.counted else 0.0

    def line(self, width: int) -> str:
        extra = f", {len(self.other)} not run" if self.other else ""
        return (
            f"{self.module:<{width}}  {self.percent:5.1f} %  {len(self.killed):4d} killed of {self.counted:4d}"
            f"  ({len(self.survived)} survived, {len(self.no_tests)} without a test,"
            f" {len(self.equivalent)} equivalent{extra})"
        )


def modules() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    return list(config["only_mutate"])


def equivalents() -> dict[str, str]:
    if not EQUIVALENTS.exists():
        return {}
    return {str(k): str(v) for k, v in tomllib.loads(EQUIVALENTS.read_text()).items()}


def score(module: str, known: dict[str, str]) -> Score | None:
    meta = ROOT / "mutants" / f"{module}.meta"
    if not meta.exists():
        return None
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    result = Score(module)
    for name, code in sorted(codes.items(), key=lambda item: _natural(item[0])):
        if code in SKIPPED:
            continue
        if code in KILLED:
            result.killed.append(name)
        elif name in known and code in SURVIVED | NO_TESTS:
            result.equivalent.append(name)
        elif code in SURVIVED:
            result.survived.append(name)
        elif code in NO_TESTS:
            result.no_tests.append(name)
        else:
            result.other[name] = code
    return result


def _natural(name: str) -> tuple[str, int]:
    stem, _, number = name.rpartition("_")
    return (stem, int(number)) if number.isdigit() else (name, 0)


def unreachable(module: str) -> list[str]:
    """What mutmut does not mutate in ``module``: decorated functions, and module-level statements."""
    tree = ast.parse((ROOT / module).read_text())
    out: list[str] = []
    constants = 0
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and _decorated(item):
                    out.append(f"{node.name}.{item.name} ({_decorators(item)})")
            if any(isinstance(b, ast.Name) and b.id.endswith(("Enum", "Flag")) for b in node.bases):
                out.append(f"{node.name}'s values (an enum)")
        elif isinstance(node, ast.FunctionDef) and _decorated(node):
            out.append(f"{node.name} ({_decorators(node)})")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            constants += 1
    if constants:
        out.append(f"{constants} module-level constants (regexes, tables)")
    return out


def hand_mutated() -> set[str]:
    """The modules tests/tools/hand_mutants.py edits."""
    sys.path.insert(0, str(Path(__file__).parent))
    import hand_mutants

    return {path for path, *_ in hand_mutants.MUTANTS}


def _decorated(node: ast.FunctionDef) -> bool:
    names = [ast.unparse(d) for d in node.decorator_list]
    return bool(names) and names not in (["staticmethod"], ["classmethod"])


def _decorators(node: ast.FunctionDef) -> str:
    return ", ".join("@" + ast.unparse(d) for d in node.decorator_list)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fail-under", type=float, default=0.0, help="exit 1 if a module scores less")
    parser.add_argument("--survivors", action="store_true", help="list every survivor by name")
    parser.add_argument("--only", nargs="+", metavar="PATH", help="score only these modules (make MUTATE=)")
    args = parser.parse_args(argv)

    known = equivalents()
    names = modules()
    if args.only:
        unknown = [path for path in args.only if path not in names]
        if unknown:
            print(f"not mutated ([tool.mutmut] only_mutate in pyproject.toml): {', '.join(unknown)}")
            return 2
        names = [path for path in names if path in args.only]
    width = max(len(m) for m in names)
    scores: list[Score] = []
    for module in names:
        result = score(module, known)
        if result is None:
            print(f"{module:<{width}}  not run (no mutants/{module}.meta)")
            continue
        scores.append(result)
        print(result.line(width))
        reach = unreachable(module)
        if reach:
            print(f"{'':<{width}}  not reached by mutmut: {'; '.join(reach)}")
            if module in hand_mutated():
                print(f"{'':<{width}}  (the decorated ones get hand mutants: tests/tools/hand_mutants.py)")
        if args.survivors:
            for name in result.survived + result.no_tests:
                print(f"{'':<{width}}  survivor: {name}")
    killed = sum(len(s.killed) for s in scores)
    counted = sum(s.counted for s in scores)
    total = 100.0 * killed / counted if counted else 0.0
    print(f"{'total':<{width}}  {total:5.1f} %  {killed:4d} killed of {counted:4d}")

    listed = {name for s in scores for name in s.equivalent}
    scored = tuple(s.module.removesuffix(".py").replace("/", ".") + "." for s in scores)
    stale = sorted(name for name in set(known) - listed if name.startswith(scored))
    for name in stale:
        print(f"stale entry in {EQUIVALENTS.name}: {name} (killed, or no longer a mutant)")
    low = [s.module for s in scores if s.percent < args.fail_under]
    if low:
        print(f"below {args.fail_under:.0f} %: {', '.join(low)}")
    return 1 if low or stale or not scores else 0


if __name__ == "__main__":
    sys.exit(main())
