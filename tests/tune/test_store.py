"""The tune store read back when damaged: every line checked against what its readers take from it, a bad
one skipped with one warning per read, and --resume, the journal screen's sweeps and the tune screen's
last sweep carry on with the good ones (issue 26)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gdnconsole.tune.grid import Combo
from gdnconsole.tune.results import BatchFigures, ComboResult, Identity, set_speedups
from gdnconsole.tune.store import TuneStore
from gdnconsole.tune.sweep import Sweep, from_record, stored, sweep_record
from tests.host.launchkit import sim_hosts_file

IDENT = Identity("ct129", "0.5.11", "Qwen/Qwen3.6-27B", ["NVIDIA RTX A6000"] * 2, "chat@abc", "f00", 64)


def figures(rate: float) -> dict[int, BatchFigures]:
    return {1: BatchFigures(1, 4, rate, rate, 6.0, 7.0, 8.0, None, None, 0.01)}


def a_sweep() -> Sweep:
    sweep = Sweep(IDENT, (1,), started=1.7e9, ended=1.7e9 + 300, profile="final")
    sweep.results = [
        ComboResult(None, "measured", attempt=2, by_batch=figures(40.0)),
        ComboResult(Combo(2, 1, 3), "measured", attempt=3, by_batch=figures(60.0), gpu_mib={"TP0": 30000}),
        ComboResult(Combo(3, 1, 4), "crashed", fatal="CUDA out of memory", attempt=4),
    ]
    set_speedups(sweep.baseline, sweep.results)
    return sweep


def result_line(result: ComboResult) -> dict[str, Any]:
    return {"kind": "result", "time": 1.7e9, "key": IDENT.key(), "result": result.to_json()}


def sweep_line() -> dict[str, Any]:
    return {"kind": "sweep", "time": 1.7e9 + 300, **sweep_record(a_sweep())}


def good_lines() -> list[dict[str, Any]]:
    return [*(result_line(r) for r in a_sweep().results), sweep_line()]


def store_with(tmp_path: Path, lines: list[bytes], warnings: list[str]) -> TuneStore:
    store = TuneStore("ct129", tmp_path, warn=warnings.append)
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_bytes(b"".join(line + b"\n" for line in lines))
    return store


def encoded(record: Any) -> bytes:
    return json.dumps(record).encode()


DAMAGED = [
    b"\xff\xfe",
    b'{"kind": "result", "key"',
    b"[1, 2]",
    b'"sweep"',
    encoded({"kind": "result", "key": IDENT.key(), "result": "measured"}),
    encoded(
        {**result_line(a_sweep().results[1]), "result": {**a_sweep().results[1].to_json(), "notices": 3}}
    ),
    encoded(
        {
            **result_line(a_sweep().results[1]),
            "result": {**a_sweep().results[1].to_json(), "by_batch": {"1": 5}},
        }
    ),
    encoded(
        {**result_line(a_sweep().results[1]), "result": {**a_sweep().results[1].to_json(), "gpu_mib": ["x"]}}
    ),
    encoded({**sweep_line(), "started": "noon"}),
    encoded({**sweep_line(), "results": 7}),
    encoded({**sweep_line(), "sweep": {**sweep_line()["sweep"], "gpus": 2}}),
    encoded(
        {**sweep_line(), "best": {"combo": {"num_steps": 1e400, "eagle_topk": 1, "num_draft_tokens": 2}}}
    ),
    encoded({**sweep_line(), "key": {**IDENT.key(), "max_tokens": "64"}}),
]


def test_damaged_lines_are_skipped_with_one_warning(tmp_path: Path) -> None:
    warnings: list[str] = []
    store = store_with(tmp_path, [*DAMAGED, *map(encoded, good_lines())], warnings)

    assert [e.profile for e in store.entries()] == ["final"]  # the journal screen's sweep
    found = store.measured(IDENT, (1,))  # --resume's reuse
    assert sorted(c.label if c else "baseline" for c in found) == ["baseline", "s2 k1 d3"]
    last = stored(store, "final")  # the tune screen's last sweep
    assert last is not None and [r.label for r in last.results] == ["baseline", "s2 k1 d3", "s3 k1 d4"]
    assert warnings == [f"skipped {len(DAMAGED)} damaged lines in {store.path} (first at line 1: not UTF-8)"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value that another value can take."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths_of(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += paths_of(item, (*prefix, index))
    return out


def replaced(record: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(record)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


LINES = good_lines()
PLACES = [(n, path) for n, line in enumerate(LINES) for path in paths_of(line)]


@settings(
    max_examples=400,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(place=st.sampled_from(PLACES), value=json_values)
def test_any_value_anywhere_is_read_or_skipped_never_a_traceback(
    tmp_path: Path, place: tuple[int, tuple[Any, ...]], value: Any
) -> None:
    n, path = place
    lines = [encoded(replaced(line, path, value) if i == n else line) for i, line in enumerate(LINES)]
    warnings: list[str] = []
    store = store_with(tmp_path, lines, warnings)
    store.entries()
    store.measured(IDENT, (1,))
    for record in store.sweeps():
        if isinstance(record.get("sweep"), dict):
            from_record(record)
    assert len(warnings) <= 1


def test_resume_reads_past_a_damaged_store(tmp_path: Path) -> None:
    config = sim_hosts_file(tmp_path, simulate={"tokens_per_s": 400.0})
    env = {
        **os.environ,
        "GDNCONSOLE_CONFIG": str(config),
        "GDNCONSOLE_JOURNAL_DIR": str(tmp_path / "journal"),
    }
    (tmp_path / "journal").mkdir()
    (tmp_path / "journal" / "simbox.tune.jsonl").write_bytes(b"\xff\xfe\n[1]\n")
    command = [sys.executable, "-m", "gdnconsole", "tune", "simbox", "--requests", "1", "--batch", "1", "--resume",
               "--grid", "num_steps=1 eagle_topk=1 num_draft_tokens=2"]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    warning = f"gdnconsole: warning: skipped 2 damaged lines in {tmp_path / 'journal' / 'simbox.tune.jsonl'}"
    assert [line for line in done.stderr.splitlines() if "damaged" in line] == [
        f"{warning} (first at line 1: not UTF-8)"
    ]


@pytest.mark.parametrize("line", DAMAGED[:4])
def test_a_damaged_line_alone_is_no_sweep(tmp_path: Path, line: bytes) -> None:
    warnings: list[str] = []
    store = store_with(tmp_path, [line], warnings)
    assert store.entries() == [] and store.measured(IDENT, (1,)) == {} and len(warnings) == 1
