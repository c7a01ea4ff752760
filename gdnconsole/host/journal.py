"""The launch journal: every attempt to start a server on a host, kept on this machine.

One JSON object per line in ``<user data dir>/journal/HOST.jsonl`` (``$GDNCONSOLE_JOURNAL_DIR`` instead of
the user data dir's ``journal`` folder). The file is only ever appended to: an attempt that changes (it
reached ready, it crashed) is written again under its number, and the last line of a number wins. A
console that dies mid-write loses at most that line; nothing earlier is rewritten.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gdnconsole.host.jsonlines import append_json_line, data_dir
from gdnconsole.sglang.launch import redact, redact_env
from gdnconsole.timefmt import span

JOURNAL_DIR_ENV = "GDNCONSOLE_JOURNAL_DIR"

# "rejected": the checker refused the flags; "refused": the host did (the agent, memory others hold).
Outcome = Literal["running", "verified", "ready", "crashed", "rejected", "refused", "stopped", "timeout"]
FINAL_OUTCOMES = frozenset({"verified", "ready", "crashed", "rejected", "refused", "stopped", "timeout"})


@dataclass(frozen=True)
class Fatal:
    """The error that ended a startup: its log line (None: the server died with nothing in its log)."""

    line: int | None
    summary: str

    @classmethod
    def parse(cls, raw: Any) -> Fatal | None:
        if not isinstance(raw, Mapping):
            return None
        line = raw.get("line")
        return cls(line if isinstance(line, int) else None, str(raw.get("summary") or ""))


@dataclass(frozen=True)
class RuleBreak:
    """The checker's rule that rejected a launch; ``flag`` is the field the form opens on."""

    id: str
    message: str
    flag: str | None = None
    source: str | None = None

    @classmethod
    def parse(cls, raw: Any) -> RuleBreak | None:
        if not isinstance(raw, Mapping):
            return None
        flag, source = raw.get("flag"), raw.get("source")
        return cls(
            str(raw.get("id") or "?"),
            str(raw.get("message") or ""),
            flag if isinstance(flag, str) else None,
            source if isinstance(source, str) else None,
        )


@dataclass(frozen=True)
class Proof:
    """The latest evidence of whether the server answers: a verification prompt's or a user's prompt."""

    ok: bool | None
    latency_ms: float | None = None
    reason: str | None = None

    @classmethod
    def parse(cls, raw: Any) -> Proof | None:
        if not isinstance(raw, Mapping):
            return None
        ok, latency, reason = raw.get("ok"), raw.get("latency_ms"), raw.get("reason")
        return cls(
            ok if isinstance(ok, bool) else None,
            float(latency) if isinstance(latency, int | float) and not isinstance(latency, bool) else None,
            reason if isinstance(reason, str) else None,
        )


@dataclass
class Attempt:
    number: int
    time: float  # epoch seconds when the attempt began
    host: str
    profile: str
    argv: list[str]
    env: dict[str, str]
    diff: list[str] = field(default_factory=list)  # against the previous attempt: "+ --flag v", "~ …"
    stages: dict[str, float] = field(default_factory=dict)  # stage reached -> seconds spent in it
    outcome: Outcome = "running"
    fatal: Fatal | None = None
    rule: RuleBreak | None = None  # the rule that rejected it
    warnings: list[str] = field(default_factory=list)
    stage: str = "starting"  # the furthest stage reached
    pid: int | None = None  # of the server's main process, once started
    verify: Proof | None = None  # the latest proof that the server answers, or does not

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Attempt:
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in raw.items() if k in names}
        values["fatal"] = Fatal.parse(raw.get("fatal"))
        values["rule"] = RuleBreak.parse(raw.get("rule"))
        values["verify"] = Proof.parse(raw.get("verify"))
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def default_dir() -> Path:
    return data_dir(JOURNAL_DIR_ENV, "journal")


class Journal:
    """The attempts on one host."""

    def __init__(self, host: str, path: Path | None = None) -> None:
        self.host = host
        self.path = path or default_dir() / f"{host}.jsonl"

    def attempts(self) -> list[Attempt]:
        """Every attempt, oldest first, each in its latest state (unreadable lines are skipped)."""
        latest: dict[int, Attempt] = {}
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        for line in text.splitlines():
            try:
                attempt = Attempt.from_json(json.loads(line))
            except (ValueError, TypeError):
                continue  # a line cut by a crash, or written by a newer version
            latest[attempt.number] = attempt
        return [latest[n] for n in sorted(latest)]

    def last(self) -> Attempt | None:
        attempts = self.attempts()
        return attempts[-1] if attempts else None

    def begin(self, profile: str, argv: Sequence[str], env: Mapping[str, str]) -> Attempt:
        """A new attempt numbered after the last, with its diff against the last one (not yet recorded)."""
        previous = self.last()
        argv = redact(argv)  # API keys never reach the journal (nor anything that shows it)
        env = redact_env(env)  # nor tokens in the environment (HF_TOKEN…)
        diff = [] if previous is None else flag_diff(previous.argv, argv) + env_diff(previous.env, env)
        return Attempt(
            number=(previous.number + 1) if previous else 1,
            time=time.time(),
            host=self.host,
            profile=profile,
            argv=list(argv),
            env=dict(env),
            diff=diff,
        )

    def record(self, attempt: Attempt) -> None:
        self._append(attempt)

    def update(self, attempt: Attempt) -> None:
        self._append(attempt)

    def _append(self, attempt: Attempt) -> None:
        append_json_line(self.path, attempt.to_json())

    def to_markdown(self) -> str:
        return to_markdown(self.host, self.attempts())


# -- diffs -----------------------------------------------------------------------------------------


def _options(argv: Sequence[str]) -> tuple[list[str], dict[str, str | None]]:
    """The words before the first flag (the command), and each ``--flag``'s value (None: a switch)."""
    command: list[str] = []
    options: dict[str, str | None] = {}
    i = 0
    while i < len(argv):
        word = argv[i]
        if not word.startswith("--"):
            if options:
                options[f"(arg {i})"] = word  # a stray positional after the flags
            else:
                command.append(word)
            i += 1
            continue
        name, eq, value = word.partition("=")
        if eq:
            options[name] = value
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            options[name] = argv[i + 1]
            i += 1
        else:
            options[name] = None
        i += 1
    return command, options


def _shown(name: str, value: str | None) -> str:
    return name if value is None else f"{name} {value}"


def flag_diff(old_argv: Sequence[str], new_argv: Sequence[str]) -> list[str]:
    """What changed between two command lines, flag by flag, in the new one's order then the removed."""
    old_cmd, old = _options(redact(old_argv))
    new_cmd, new = _options(redact(new_argv))
    out: list[str] = []
    if old_cmd != new_cmd:
        out.append(f"~ {' '.join(old_cmd)} → {' '.join(new_cmd)}")
    for name, value in new.items():
        if name not in old:
            out.append(f"+ {_shown(name, value)}")
        elif old[name] != value:
            out.append(f"~ {name} {old[name] if old[name] is not None else '(on)'} → {value}")
    out += [f"- {_shown(name, value)}" for name, value in old.items() if name not in new]
    return out


def env_diff(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    out = [f"+ env {k}={v}" for k, v in new.items() if k not in old]
    out += [f"~ env {k} {old[k]} → {v}" for k, v in new.items() if k in old and old[k] != v]
    out += [f"- env {k}={v}" for k, v in old.items() if k not in new]
    return out


# -- markdown --------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    """Table-safe: a pipe or a newline would break the row."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _row(attempt: Attempt) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(attempt.time))
    detail = ""
    if attempt.rule:
        detail = f"rule {attempt.rule.id}: {attempt.rule.message}"
    elif attempt.fatal:
        line = attempt.fatal.line
        detail = (f"line {line}: " if line else "") + attempt.fatal.summary
    stages = ", ".join(f"{k} {span(v)}" for k, v in attempt.stages.items())
    cells = [
        str(attempt.number),
        when,
        attempt.profile,
        f"**{attempt.outcome}**",
        attempt.stage,
        stages,
        "; ".join(attempt.diff) or "—",
        detail,
        "; ".join(attempt.warnings),
    ]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def to_markdown(host: str, attempts: Sequence[Attempt]) -> str:
    """A table for an incident note, then each attempt's exact command line and environment."""
    head = [
        f"## Launch attempts on {host}",
        "",
        "| # | time | profile | outcome | stage | stage durations | changes | fatal / rule | warnings |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    body = [_row(a) for a in attempts]
    commands = ["", "### Command lines", ""]
    for attempt in attempts:
        env = " ".join(f"{k}={_quote(v)}" for k, v in attempt.env.items())
        argv = " ".join(_quote(a) for a in attempt.argv)
        commands.append(f"{attempt.number}. {_code((env + ' ' if env else '') + argv)}")
    return "\n".join(head + body + (commands if attempts else [])) + "\n"


def _quote(word: str) -> str:
    return shlex.quote(word)


def _code(text: str) -> str:
    """An inline code span that survives backticks and newlines in the text (CommonMark's rule: a fence
    longer than any run of backticks inside, padded with spaces)."""
    text = text.replace("\n", "\\n")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"
