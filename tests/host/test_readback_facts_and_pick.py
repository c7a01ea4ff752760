"""The facts a host said (seenfacts) and the theme picked in the palette (pickedtheme), read back when
their files are damaged or hostile: no facts, no pick, never a traceback or a read that waits for ever."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gdnconsole.host import seenfacts
from gdnconsole.ui import pickedtheme

FACTS = {"sglang": "0.5.23", "compute_capability": "8.6", "gpus": 2, "gpu_memory_mb": 49140, "time": 1.0}

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)


@pytest.fixture
def picked_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "state" / pickedtheme.FILE
    target.parent.mkdir()
    monkeypatch.setattr(pickedtheme, "path", lambda: target)
    return target


def facts_file(tmp_path: Path) -> Path:
    return seenfacts.path_for("ct129", tmp_path)


HOSTILE: dict[str, Callable[[Path], object]] = {
    "a FIFO": os.mkfifo,
    "nesting 100k deep": lambda p: p.write_text("[" * 100_000),
    "invalid UTF-8": lambda p: p.write_bytes(b'{"sglang": "\xff"}'),
    "a directory": lambda p: p.mkdir(),
}


@pytest.mark.parametrize("plant", HOSTILE.values(), ids=list(HOSTILE))
def test_hostile_facts_are_no_facts(tmp_path: Path, plant: Callable[[Path], object]) -> None:
    plant(facts_file(tmp_path))
    assert seenfacts.recall("ct129", tmp_path) is None


@pytest.mark.parametrize("plant", HOSTILE.values(), ids=list(HOSTILE))
def test_a_hostile_pick_is_no_pick(picked_file: Path, plant: Callable[[Path], object]) -> None:
    plant(picked_file)
    assert pickedtheme.remembered(None) is None


def test_facts_seen_at_a_time_no_float_holds_are_no_facts(tmp_path: Path) -> None:
    facts_file(tmp_path).write_text(json.dumps({**FACTS, "time": 10**400}))
    assert seenfacts.recall("ct129", tmp_path) is None


def test_good_facts_still_read(tmp_path: Path) -> None:
    facts_file(tmp_path).write_text(json.dumps(FACTS))
    seen = seenfacts.recall("ct129", tmp_path)
    assert seen is not None and seen.facts.sglang == "0.5.23" and seen.time == 1.0


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    raw=st.fixed_dictionaries({}, optional={k: JSONISH for k in FACTS}) | JSONISH,
    overrides=st.dictionaries(st.sampled_from(list(FACTS)), JSONISH, max_size=2),
)
@example(raw=FACTS, overrides={"time": 10**400})
def test_facts_of_any_shape_are_typed_or_none(
    tmp_path: Path, raw: object, overrides: dict[str, object]
) -> None:
    value = {**raw, **overrides} if isinstance(raw, dict) else raw
    facts_file(tmp_path).write_text(json.dumps(value))
    seen = seenfacts.recall("ct129", tmp_path)
    if seen is not None:
        assert isinstance(seen.facts.sglang, str) and isinstance(seen.time, float)
        assert seen.facts.gpus is None or isinstance(seen.facts.gpus, int)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.fixed_dictionaries({}, optional={"theme": JSONISH, "over": JSONISH}) | JSONISH)
def test_a_pick_of_any_shape_is_a_name_or_none(picked_file: Path, raw: object) -> None:
    picked_file.write_text(json.dumps(raw))
    picked = pickedtheme.remembered(None)
    assert picked is None or isinstance(picked, str)
