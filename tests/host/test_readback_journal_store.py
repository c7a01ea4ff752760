"""The journal and the tune store read back past the damage they already skip: a line nested deeply
enough to exhaust the stack of json's decoder is one damaged line, and a FIFO at either file is said in
one warning, never waited on."""

from __future__ import annotations

import json
import os
from pathlib import Path

from gdnconsole.host.journal import Journal
from gdnconsole.tune.store import TuneStore

DEEP = b"[" * 100_000


def test_a_deeply_nested_journal_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "ct129.jsonl"
    path.write_bytes(DEEP + b"\n")
    said: list[str] = []
    assert Journal("ct129", path, warn=said.append).attempts() == []
    assert said == [f"skipped 1 damaged line in {path} (first at line 1: nested too deeply)"]


def test_a_fifo_at_the_journal_is_said_not_waited_on(tmp_path: Path) -> None:
    path = tmp_path / "ct129.jsonl"
    os.mkfifo(path)
    said: list[str] = []
    assert Journal("ct129", path, warn=said.append).last() is None
    assert said == [f"the journal {path} cannot be read: not a regular file (a FIFO, device or socket)"]


def test_a_deeply_nested_store_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    said: list[str] = []
    store = TuneStore("ct129", tmp_path, warn=said.append)
    store.path.write_bytes(DEEP + b"\n" + json.dumps({"kind": "nonsense"}).encode() + b"\n")
    assert store.sweeps() == []
    assert said == [f"skipped 2 damaged lines in {store.path} (first at line 1: nested too deeply)"]


def test_a_fifo_at_the_store_is_said_not_waited_on(tmp_path: Path) -> None:
    said: list[str] = []
    store = TuneStore("ct129", tmp_path, warn=said.append)
    os.mkfifo(store.path)
    assert store.sweeps() == []
    assert said == [
        f"the tune store {store.path} cannot be read: not a regular file (a FIFO, device or socket)"
    ]
