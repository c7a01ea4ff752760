"""The model's config.json read on the host (the flag form's and `check`'s rules): nesting deep enough
to exhaust json's decoder is no config, as any other damage is, never a traceback."""

from __future__ import annotations

import asyncio
from pathlib import Path

from gdnconsole.host.hostcheck import read_model_config
from tests.host.test_hostcheck import sim_host


def test_a_config_nested_too_deeply_is_no_config(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("[" * 100_000)
    assert asyncio.run(read_model_config(sim_host(tmp_path, "0.5.11"), str(model), None)) is None
