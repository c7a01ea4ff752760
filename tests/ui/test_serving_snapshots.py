"""How the serving figures look: the strip under ct129's status bar, stale on a small terminal, and the
serving screen (`v`) after six minutes of polls with a burst in the last one. The same shots make
`make screenshots` (tests/ui/screens.py). Regenerate with
`pytest tests/ui/test_serving_snapshots.py --snapshot-update`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.screens import SHOT_BY_NAME, utc

SnapCompare = Callable[..., bool]
SHOTS = ["dashboard-serving-strip", "dashboard-serving-stale", "serving"]


@pytest.mark.parametrize("name", SHOTS)
def test_serving(
    snap_compare: SnapCompare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    shot = SHOT_BY_NAME[name]
    monkeypatch.chdir(tmp_path)  # the journal's folder is relative, as the shots make it
    app, steps = shot.make(tmp_path)
    with utc():
        assert snap_compare(app, terminal_size=shot.size, run_before=steps)
