"""The launch journal as the file it is: damaged lines skipped with one warning, attempts numbered and
addressed under a lock by two real processes at once, a folder that cannot be written refusing the
launch before anything starts, and reads from the end that never need the whole file (issue 26)."""

from __future__ import annotations

import io
import json
import math
import multiprocessing
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gdnconsole.host import journal as journal_module
from gdnconsole.host.journal import Attempt, BadRecord, Journal, JournalError, parse_attempt, parse_line

ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


def journal_in(folder: Path, warnings: list[str] | None = None) -> Journal:
    sink = warnings if warnings is not None else []
    return Journal("ct129", folder / "ct129.jsonl", warn=sink.append)


def good(n: int, **changes: Any) -> dict[str, Any]:
    record = Attempt(n, 1.7e9 + n, "ct129", "p", list(ARGV), {"A": "1"}, outcome="ready").to_json()
    return {**record, "id": f"id{n}", **changes}


def write_lines(path: Path, lines: list[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def encoded(record: Any) -> bytes:
    return json.dumps(record).encode()


# -- damaged lines -----------------------------------------------------------------------------------

DAMAGED: list[tuple[bytes, str]] = [
    (b"\xff\xfe not text", "not UTF-8"),
    (b'{"number": 3, "time"', "not JSON"),
    (b"[1, 2, 3]", "an array, not an object"),
    (b'"a string"', "a string, not an object"),
    (b"42", "a number, not an object"),
    (encoded(good(3, number=None)), "number is not a whole number"),
    (encoded(good(3, number="3")), "number is not a whole number"),
    (encoded(good(3, number=True)), "number is not a whole number"),
    (encoded(good(3, time="noon")), "time is not a number"),
    (b'{"number": 3, "time": NaN, "argv": []}', "time is not a number"),
    (encoded(good(3, argv="python -m sglang")), "argv is not a list of strings"),
    (encoded(good(3, argv=["python", 3])), "argv is not a list of strings"),
    (encoded(good(3, env=["A=1"])), "env is not an object of strings"),
    (encoded(good(3, env={"A": 1})), "env is not an object of strings"),
    (encoded(good(3, stages={"load": "1 s"})), "stages is not an object of numbers"),
    (encoded(good(3, outcome="exploded")), "outcome is not one the journal knows"),
    (encoded(good(3, pid="123")), "pid is not a process id"),
    (encoded(good(3, diff="+ --x")), "diff is not a list of strings"),
    (encoded(good(3, id=7)), "id is not a string"),
]


@pytest.mark.parametrize(("line", "why"), DAMAGED, ids=[why for _, why in DAMAGED])
def test_each_kind_of_damage_is_named(line: bytes, why: str) -> None:
    with pytest.raises(BadRecord, match=why):
        parse_line(line)


def test_damaged_lines_are_skipped_with_one_warning_and_launches_go_on(tmp_path: Path) -> None:
    warnings: list[str] = []
    journal = journal_in(tmp_path, warnings)
    lines = [encoded(good(1)), *(line for line, _ in DAMAGED), encoded(good(2))]
    write_lines(journal.path, lines)

    assert [(a.number, a.outcome) for a in journal.attempts()] == [(1, "ready"), (2, "ready")]
    assert warnings == [
        f"skipped {len(DAMAGED)} damaged lines in {journal.path} (first at line 2: not UTF-8)"
    ]
    attempt = journal.begin("p", ARGV, {})  # the launch path reads the same file: no traceback
    assert attempt.number == 3 and len(warnings) == 1  # each bad line is warned about once


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FIELDS = list(good(1))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None, database=None)
@given(field=st.sampled_from(FIELDS), value=json_values)
def test_any_value_in_any_field_is_an_attempt_or_a_named_fault(field: str, value: Any) -> None:
    record = {**good(1), field: value}
    try:
        attempt = parse_attempt(record)
    except BadRecord as exc:
        assert str(exc)  # said, never a TypeError or KeyError
        return
    assert isinstance(attempt.number, int) and attempt.number >= 1 and math.isfinite(attempt.time)
    assert all(isinstance(word, str) for word in attempt.argv)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in attempt.env.items())


@settings(max_examples=200, deadline=None, database=None)
@given(line=st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
def test_any_line_is_an_attempt_or_a_named_fault(line: bytes) -> None:
    try:
        parse_line(line)
    except BadRecord as exc:
        assert str(exc)


@settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(junk=st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=6))
def test_the_launch_path_survives_any_junk_between_attempts(tmp_path: Path, junk: list[bytes]) -> None:
    folder = tmp_path / os.urandom(4).hex()
    journal = journal_in(folder)
    write_lines(journal.path, [encoded(good(1)), *junk, encoded(good(2))])
    assert journal.last() is not None and journal.last().number == 2  # type: ignore[union-attr]
    assert journal.begin("p", ARGV, {}).number == 3


# -- two consoles at once ------------------------------------------------------------------------------


def _launch_in_process(path: str, outcome: str, begun: Any, turn: Any, done: Any) -> None:
    """One console's launch: begin, wait until the other has begun too, then write the outcome when
    it is this one's turn (the refused one writes last, as in the issue)."""
    journal = Journal("ct129", Path(path), warn=lambda _: None)
    attempt = journal.begin("p", ARGV, {})
    begun.wait()
    turn.wait()
    attempt.outcome = outcome  # type: ignore[assignment]
    if outcome == "running":
        attempt.pid = os.getpid()
    journal.update(attempt)
    done.set()


def test_two_consoles_launching_at_once_each_keep_their_own_attempt(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    path = str(tmp_path / "ct129.jsonl")
    begun = ctx.Barrier(2)
    running_turn, refused_turn = ctx.Event(), ctx.Event()
    running_done, refused_done = ctx.Event(), ctx.Event()
    procs = [
        ctx.Process(target=_launch_in_process, args=(path, "running", begun, running_turn, running_done)),
        ctx.Process(target=_launch_in_process, args=(path, "refused", begun, refused_turn, refused_done)),
    ]
    for proc in procs:
        proc.start()
    running_turn.set()
    assert running_done.wait(60)
    refused_turn.set()
    assert refused_done.wait(60)
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0

    attempts = Journal("ct129", Path(path)).attempts()
    assert sorted(a.number for a in attempts) == [1, 2]  # a number each
    assert sorted(a.outcome for a in attempts) == ["refused", "running"]
    running = next(a for a in attempts if a.outcome == "running")
    assert running.pid == procs[0].pid  # the journal says exactly what ran
    assert len({a.id for a in attempts}) == 2


# -- a folder that cannot be written ---------------------------------------------------------------------


def test_a_journal_folder_that_is_a_file_refuses_before_anything_starts(tmp_path: Path) -> None:
    blocker = tmp_path / "journal"
    blocker.write_text("not a folder\n")
    journal = Journal("ct129", blocker / "ct129.jsonl")
    with pytest.raises(JournalError, match=f"folder {blocker} cannot be written"):
        journal.begin("p", ARGV, {})


def test_an_update_that_cannot_be_written_is_warned_about_not_raised(tmp_path: Path) -> None:
    warnings: list[str] = []
    journal = journal_in(tmp_path / "journal", warnings)
    attempt = journal.begin("p", ARGV, {})
    shutil.rmtree(journal.path.parent)
    journal.path.parent.write_text("in the way\n")
    attempt.outcome = "running"
    journal.update(attempt)
    assert len(warnings) == 1 and "attempt 1 (running) not journaled" in warnings[0]


BEGIN = """
import sys
from pathlib import Path
from gdnconsole.host.journal import Journal, JournalError
try:
    Journal("ct129", Path(sys.argv[1]) / "ct129.jsonl").begin("p", ["python3"], {})
except JournalError as exc:
    print(exc)
    sys.exit(9)
"""


def _in_mount_namespace(script: str, folder: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        message = "a mount namespace needs root and util-linux's unshare"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    shell = (
        script + f"\nexec {shlex.quote(sys.executable)} -I -c {shlex.quote(BEGIN)} {shlex.quote(str(folder))}"
    )
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-ec", shell]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_a_read_only_journal_folder_refuses_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    folder.mkdir()
    done = _in_mount_namespace(f"mount -t tmpfs -o ro,size=1m tmpfs {shlex.quote(str(folder))}", folder)
    assert done.returncode == 9, done.stderr
    assert done.stdout.strip().splitlines() == [
        f"the launch journal's folder {folder} cannot be written (Read-only file system): nothing started"
    ]


def test_a_full_journal_folder_refuses_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    folder.mkdir()
    quoted = shlex.quote(str(folder))
    line = json.dumps(good(1))
    page = (
        line + "\n" + " " * (4096 - len(line) - 2) + "\n"
    )  # its last page full: one more byte needs one more
    fill = (
        f"mount -t tmpfs -o size=64k tmpfs {quoted}\n"
        f"printf %s {shlex.quote(page)} > {quoted}/ct129.jsonl\n"
        f"dd if=/dev/zero of={quoted}/filler bs=4k 2>/dev/null || true"
    )
    done = _in_mount_namespace(fill, folder)
    assert done.returncode == 9, done.stderr
    assert "cannot be written (No space left on device): nothing started" in done.stdout


# -- reading from the end ------------------------------------------------------------------------------


def test_the_launch_path_reads_back_only_to_the_last_attempts_first_line(tmp_path: Path) -> None:
    warnings: list[str] = []
    journal = journal_in(tmp_path, warnings)
    old = [b"damaged, far back"]
    for n in range(1, 200):
        old += [encoded(good(n, outcome="starting")), encoded(good(n, outcome="stopped"))]
    write_lines(journal.path, old)
    latest = journal.begin("p", ARGV, {})  # its first line ("starting") is near the end
    latest.outcome, latest.pid = "running", 4242
    journal.update(latest)
    journal.update(Attempt(**{**good(199), "outcome": "stopped"}))  # an older one, written since

    assert journal.last() == latest
    assert journal.begin("p", ARGV, {}).number == 201
    assert journal.of_pid(4242) == latest
    assert warnings == []  # the damaged first line was never read


def test_the_cursor_pages_back_each_attempt_once_in_its_latest_state(tmp_path: Path) -> None:
    journal = journal_in(tmp_path)
    lines = [encoded(good(n, outcome="starting")) for n in range(1, 6)]
    lines += [encoded(good(2, outcome="crashed")), encoded(good(5, outcome="verified"))]
    write_lines(journal.path, lines)
    cursor = journal.cursor()
    pages = [cursor.page(2), cursor.page(2), cursor.page(2), cursor.page(2)]
    numbers = [[a.number for a in page] for page in pages]
    assert numbers == [[5, 2], [4, 3], [1], []]
    outcomes = {a.number: a.outcome for page in pages for a in page}
    assert outcomes == {5: "verified", 2: "crashed", 4: "starting", 3: "starting", 1: "starting"}
    assert cursor.done


def test_a_server_is_found_by_its_pid_however_its_line_is_spaced(tmp_path: Path) -> None:
    journal = journal_in(tmp_path)
    compact = json.dumps(good(1, pid=4242, outcome="verified"), separators=(",", ":")).encode()
    write_lines(journal.path, [compact, encoded(good(2, pid=42424, outcome="stopped"))])
    found = journal.of_pid(4242)
    assert found is not None and (found.number, found.outcome) == (1, "verified")
    assert journal.of_pid(424) is None and journal.of_pid(42424).number == 2  # type: ignore[union-attr]


line_bytes = st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")) | st.sampled_from(
    [b"", b"  ", b"pid 7"]
)


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(lines=st.lists(line_bytes, max_size=30), block=st.integers(1, 40), end_newline=st.booleans())
def test_lines_backward_gives_every_line_and_its_offset(
    monkeypatch: pytest.MonkeyPatch, lines: list[bytes], block: int, end_newline: bool
) -> None:
    monkeypatch.setattr(journal_module, "BLOCK", block)
    monkeypatch.setattr(journal_module, "LINE_MAX", 20)
    data = b"\n".join(lines) + (b"\n" if end_newline and lines else b"")
    expected, offset = [], 0
    for line in lines:
        if len(line) > 20:
            expected.append((offset, None))  # never held whole
        elif line.strip():
            expected.append((offset, line))
        offset += len(line) + 1
    fh = io.BytesIO(data)
    assert list(journal_module.lines_backward(fh, len(data))) == expected[::-1]
    having = re.compile(rb"pid 7")
    found = list(journal_module.lines_backward(fh, len(data), having))
    wanted = [(o, line) for o, line in expected if line is not None and having.search(line)]
    assert [item for item in found if item[1] is not None and having.search(item[1])] == wanted[::-1]
