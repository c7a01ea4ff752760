"""`gdnconsole log view FILE | cat`: in a pipe the log view prints the lines as plain text (as `less` does
there), never its full-screen UI; `--follow` then prints what is appended, across a rename rotation, as
`tail -F` would. A file that is not an SGLang log is said to be one, in one warning line."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from pathlib import Path

from gdnconsole.logs.textsafe import last_carriage_state
from tests.cli.test_config_cmds import GDNCONSOLE
from tests.ui.fixtures import startup, write_log


def view(path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [GDNCONSOLE, "log", "view", *args, str(path)],
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_in_a_pipe_the_lines_are_printed_plainly(tmp_path: Path) -> None:
    lines = startup(0, crash=True)
    log = write_log(tmp_path / "serve.log", lines)
    result = view(log)
    assert result.returncode == 0 and result.stderr == b""
    assert any("\r" in line for line in lines)  # a tqdm bar: its last state, as a terminal shows it
    assert result.stdout.decode().splitlines() == [last_carriage_state(line) for line in lines]
    assert b"\x1b" not in result.stdout and b"\r" not in result.stdout  # no screen, no colours


def test_a_line_that_holds_an_escape_is_printed_with_it_made_visible(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(
        b"[2026-11-30 09:00:00] Load weight begin.\n"
        b"[2026-11-30 09:00:01] prompt: \x1b]0;owned\x07\x1b[2J\tdone\n"
        b"[2026-11-30 09:00:02] last line, no newline"
    )
    out = view(log).stdout.decode()
    assert out.splitlines() == [
        "[2026-11-30 09:00:00] Load weight begin.",
        "[2026-11-30 09:00:01] prompt: ^[]0;owned^G^[[2J\tdone",
        "[2026-11-30 09:00:02] last line, no newline",
    ]


def test_a_file_that_is_not_an_sglang_log_is_said_to_be_one_and_shown(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("buy milk\ncall the vendor\n")
    result = view(notes)
    assert result.returncode == 0 and result.stdout == b"buy milk\ncall the vendor\n"
    assert result.stderr.decode().splitlines() == [
        f"gdnconsole: warning: {notes}: not an SGLang log (no line of its first 64 KiB is one SGLang writes); "
        "shown as it is"
    ]


class Lines:
    """A process's stdout read line by line, each with a deadline (no sleeping: the read waits)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.out = proc.stdout
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.out, selectors.EVENT_READ)
        self.buffer = b""

    def take(self, count: int, timeout: float = 30) -> list[str]:
        deadline = time.monotonic() + timeout
        while self.buffer.count(b"\n") < count:
            left = deadline - time.monotonic()
            assert left > 0 and self.selector.select(left), f"waited for {count} lines: {self.buffer!r}"
            chunk = os.read(self.out.fileno(), 1 << 16)
            assert chunk, f"ended early: {self.buffer!r}"
            self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n", count)
        return [line.decode() for line in lines]


def test_follow_in_a_pipe_prints_growth_and_every_line_of_a_renamed_log(tmp_path: Path) -> None:
    log = write_log(tmp_path / "serve.log", ["[2026-11-30 09:00:00] first"])
    proc = subprocess.Popen(
        [GDNCONSOLE, "log", "view", "--follow", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    try:
        out = Lines(proc)
        assert out.take(1) == ["[2026-11-30 09:00:00] first"]
        with log.open("a", buffering=1) as old:
            old.write("[2026-11-30 09:00:01] second\n")
            assert out.take(1) == ["[2026-11-30 09:00:01] second"]
            log.rename(tmp_path / "serve.log.1")
            log.write_text("")  # logrotate's `create`
            old.write("[2026-11-30 09:00:02] after the rename\n")  # the server writes on to its file
            assert out.take(1) == ["[2026-11-30 09:00:02] after the rename"]
        with log.open("a", buffering=1) as new:
            new.write("[2026-11-30 09:00:03] in the new file\n")
            assert out.take(1) == ["[2026-11-30 09:00:03] in the new file"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
        assert proc.stderr is not None
        stderr = proc.stderr.read().decode()
        assert "rotated or replaced" in stderr and "Traceback" not in stderr
    finally:
        proc.kill()
        proc.wait()
