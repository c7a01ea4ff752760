"""`check --model DIR` reads the model's config.json on this machine: a damaged or hostile one is no
config (the check goes on without it), never a traceback or a read that waits for ever."""

from __future__ import annotations

import os
from pathlib import Path

from gdnconsole.cli.check import local_config_json


def test_a_config_nested_too_deeply_is_no_config(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("[" * 100_000)
    assert local_config_json(str(tmp_path)) is None


def test_a_fifo_as_the_config_is_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "config.json")
    assert local_config_json(str(tmp_path)) is None


def test_a_good_config_is_read(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"architectures": ["Qwen3NextForCausalLM"]}')
    assert local_config_json(str(tmp_path)) == {"architectures": ["Qwen3NextForCausalLM"]}
