"""The agent's Follower on a log renamed away (logrotate ``create``) while its writer writes on to it.

Driven poll by poll (no agent process, no timing): every line written to the old file after the rename
reaches the console before the new file's, even once the new file has bytes of its own."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gdnconsole.host import agent


class Sent:
    """What a Follower sends, in order: ("log", text) and ("log_reset", reason)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def __call__(self, message: dict[str, Any], *_: Any, **__: Any) -> None:
        if message["type"] == "log":
            if message["data"]:
                self.items.append(("log", message["data"]))
        else:
            self.items.append((message["type"], message["reason"]))

    def text(self) -> str:
        return "".join(data for kind, data in self.items if kind == "log")


def test_lines_the_old_writer_adds_after_the_new_file_has_bytes_come_before_the_new_file(
    tmp_path: Path,
) -> None:
    log = tmp_path / "serve.log"
    sent = Sent()
    with log.open("ab", buffering=0) as old:
        old.write(b"a1\n")
        follower = agent.Follower(str(log), 0, None, sent)
        follower.poll()
        os.rename(log, tmp_path / "serve.log.1")
        with log.open("ab", buffering=0) as new:  # logrotate's `create`
            old.write(b"b1\n")
            follower.poll()
            old.write(b"b2\n")
            new.write(b"c1\n")  # a new writer uses the new file, the old one writes on for a while
            follower.poll()
            old.write(b"b3\n")
            follower.poll()
            old.write(b"b4\n")
            follower.poll()
            follower.poll()  # the old file is quiet now: the new one is taken
            follower.poll()
    follower.close()
    reset = sent.items.index(("log_reset", "replaced"))
    before = "".join(data for kind, data in sent.items[:reset] if kind == "log")
    after = "".join(data for kind, data in sent.items[reset:] if kind == "log")
    assert before == "a1\nb1\nb2\nb3\nb4\n"
    assert after == "c1\n"


def test_a_renamed_log_that_never_stops_growing_gives_way_after_the_wait(
    tmp_path: Path, monkeypatch: Any
) -> None:
    log = tmp_path / "serve.log"
    sent = Sent()
    clock = [1000.0]
    monkeypatch.setattr(agent.time, "monotonic", lambda: clock[0])
    with log.open("ab", buffering=0) as old:
        follower = agent.Follower(str(log), 0, None, sent)
        follower.poll()
        os.rename(log, tmp_path / "serve.log.1")
        log.write_bytes(b"c1\n")
        for n in range(3):
            old.write(f"b{n}\n".encode())
            follower.poll()
        assert ("log_reset", "replaced") not in sent.items
        clock[0] += agent.ROTATE_WAIT_S
        old.write(b"b3\n")
        follower.poll()
        follower.poll()
    follower.close()
    assert sent.items[-2:] == [("log_reset", "replaced"), ("log", "c1\n")]
    assert sent.text() == "b0\nb1\nb2\nb3\nc1\n"
