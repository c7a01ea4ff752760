"""`common.ask`, the yes/no question of adopt and of status's host key, on a real terminal (a pty): its
answers, and a Ctrl-C that always ends it, even one whose signal no read of the terminal ever sees."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys

import pytest

# The child asks once and says what came of it. With "elsewhere", the main thread blocks SIGINT and a
# thread waits without: the kernel hands the signal to that thread, as it may hand a Ctrl-C that comes
# just before the read to the flag alone, and the read is never interrupted (input() waits for ever).
# With "in-loop" it asks inside asyncio.run, and waits for the signal as it shows its prompt: a Ctrl-C
# from the moment the prompt shows is the question's, not asyncio.run's (which only cancels the task).
CHILD = """
import asyncio, signal, sys, threading, time
import click
from gdnconsole.cli.common import ask

class Showing:  # waits for a signal once the prompt is out
    def __init__(self, stream):
        self.stream, self.shown = stream, False
    def write(self, text):
        self.shown = "Adopt it?" in text
        return self.stream.write(text)
    def flush(self):
        self.stream.flush()
        if self.shown:
            self.shown = False
            for _ in range(6000):  # not signal.pause(): a signal just before it would leave it waiting
                time.sleep(0.01)  # for ever, the very race ask() is there to close

async def in_loop():
    sys.stderr = Showing(sys.stderr)
    return ask("Adopt it?")

if sys.argv[1] == "elsewhere":
    threading.Thread(target=threading.Event().wait, daemon=True).start()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
try:
    if sys.argv[1] == "in-loop":
        print("answer", asyncio.run(in_loop()), flush=True)
    print("answer", ask("Adopt it?", default=sys.argv[2] == "yes"), flush=True)
except KeyboardInterrupt:
    sys.exit(130)
except click.exceptions.Abort:
    sys.exit(7)
"""


class Terminal:
    """The child on a pty: what it says, and what is typed to it."""

    def __init__(self, *args: str) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, *args], stdin=slave, stdout=slave, stderr=slave
        )
        os.close(slave)
        self.said = b""

    def wait_for(self, text: bytes) -> None:
        while text not in self.said:
            ready, _, _ = select.select([self.master], [], [], 60)
            assert ready, self.said
            self.said += os.read(self.master, 4096)

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def end(self) -> tuple[int, str]:
        code = self.proc.wait(timeout=60)
        try:
            while select.select([self.master], [], [], 1)[0]:
                chunk = os.read(self.master, 4096)
                if not chunk:
                    break
                self.said += chunk
        except OSError:  # the pty ends with its last writer
            pass
        os.close(self.master)
        return code, self.said.decode(errors="replace")


@pytest.mark.parametrize(
    ("default", "keys", "answer"),
    [("no", b"y\n", "True"), ("no", b"\n", "False"), ("yes", b"\n", "True"), ("yes", b"No\n", "False")],
)
def test_an_answer_or_the_default(default: str, keys: bytes, answer: str) -> None:
    term = Terminal("here", default)
    term.wait_for(b"[Y/n]: " if default == "yes" else b"[y/N]: ")
    term.type(keys)
    code, said = term.end()
    assert code == 0 and f"answer {answer}" in said, said


def test_another_answer_asks_again() -> None:
    term = Terminal("here", "no")
    term.wait_for(b"Adopt it? [y/N]: ")
    term.type(b"maybe\n")
    term.wait_for(b"Error: invalid input\r\nAdopt it? [y/N]: ")
    term.type(b"yes\n")
    code, said = term.end()
    assert code == 0 and "answer True" in said, said


def test_the_end_of_the_terminal_is_no_answer() -> None:
    term = Terminal("here", "no")
    term.wait_for(b"Adopt it? [y/N]: ")
    term.type(b"\x04")  # Ctrl-D: the read returns nothing
    code, said = term.end()
    assert code == 7, said


@pytest.mark.parametrize("where", ["here", "elsewhere", "in-loop"])
def test_ctrl_c_ends_the_question(where: str) -> None:
    """SIGINT to the process, as the test of adopt sends it; "elsewhere" and "in-loop" make certain of
    what happens to one that comes just as the prompt shows."""
    term = Terminal(where, "no")
    term.wait_for(b"Adopt it? [y/N]: ")
    term.proc.send_signal(signal.SIGINT)
    code, said = term.end()
    assert code == 130, said
