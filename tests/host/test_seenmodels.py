"""The model configs a host last showed, read back as untrusted (issue 26): a damaged, hostile or FIFO
file is no config, never a traceback or a wait; a good one gives the newest config per model."""

from __future__ import annotations

import os
from pathlib import Path

from gdnconsole.host import seenmodels
from gdnconsole.host.modelconfig import parse


def test_the_newest_config_per_model_is_recalled(tmp_path: Path) -> None:
    seenmodels.remember("box", "A/B", {"max_position_embeddings": 1}, tmp_path)
    seenmodels.remember("box", "A/C", {"max_position_embeddings": 2}, tmp_path)
    seenmodels.remember("box", "A/B", {"max_position_embeddings": 3}, tmp_path)
    seen = seenmodels.recall("box", "A/B", tmp_path)
    assert seen is not None and seen.config == {"max_position_embeddings": 3}
    assert seenmodels.recall("box", "A/D", tmp_path) is None


def test_damage_of_any_kind_is_no_config(tmp_path: Path) -> None:
    path = seenmodels.path_for("box", tmp_path)
    for text in ("[" * 100_000, '{"models": [{"model": "A/B", "config": {}, "time": 1e999}]}', "{", "7"):
        path.write_text(text)
        assert seenmodels.recall("box", "A/B", tmp_path) is None
    path.unlink()
    os.mkfifo(path)
    assert seenmodels.recall("box", "A/B", tmp_path) is None


def test_a_hostile_config_text_is_one_warning() -> None:
    for text, why in (
        ('{"max_position_embeddings": 1e999}', "not JSON"),  # Infinity
        ('{"rope_scaling": {"factor": 1e308}, "max_position_embeddings": 262144}', "cannot be read"),
        ("[1]", "not a JSON object"),
        ("x" * ((1 << 20) + 1), "over 1024 KiB"),
    ):
        read = parse(text, "A/B")
        assert read.config is None and read.warning is not None and why in read.warning, (text[:40], read)
    assert parse("", "A/B").warning is None and parse(None, "A/B").config is None
