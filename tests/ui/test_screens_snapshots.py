"""How every screen looks that no other snapshot test shows: the dashboard starting, serving VERIFIED and
just crashed, its help, the relaunch confirmation over it, the journal of five attempts, the log view
filtered, and both light themes. The same shots make `make screenshots` (tests/ui/screens.py).
Regenerate with `pytest tests/ui/test_screens_snapshots.py --snapshot-update`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.screens import SHOT_BY_NAME, utc

SnapCompare = Callable[..., bool]

# The shots whose screen another snapshot test already shows (the dashboard, the form, the prompt panel
# and the log view in their own test files) are left out.
NEW = [
    "dashboard-startup",
    "dashboard-serving",
    "dashboard-crashed",
    "help",
    "relaunch-confirmation",
    "journal",
    "log-view-filtered",
    "dashboard-serving-gdn-light",
    "dashboard-serving-gdn-high-contrast",
    "log-view-gdn-light",
    "log-view-gdn-high-contrast",
]


@pytest.mark.parametrize("name", NEW)
def test_screen(
    snap_compare: SnapCompare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    shot = SHOT_BY_NAME[name]
    monkeypatch.chdir(tmp_path)  # the journal's folder is relative: its path on screen is the same each run
    app, steps = shot.make(tmp_path)
    with utc():
        assert snap_compare(app, terminal_size=shot.size, run_before=steps)
