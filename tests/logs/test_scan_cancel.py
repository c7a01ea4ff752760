"""A scan told to stop stops between two reads (the log view that asked for it quit): no full scan of a
large file stands between `q` and the shell."""

from __future__ import annotations

from pathlib import Path

import pytest

from gdnconsole.logs import document
from gdnconsole.logs import scan as logscan

LINE = b"[2026-11-30 09:00:00 TP0] Decode batch, #running-req: 1, gen throughput (token/s): 1.00, #queue-req: 0\n"


class After:
    """A ``cancelled`` that turns true at its ``n``-th call, counting the calls."""

    def __init__(self, n: int) -> None:
        self.n, self.calls = n, 0

    def __call__(self) -> bool:
        self.calls += 1
        return self.calls >= self.n


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "serve.log"
    path.write_bytes(LINE * 10_000)  # about 1 MiB
    return path


@pytest.mark.parametrize("fast", [True, False], ids=["mapped", "read"])
def test_a_scan_stops_at_the_read_after_it_is_cancelled(
    log: Path, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not fast:
        monkeypatch.setattr(logscan, "FAST_SCAN", None)
    elif logscan.FAST_SCAN is None:
        pytest.skip("the C pass only")
    monkeypatch.setattr(logscan, "WINDOW", 128 << 10)
    monkeypatch.setattr(logscan, "CHUNK", 128 << 10)
    cancelled = After(3)
    with pytest.raises(logscan.ScanCancelled):
        logscan.scan(log, parallel=False, cancelled=cancelled)
    assert cancelled.calls == 3  # checked before each read, stopped at the third


def test_a_scan_never_cancelled_reads_it_all(log: Path) -> None:
    never = After(10**9)
    assert logscan.scan(log, parallel=False, cancelled=never) == logscan.scan(log, parallel=False)
    assert never.calls >= 1


def test_a_cancelled_scan_leaves_the_document_unscanned(log: Path) -> None:
    doc = document.LogDocument(log)
    doc.build_index()
    assert doc.scan(lambda: True) is False
    assert (doc.scanned, doc.fed) == (False, 0)
    assert doc.scan() is True
    assert (doc.scanned, doc.fed) == (True, 10_000)
