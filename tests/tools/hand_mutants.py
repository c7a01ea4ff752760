"""Hand mutants for the code mutmut cannot reach in the SGLang and log cores: properties, cached functions,
and module-level constants (needles, regexes).

mutmut mutates plain functions only (tests/tools/mutation.py says which code it skips). These few edits,
each what a slip in that code could look like, are applied one at a time to a copy of the package in a
temporary folder, and the tests of that module (TESTS_FOR) run against the copy: each edit must make a
test fail.
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
EVENTS = "gdnconsole/sglang/events.py"
LOGLINE = "gdnconsole/sglang/logline.py"
FLAGS = "gdnconsole/sglang/flags.py"
RULEKIT = "gdnconsole/sglang/rulekit.py"
RULETABLES = "gdnconsole/sglang/ruletables.py"
STAGES = "gdnconsole/sglang/stages.py"
LAUNCH = "gdnconsole/sglang/launch.py"
LINEINDEX = "gdnconsole/logs/lineindex.py"
DOCUMENT = "gdnconsole/logs/document.py"
SCAN = "gdnconsole/logs/scan.py"
TEXTSAFE = "gdnconsole/logs/textsafe.py"

# The tests run against each module's hand mutants: those that exercise it (globs, from the root), so
# that each edit costs seconds, not a run of every folder.
TESTS_FOR: dict[str, tuple[str, ...]] = {
    TRACKER: (
        "tests/sglang/test_tracker*.py",
        "tests/sglang/test_summary_whole.py",
        "tests/sglang/test_excerpts.py",
        "tests/sglang/test_expert_reading.py",
    ),
    EVENTS: ("tests/sglang/test_expert_reading.py", "tests/sglang/test_events_*.py"),
    LOGLINE: ("tests/sglang/test_logline*.py", "tests/sglang/test_tracker*.py"),
    FLAGS: ("tests/sglang/test_flag*.py",),
    RULEKIT: ("tests/sglang/test_rulekit_*.py",),
    RULETABLES: ("tests/sglang/test_ruletables_*.py",),
    STAGES: ("tests/sglang/test_stages_*.py",),
    LAUNCH: ("tests/sglang/test_launch_argv_*.py",),
    LINEINDEX: ("tests/logs/test_lineindex*.py", "tests/logs/test_document_*.py"),
    DOCUMENT: ("tests/logs/test_document_*.py",),
    SCAN: ("tests/logs/test_scan*.py",),
    TEXTSAFE: ("tests/logs/test_textsafe_*.py",),
}

# (file, what is there, what a slip would make of it, what the slip means)
MUTANTS: list[tuple[str, str, str, str]] = [
    (
        TRACKER,
        "return self.reached_ready and self.fatal is None",
        "return self.reached_ready",
        "Startup.ready: a server that crashed after ready is still ready",
    ),
    (
        TRACKER,
        "return self.stage >= Stage.READY and (self.saw_ready or self.served)",
        "return self.stage > Stage.READY and (self.saw_ready or self.served)",
        "Startup.reached_ready: only once serving",
    ),
    (
        TRACKER,
        "return self.stage >= Stage.READY and (self.saw_ready or self.served)",
        "return self.stage >= Stage.READY",
        "Startup.reached_ready: a request-loop frame alone claims the server was ready",
    ),
    (
        TRACKER,
        "return self.stage >= Stage.READY and (self.saw_ready or self.served)",
        "return self.stage >= Stage.READY and self.saw_ready",
        "Startup.reached_ready: decode lines of a mid-run excerpt do not prove ready",
    ),
    (
        TRACKER,
        "return self.rank is None and len(self.ranks) > 1",
        "return len(self.ranks) > 1",
        "Problem.collective: a watchdog on two of four ranks read as everyone's hang",
    ),
    (
        TRACKER,
        "COLLECTIVE_WINDOW_S = 30.0",
        "COLLECTIVE_WINDOW_S = 60.0",
        "watchdogs 45 s apart read as one hang",
    ),
    (
        TRACKER,
        '_SCHEDULER_KINDS = frozenset({"scheduler_exception", "runtime_oom"})',
        '_SCHEDULER_KINDS = frozenset({"runtime_oom"})',
        "a rankless scheduler exception is nobody's (tp = 1: the scheduler's)",
    ),
    (
        TRACKER,
        '_MISSING_LIB = re.compile(r"(?P<lib>lib[\\w+-]+\\.so[\\w.]*): cannot open shared object file")',
        '_MISSING_LIB = re.compile(r"(?P<lib>lib[\\w+-]+\\.so): cannot open shared object file")',
        "torchcodec's cause loses the library's version (libavutil.so.58 → libavutil.so)",
    ),
    (
        TRACKER,
        '    if "capture cuda graph failed" in lower and "out of memory" in lower:',
        '    if "capture cuda graph failed" in lower:',
        "every capture failure gets the OOM hint",
    ),
    (
        EVENTS,
        "Attention backend not (?:specified|set)",
        "Attention backend not specified",
        "backend_choice: 2025's 'Attention backend not set. Use fa3…' chooses nothing",
    ),
    (
        EVENTS,
        """_ARGS_BACKEND = re.compile(r\"\"\"\\battention_backend'?[=:] ?'(?P<v>[\\w.-]+)'\"\"\")""",
        """_ARGS_BACKEND = re.compile(r\"\"\"\\battention_backend=(?P<v>[\\w.-]+)\"\"\")""",
        "backend_choice: the args dump's backend read with its quotes, or not from 0.5.22's dict",
    ),
    (
        EVENTS,
        '("gdn_kernels", re.compile(r"GDN kernel dispatcher: (?P<v>.+?)\\s*$")),',
        '("gdn_kernels", re.compile(r"GDN kernel dispatcher: (?P<v>\\S+)")),',
        "backend_choice: the GDN dispatcher said only for decode",
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
    (
        FLAGS,
        'return "/".join(self.options)',
        "return self.options[0]",
        "Flag.name: a flag with several spellings is named in argparse's texts by its first only",
    ),
    (
        FLAGS,
        'return all(e.id in ("argv.unrecognized", "argv.required") for e in self.errors)',
        'return all(e.id in ("argv.unrecognized",) for e in self.errors)',
        "ParsedArgv.complete: a missing --model-path keeps the rules from running",
    ),
    (
        FLAGS,
        'return all(e.id in ("argv.unrecognized", "argv.required") for e in self.errors)',
        'return any(e.id in ("argv.unrecognized", "argv.required") for e in self.errors)',
        "ParsedArgv.complete: an argv read without any error counts as incomplete",
    ),
    (
        FLAGS,
        "@cache\ndef flag_table(",
        "def flag_table(",
        "flag_table: the table of ~500 flags rebuilt on every call",
    ),
    (
        FLAGS,
        "        for option in flag.options:\n            by_option[option] = flag",
        "        for option in flag.options[:1]:\n            by_option[option] = flag",
        "flag_table: a flag's other spellings (--model, --tp-size) are unknown",
    ),
    (
        FLAGS,
        "for row in _rows(version)) + tuple(_deprecated_aliases(version))",
        "for row in _rows(version))",
        "flag_table: 0.5.14-0.5.19 refuse the deprecated spellings they still accept",
    ),
    (
        RULEKIT,
        "return self.compute_capability[0] if self.compute_capability else None",
        "return self.compute_capability[1] if self.compute_capability else None",
        "Ctx.major: the minor number read as the GPU's generation",
    ),
    (
        RULEKIT,
        "return is_hybrid_gdn(self.architecture)",
        "return self.architecture is not None",
        "Ctx.hybrid: every known architecture counted as hybrid Gated-DeltaNet",
    ),
    (
        RULEKIT,
        'return self.architecture or "this model"',
        "return str(self.architecture)",
        "Ctx.arch: messages say None for a model of unknown architecture",
    ),
    (
        RULEKIT,
        'return self.values["speculative_algorithm"] is not None',
        'return self.values["speculative_algorithm"] is None',
        "Ctx.spec: speculative decoding read as off when it is on",
    ),
    (
        RULEKIT,
        'self.values["prefill_attention_backend"] or base,',
        "base,",
        "Ctx.backends: --prefill-attention-backend ignored",
    ),
    (
        RULEKIT,
        'self.values["decode_attention_backend"] or base,',
        'self.values["decode_attention_backend"],',
        "Ctx.backends: decode does not fall back on --attention-backend",
    ),
    (
        RULEKIT,
        'int(self.values.get("attn_dp_size") or 1) > 1',
        'int(self.values.get("attn_dp_size") or 1) >= 1',
        "Ctx.dp_attention: every server counted as running dp attention",
    ),
    (
        RULEKIT,
        'return bool(self.values.get("enable_dp_attention")) or',
        'return bool(self.values.get("enable_dp_attention")) and',
        "Ctx.dp_attention: --attn-dp-size alone no longer counts",
    ),
    (
        STAGES,
        "        return self.name.lower()\n\n    @classmethod",
        "        return self.name\n\n    @classmethod",
        "Stage.label: labels in capitals",
    ),
    (
        STAGES,
        "        return self.name.lower()\n\n\n# Stages",
        "        return self.name\n\n\n# Stages",
        "Severity.label: labels in capitals",
    ),
    (
        "gdnconsole/sglang/launch.py",
        'return (self.python, "-m", SERVER_MODULE, *self.args)',
        "return (self.python, SERVER_MODULE, *self.args)",
        "LaunchSpec.argv: the server module given as a script, without -m",
    ),
    (
        "gdnconsole/sglang/launch.py",
        'return (self.python, "-m", SERVER_MODULE, *self.args)',
        'return ("python3", "-m", SERVER_MODULE, *self.args)',
        "LaunchSpec.argv: the host's interpreter ignored for a fixed python3",
    ),
    (
        "gdnconsole/sglang/launch.py",
        'return (self.python, "-m", SERVER_MODULE, *self.args)',
        'return (self.python, "-m", SERVER_MODULE)',
        "LaunchSpec.argv: SGLang started without the profile's flags",
    ),
    (
        "gdnconsole/sglang/launch.py",
        'return (self.python, "-m", SERVER_MODULE, *self.args)',
        'return (self.python, "-m", SERVER_MODULE, *sorted(self.args))',
        "LaunchSpec.argv: the flags reordered, so values no longer follow their flags",
    ),
    (
        RULETABLES,
        "return _BUILDERS[dialect]()",
        'return _BUILDERS["0.5.11"]()',
        "_built: every SGLang version checked with 0.5.11's rules",
    ),
    (
        RULETABLES,
        "return _BUILDERS[dialect]()",
        'return _BUILDERS["0.5.23"]()',
        "_built: every SGLang version checked with 0.5.23's rules",
    ),
    (
        LINEINDEX,
        "return self.after - self.before",
        "return self.after",
        "Growth.added: every line counted as new, not only those the update found",
    ),
    (
        LINEINDEX,
        "return self.complete + (1 if self.size > self.end else 0)",
        "return self.complete",
        "LineIndex.line_count: a last line without its newline yet is not shown",
    ),
    (
        LINEINDEX,
        "return self.complete + (1 if self.size > self.end else 0)",
        "return self.complete + (1 if self.size >= self.end else 0)",
        "LineIndex.line_count: an empty line counted after the last newline",
    ),
    (
        DOCUMENT,
        "return bool(self.regex) or any(x is not None for x in (self.stages, self.severities, self.ranks))",
        "return any(x is not None for x in (self.stages, self.severities, self.ranks))",
        "FilterSpec.active: a text-only filter is no filter",
    ),
    (
        DOCUMENT,
        "return bool(self.regex) or any(x is not None for x in (self.stages, self.severities, self.ranks))",
        "return bool(self.regex) or any(bool(x) for x in (self.stages, self.severities, self.ranks))",
        "FilterSpec.active: a filter that allows no stage at all is no filter",
    ),
    (
        DOCUMENT,
        "def needs_info(self) -> bool:\n        return any(x is not None for x in",
        "def needs_info(self) -> bool:\n        return bool(self.regex) or any(x is not None for x in",
        "FilterSpec.needs_info: a text-only filter classifies every line",
    ),
    (
        DOCUMENT,
        "def needs_info(self) -> bool:\n        return any(x is not None for x in (self.stages, self.severities, self.ranks))",
        "def needs_info(self) -> bool:\n        return any(x is not None for x in (self.stages, self.severities))",
        "FilterSpec.needs_info: a filter by rank alone lets every line through",
    ),
    (
        DOCUMENT,
        "return self.meaning.fed",
        "return self.index.complete",
        "LogDocument.fed: lines indexed taken for lines fed to the tracker",
    ),
    (
        DOCUMENT,
        "return self.meaning.ranks",
        "return set()",
        "LogDocument.ranks: no rank offered to the filter",
    ),
    (
        SCAN,
        'BATCH_FORMS = (b"batch, #", b"batch [", b"batch. #")',
        'BATCH_FORMS = (b"batch, #", b"batch. #")',
        "_batch_needle: SGLang 0.5.4's 'Decode batch [N],' form not known to the walker",
    ),
    (
        SCAN,
        'DECODE = b"] Decode batch"',
        'DECODE = b"] Prefill batch"',
        "_end_run/_keep_ends: a run's first and last Decode line not told from its Prefill lines",
    ),
    (
        SCAN,
        "ACCESS = b'HTTP/1.1\"'",
        "ACCESS = b'HTTP/1.0\"'",
        "walker: uvicorn access lines not counted as boring (every one kept)",
    ),
    (
        SCAN,
        '_RANK_KEY = re.compile(rb"\\[[^\\]A-Z\\n]{0,40}([A-Z][^\\]\\n]{0,80})?\\] ")',
        '_RANK_KEY = re.compile(rb"\\[[^\\]A-Z\\n]{0,40}([A-Z][^\\]\\n ]{0,80})?\\] ")',
        "_new_rank: 'DP1 TP1' not read as one rank prefix (the space ends it)",
    ),
    (
        SCAN,
        '_BATCH_KEYS = re.compile(rb"^\\[[^\\]A-Z\\n]{0,40}([A-Z][^\\]\\n]{0,80})?\\] (?:Decode|Prefill) batch", re.M)',
        '_BATCH_KEYS = re.compile(rb"^\\[[^\\]A-Z\\n]{0,40}([A-Z][^\\]\\n]{0,80})?\\] (?:Decode) batch", re.M)',
        "_known_ranks: a block's Prefill lines of a new rank not seen (the block is not split)",
    ),
    (
        SCAN,
        '_NOT_NUL = re.compile(rb"[^\\x00]")',
        '_NOT_NUL = re.compile(rb".")',
        "_bounded/_giant_line: a copytruncate's NUL hole kept as the start of the first line",
    ),
    (
        TEXTSAFE,
        '_UNSAFE = "\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f" + _FORMAT',
        '_UNSAFE = "\\x00-\\x08\\x0b-\\x1f" + _FORMAT',
        "visible: DEL and the C1 controls (CSI \\x9b) reach the terminal",
    ),
    (
        TEXTSAFE,
        '_UNSAFE = "\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f" + _FORMAT',
        '_UNSAFE = "\\x00-\\x1f\\x7f-\\x9f" + _FORMAT',
        "visible: a tab shown as ^I, and visible_lines shows the newlines it keeps",
    ),
    (
        TEXTSAFE,
        '_CONTROL = re.compile(f"[\\n{_UNSAFE}]")',
        '_CONTROL = re.compile(f"[{_UNSAFE}]")',
        "visible: a newline in what is shown as one line reaches the terminal",
    ),
    (
        TEXTSAFE,
        '+ _FORMAT + "\\ud800-\\udfff"',
        "+ _FORMAT",
        "visible: an undecodable byte (a lone surrogate) reaches the terminal's encoder",
    ),
    (
        TEXTSAFE,
        "\\u2060-\\u2064\\u2066-\\u206f",
        "\\u2060-\\u2064",
        "visible: the bidi isolates (U+2066…U+2069) shown raw",
    ),
    (
        TEXTSAFE,
        "\\u200b-\\u200f\\u2028-\\u202e",
        "\\u200b-\\u200f",
        "visible: the bidi overrides and the line separator shown raw",
    ),
    (
        TEXTSAFE,
        'r"(?P<name>\\b(?:admin_)?api_key=|--(?:admin-)?api-key[= ])"',
        'r"(?P<name>\\b(?:admin_)?api_key=|--api-key[= ])"',
        "without_secrets: --admin-api-key shown in clear",
    ),
    (
        TEXTSAFE,
        '_GLUED = re.compile(r"\\[\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d")',
        '_GLUED = re.compile(r"\\[\\d{4}-\\d\\d-\\d\\d")',
        "last_carriage_state: a date without its time taken for a glued log line",
    ),
]


def copy_tree(work: Path) -> None:
    skip = shutil.ignore_patterns("__snapshots__", "__pycache__")  # no bytecode: each edit is compiled anew
    shutil.copytree(ROOT / "gdnconsole", work / "gdnconsole", symlinks=True, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", work / "pyproject.toml")
    shutil.copytree(ROOT / "tests", work / "tests", ignore=skip)


def tests_of(work: Path, paths: list[str]) -> list[str]:
    return sorted(
        {str(test.relative_to(work)) for path in paths for g in TESTS_FOR[path] for test in work.glob(g)}
    )


def passes(work: Path, tests: list[str]) -> bool:
    env = {**os.environ, "PYTHONPATH": str(work), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)  # ../shared is not beside the copy: its one check skips
    argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
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
        if not passes(work, tests_of(work, sorted({m[0] for m in chosen}))):
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
                if passes(work, tests_of(work, [path])):
                    survived.append(meaning)
                    print(f"  survived: {meaning}")
            finally:
                target.write_text(original)
    killed = len(chosen) - len(survived)
    print(f"hand mutants (what mutmut cannot reach): {killed} killed of {len(chosen)}")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
