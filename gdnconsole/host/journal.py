"""The launch journal: every attempt to start a server on a host, kept on this machine.

One JSON object per line in ``<user data dir>/journal/HOST.jsonl`` (``$GDNCONSOLE_JOURNAL_DIR`` instead of
the user data dir's ``journal`` folder). The file is only ever appended to: an attempt is written once
when it begins ("starting", before anything runs on the host: a journal that cannot be written refuses
the launch), then again each time it changes (it runs, reached ready, crashed), under its ``id``; the
last line of an id wins. A console that dies mid-write loses at most that line; nothing earlier is
rewritten.

Several consoles may launch on one host at once: numbering and every append happen under an exclusive
``flock`` on ``HOST.jsonl.lock`` beside the file, so each attempt gets a number of its own and a later
line addresses its attempt by a random id, never by a number another console could share.

Every line read back may be damaged (cut by a crash, edited by hand, written by another version): each
is validated field by field (``parse_attempt``) and a bad one skipped; one warning per read names the
file, how many lines were skipped and the first one's line and fault. The file is read from its end in
blocks: a launch needs only the last attempts, and the journal screen pages backwards on demand
(``Cursor``), so a journal of 100k attempts costs what its last page costs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import json
import math
import os
import re
import secrets
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, TypeGuard, get_args

from gdnconsole import readback, safefile
from gdnconsole.errors import ConsoleError
from gdnconsole.host.jsonlines import data_dir
from gdnconsole.logs.textsafe import shell_line, visible
from gdnconsole.sglang.launch import redact, redact_env
from gdnconsole.timefmt import span

JOURNAL_DIR_ENV = "GDNCONSOLE_JOURNAL_DIR"

# "starting": journaled, not yet started (or the console never heard); "rejected": the checker refused
# the flags; "refused": the host did (the agent, memory others hold).
Outcome = Literal[
    "starting", "running", "verified", "ready", "crashed", "rejected", "refused", "stopped", "timeout"
]
OUTCOMES: frozenset[str] = frozenset(get_args(Outcome))
FINAL_OUTCOMES = frozenset({"verified", "ready", "crashed", "rejected", "refused", "stopped", "timeout"})
BLOCK = 64 * 1024  # bytes read at a time, from the end
LINE_MAX = 1 << 20  # a longer line is no attempt of ours: skipped as damaged, never held whole
Warn = Callable[[str], None]


class JournalError(ConsoleError):
    """The journal cannot be written: nothing may start that it would not know."""


class BadRecord(ValueError):
    """A journal line that is not an attempt; the message says what is wrong with it."""


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
        return cls(line if _is_int(line) else None, str(raw.get("summary") or ""))


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
            float(latency) if _is_number(latency) else None,
            reason if isinstance(reason, str) else None,
        )


@dataclass(frozen=True)
class Served:
    """What the attempt's server did while the console polled its figures (host/servingfeed.py Summary):
    peak running requests, TTFT p90 since it started, mean decode tokens/s and accept length."""

    peak_running: int | None
    ttft_p90_s: float | None
    mean_tokens_s: float | None
    accept_length: float | None
    polls: int

    @classmethod
    def parse(cls, raw: Any) -> Served | None:
        if not isinstance(raw, Mapping):
            return None
        peak, polls = raw.get("peak_running"), raw.get("polls")
        number = {
            k: float(v) if _is_number(v := raw.get(k)) else None
            for k in ("ttft_p90_s", "mean_tokens_s", "accept_length")
        }
        return cls(
            peak if _is_int(peak) and peak >= 0 else None,
            number["ttft_p90_s"],
            number["mean_tokens_s"],
            number["accept_length"],
            polls if _is_int(polls) and polls >= 0 else 0,
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
    id: str = ""  # random, unique: what a later line of the same attempt is written under ("": legacy)
    served: Served | None = None  # its load and latencies while the console watched it serve

    @property
    def key(self) -> str:
        """What identifies the attempt across its lines (a line written before ids: its number)."""
        return self.id or f"#{self.number}"

    @classmethod
    def from_json(cls, raw: Any) -> Attempt:
        """The attempt a journal line holds; BadRecord (a ValueError) saying what is wrong when none."""
        return parse_attempt(raw)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# -- reading a line: typed at the edge --------------------------------------------------------------


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _fault(raw: dict[str, Any]) -> str | None:
    """What is wrong with a journal line's object, the first thing found; None: nothing. (Each check
    is written out: a launch reads a page of these, and a message is only built for a bad line.)"""
    number, pid, env, stages = raw.get("number"), raw.get("pid"), raw.get("env", {}), raw.get("stages", {})
    if not (_is_int(number) and number >= 1):
        return "number is not a whole number from 1"
    if not _is_number(raw.get("time")):
        return "time is not a number"
    for name in ("host", "profile", "stage", "id"):
        if not isinstance(raw.get(name, ""), str):
            return f"{name} is not a string"
    if not _is_strings(raw.get("argv")):
        return "argv is not a list of strings"
    if not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
        return "env is not an object of strings"
    for name in ("diff", "warnings"):
        if not _is_strings(raw.get(name, [])):
            return f"{name} is not a list of strings"
    if not (isinstance(stages, dict) and all(_is_number(v) for v in stages.values())):
        return "stages is not an object of numbers"
    outcome = raw.get("outcome", "running")
    if not (isinstance(outcome, str) and outcome in OUTCOMES):
        return "outcome is not one the journal knows"
    if not (pid is None or (_is_int(pid) and pid > 0)):
        return "pid is not a process id"
    return None


def parse_attempt(raw: Any) -> Attempt:
    """A journal line's object as an Attempt, every field checked; BadRecord names the first fault.
    Fields a line may lack (older versions) take their defaults; a field of the wrong type is a fault."""
    if not isinstance(raw, dict):
        raise BadRecord(f"{_kind(raw)}, not an object")
    fault = _fault(raw)
    if fault is not None:
        raise BadRecord(fault)
    get = raw.get
    return Attempt(
        number=raw["number"],
        time=float(raw["time"]),
        host=get("host", ""),
        profile=get("profile", ""),
        argv=raw["argv"],  # fresh from json.loads: nothing else holds them
        env=get("env", {}),
        diff=get("diff", []),
        stages={k: float(v) for k, v in get("stages", {}).items()},
        outcome=get("outcome", "running"),
        fatal=Fatal.parse(get("fatal")),
        rule=RuleBreak.parse(get("rule")),
        warnings=get("warnings", []),
        stage=get("stage", "starting"),
        pid=get("pid"),
        verify=Proof.parse(get("verify")),
        id=get("id", ""),
        served=Served.parse(get("served")),
    )


def parse_line(line: bytes) -> Attempt:
    """One line of the file (without its newline) as an Attempt; BadRecord saying why not."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRecord("not UTF-8") from None
    try:
        raw = json.loads(text)
    except ValueError:
        raise BadRecord("not JSON (a line cut by a crash?)") from None
    except RecursionError:  # arrays thousands deep exhaust the stack of json's decoder
        raise BadRecord("nested too deeply") from None
    return parse_attempt(raw)


# -- the file, from its end -------------------------------------------------------------------------


def lines_backward(
    fh: IO[bytes], end: int, having: re.Pattern[bytes] | None = None
) -> Iterator[tuple[int, bytes | None]]:
    """(offset, line) of each non-empty line of ``fh`` before byte ``end``, the last first, read in
    blocks; ``None`` for a line longer than LINE_MAX (never held whole). ``having``: only the lines it
    finds something in (a block where it finds nothing is passed over whole)."""
    pos, rest, oversized = end, b"", False  # rest: the end of a line that begins before ``pos``
    while pos > 0:
        step = min(BLOCK, pos)
        pos -= step
        fh.seek(pos)
        block = fh.read(step) + rest
        if having is not None and having.search(block) is None:
            cut = block.find(b"\n")
            rest, oversized = (block, oversized) if cut < 0 else (block[:cut], False)
        else:
            parts = block.split(b"\n")
            rest, lines = parts[0], parts[1:]
            offset = pos + len(rest) + 1
            found: list[tuple[int, bytes | None]] = []
            for index, part in enumerate(lines):
                # the line whose end was dropped, or one that grew past the limit in this block
                too_long = (oversized and index == len(lines) - 1) or len(part) > LINE_MAX
                if part.strip() or too_long:
                    found.append((offset, None if too_long else part))
                offset += len(part) + 1
            oversized = oversized and not lines
            yield from reversed(found)
        if len(rest) > LINE_MAX:
            rest, oversized = b"", True
    if rest.strip() or oversized:
        yield 0, None if oversized else rest


def line_number(fh: IO[bytes], offset: int) -> int:
    """The 1-based line that starts at ``offset`` (newlines counted in blocks: said only for a warning)."""
    fh.seek(0)
    count, left = 1, offset
    while left > 0:
        block = fh.read(min(BLOCK, left))
        if not block:
            break
        count += block.count(b"\n")
        left -= len(block)
    return count


@dataclass
class Damage:
    """The bad lines one read met: (offset, why) each."""

    found: list[tuple[int, str]] = field(default_factory=list)


def _to_stderr(message: str) -> None:
    print(f"gdnconsole: warning: {message}", file=sys.stderr)


def default_dir() -> Path:
    return data_dir(JOURNAL_DIR_ENV, "journal")


def new_id() -> str:
    return secrets.token_hex(8)


class Journal:
    """The attempts on one host. ``warn`` hears each read's damaged lines, once per line (stderr)."""

    def __init__(self, host: str, path: Path | None = None, *, warn: Warn | None = None) -> None:
        self.host = host
        self.path = path or default_dir() / f"{host}.jsonl"
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.warn = warn or _to_stderr
        self.warnings: list[str] = []  # every warning said, in order (the journal screen shows them)
        self._warned: set[int] = set()  # offsets of damaged lines already warned about

    # -- reading --

    @contextlib.contextmanager
    def _records(
        self, end: int | None = None, having: re.Pattern[bytes] | None = None
    ) -> Iterator[Iterator[tuple[int, Attempt]]]:
        """(offset, attempt) of every good line, the last first; the damaged ones are warned about
        when the caller is done (once each, in one line per read). ``having``: only lines whose bytes
        it finds are parsed (a search through a long journal costs a scan, not a parse per line)."""
        try:
            fh = readback.open_regular(self.path)  # a FIFO at the journal is said, not waited on
        except (FileNotFoundError, NotADirectoryError):
            yield iter(())
            return
        except OSError as exc:
            self._say(f"the journal {self.path} cannot be read: {exc.strerror or exc}")
            yield iter(())
            return
        damage = Damage()
        with fh:
            size = os.fstat(fh.fileno()).st_size

            def good() -> Iterator[tuple[int, Attempt]]:
                for offset, line in lines_backward(fh, size if end is None else min(end, size), having):
                    if having is not None and line is not None and having.search(line) is None:
                        continue  # in the same block as a line that has it
                    try:
                        if line is None:
                            raise BadRecord(f"a line over {LINE_MAX} bytes")
                        yield offset, parse_line(line)
                    except BadRecord as exc:
                        damage.found.append((offset, str(exc)))

            try:
                yield good()
            finally:
                self._report(fh, damage)

    def _report(self, fh: IO[bytes], damage: Damage) -> None:
        fresh = sorted((o, why) for o, why in damage.found if o not in self._warned)
        if not fresh:
            return
        self._warned.update(o for o, _ in fresh)
        first, why = fresh[0]
        count = len(fresh)
        lines = "line" if count == 1 else "lines"
        self._say(
            f"skipped {count} damaged {lines} in {self.path} (first at line {line_number(fh, first)}: {why})"
        )

    def _say(self, message: str) -> None:
        self.warnings.append(message)
        self.warn(message)

    def attempts(self) -> list[Attempt]:
        """Every attempt, oldest first, each in its latest state (damaged lines are skipped)."""
        latest: dict[str, tuple[int, Attempt]] = {}
        with self._records() as records:
            for offset, attempt in records:
                key = attempt.key
                if key in latest:
                    latest[key] = (offset, latest[key][1])  # ordered by its first line
                else:
                    latest[key] = (offset, attempt)
        return [a for _, a in sorted(latest.values(), key=lambda item: (item[1].number, item[0]))]

    def cursor(self) -> Cursor:
        """Pages of attempts from the newest back, read on demand."""
        return Cursor(self)

    def last(self) -> Attempt | None:
        """The attempt begun last, in its latest state: read back only to its first line."""
        best: Attempt | None = None
        seen: set[str] = set()
        with self._records() as records:
            for _offset, attempt in records:
                if attempt.key not in seen:
                    seen.add(attempt.key)
                    if best is None or attempt.number > best.number:
                        best = attempt
                if attempt.outcome == "starting" and best is not None:
                    break  # a first line: every attempt begun after it has been seen
        return best

    def of_pid(self, pid: int) -> Attempt | None:
        """The latest attempt whose server was ``pid``, in its latest state (its lines since the pid
        was known all carry it: the first found from the end is that state)."""
        having = re.compile(rb'"pid"\s*:\s*%d(?![0-9])' % pid)  # in its line, however spaced
        with self._records(having=having) as records:
            for _offset, attempt in records:
                if attempt.pid == pid:
                    return attempt
        return None

    # -- writing --

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The journal's lock, exclusive: numbering and appends of every console on this machine."""
        with safefile.open_append(self.lock_path) as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def begin(self, profile: str, argv: Sequence[str], env: Mapping[str, str]) -> Attempt:
        """A new attempt numbered after the last, with its diff against the last one, journaled as
        "starting" before anything runs. JournalError when the journal cannot be written."""
        argv = redact(argv)  # API keys never reach the journal (nor anything that shows it)
        env = redact_env(env)  # nor tokens in the environment (HF_TOKEN…)
        try:
            with self._locked():
                previous = self.last()
                diff = (
                    [] if previous is None else flag_diff(previous.argv, argv) + env_diff(previous.env, env)
                )
                attempt = Attempt(
                    number=(previous.number + 1) if previous else 1,
                    time=time.time(),
                    host=self.host,
                    profile=profile,
                    argv=list(argv),
                    env=dict(env),
                    diff=diff,
                    outcome="starting",
                    id=new_id(),
                )
                self._write(attempt)
        except OSError as exc:
            raise JournalError(self._unwritable(exc)) from None
        return attempt

    def _unwritable(self, exc: OSError) -> str:
        reason = exc.strerror or str(exc)
        if exc.errno in (errno.EEXIST, errno.ENOTDIR):
            reason = "a path in the way is not a folder"
        return f"the launch journal's folder {self.path.parent} cannot be written ({reason}): nothing started"

    def record(self, attempt: Attempt) -> None:
        """Append the attempt's state; a journal that fails now (the server may run) is warned about."""
        try:
            with self._locked():
                self._write(attempt)
        except OSError as exc:
            self._say(f"attempt {attempt.number} ({attempt.outcome}) not journaled: {self._unwritable(exc)}")

    def update(self, attempt: Attempt) -> None:
        self.record(attempt)

    def _write(self, attempt: Attempt) -> None:
        """One line, with one write (``O_APPEND``); a line torn by an earlier crash is ended first."""
        line = (json.dumps(attempt.to_json(), ensure_ascii=False) + "\n").encode("utf-8")
        with safefile.open_append(self.path, readable=True) as fh:
            end = fh.seek(0, os.SEEK_END)
            if end > 0:
                fh.seek(end - 1)
                if fh.read(1) != b"\n":
                    line = b"\n" + line
            fh.write(line)
            fh.flush()

    def to_markdown(self) -> str:
        return to_markdown(self.host, self.attempts())


class Cursor:
    """The journal's attempts from the newest back, a page at a time (the journal screen's `j`): each
    page reads on from where the last stopped; an attempt is given once, in its latest state."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.end: int | None = None  # where the next page reads back from (None: the file's end)
        self.done = False
        self._seen: set[str] = set()

    def page(self, count: int) -> list[Attempt]:
        """Up to ``count`` more attempts, newest first by number; [] once the start is reached."""
        found: list[Attempt] = []
        if self.done:
            return found
        stop: int | None = None
        with self.journal._records(self.end) as records:
            for offset, attempt in records:
                stop = offset
                if attempt.key in self._seen:
                    continue
                self._seen.add(attempt.key)
                found.append(attempt)
                if len(found) >= count:
                    break
            else:
                self.done = True
        self.end = stop if stop is not None else 0
        if self.end == 0:
            self.done = True
        return sorted(found, key=lambda a: a.number, reverse=True)


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
    """Table-safe: a pipe or a newline would break the row, an escape from the log the terminal that
    shows the file (textsafe)."""
    return visible(text.replace("\n", " ")).replace("\\", "\\\\").replace("|", "\\|")


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
        # masked again: a line written before masking, or by hand, may hold a key
        env = " ".join(f"{k}={_quote(v)}" for k, v in redact_env(attempt.env).items())
        argv = " ".join(_quote(a) for a in redact(attempt.argv))
        commands.append(f"{attempt.number}. {_code((env + ' ' if env else '') + argv)}")
    return "\n".join(head + body + (commands if attempts else [])) + "\n"


def _quote(word: str) -> str:
    return shell_line([word])  # shlex.quote, or $'…' for a word with an escape in it


def _code(text: str) -> str:
    """An inline code span that survives backticks and newlines in the text (CommonMark's rule: a fence
    longer than any run of backticks inside, padded with spaces)."""
    text = text.replace("\n", "\\n")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"
