"""How the tune screen looks with a finished sweep of the issue's grid on ct129 (tests/ui/tune_shot.py; the
same shot makes screenshots/tune.svg). Regenerate with `pytest tests/ui/test_tune_snapshots.py
--snapshot-update`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.screens import SHOT_BY_NAME, utc

SnapCompare = Callable[..., bool]


def test_tune_screen(snap_compare: SnapCompare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shot = SHOT_BY_NAME["tune"]
    monkeypatch.chdir(tmp_path)
    app, steps = shot.make(tmp_path)
    with utc():
        assert snap_compare(app, terminal_size=shot.size, run_before=steps)
