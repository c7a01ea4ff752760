"""The prompt history read back when its file is damaged or hostile: a bad line is skipped and said once
per read (how many, the first's line and fault), never a traceback; a FIFO is never waited on."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gdnconsole.host.prompthistory import PromptHistory

GOOD = {"time": 1.0, "kind": "prompt", "request": {"prompt": "Say hi"}, "result": {"ok": True}}


def history(tmp_path: Path, *lines: bytes) -> tuple[PromptHistory, list[str]]:
    path = tmp_path / "ct129.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    said: list[str] = []
    return PromptHistory("ct129", path, warn=said.append), said


def good(prompt: str = "Say hi") -> bytes:
    return json.dumps({**GOOD, "request": {"prompt": prompt}}).encode()


def test_damaged_lines_are_skipped_and_said_once_per_read(tmp_path: Path) -> None:
    hist, said = history(
        tmp_path, good("one"), b'{"time": 2, "kind": "prompt", "requ', b"\xff\xfe", good("two")
    )
    assert hist.prompts() == ["one", "two"]
    assert said == [f"skipped 2 damaged lines in {hist.path} (first at line 2: not JSON (cut by a crash?))"]
    hist.prompts()
    assert len(said) == 1  # the same damage is not said again


def test_nesting_deep_enough_to_exhaust_the_stack_is_a_damaged_line(tmp_path: Path) -> None:
    hist, said = history(tmp_path, b"[" * 100_000, good())
    assert hist.prompts() == ["Say hi"]
    assert said == [f"skipped 1 damaged line in {hist.path} (first at line 1: nested too deeply)"]


def test_a_time_too_large_for_a_float_is_a_damaged_line(tmp_path: Path) -> None:
    hist, said = history(tmp_path, json.dumps({**GOOD, "time": 10**400}).encode(), good("kept"))
    assert hist.prompts() == ["kept"]
    assert said and "line 1: time is not a number" in said[0]


def test_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    path = tmp_path / "ct129.jsonl"
    os.mkfifo(path)
    said: list[str] = []
    assert PromptHistory("ct129", path, warn=said.append).prompts() == []
    assert said == [
        f"the prompt history {path} cannot be read: not a regular file (a FIFO, device or socket)"
    ]


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
RECORD = st.fixed_dictionaries(
    {},
    optional={"time": JSONISH, "kind": st.sampled_from(["prompt", "burst", "x"]) | JSONISH,
              "request": JSONISH, "result": JSONISH},
)  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(RECORD | JSONISH, max_size=6), junk=st.binary(max_size=40))
@example(records=[{**GOOD, "time": 10**400}], junk=b"")
def test_any_shape_is_read_or_skipped_never_a_traceback(
    tmp_path: Path, records: list[object], junk: bytes
) -> None:
    lines = [json.dumps(r).encode() for r in records] + [junk.replace(b"\n", b"")]
    hist, said = history(tmp_path, *lines)
    prompts = hist.prompts()
    assert all(isinstance(p, str) for p in prompts)
    assert len(said) <= 1
