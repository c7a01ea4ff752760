"""The real SGLang excerpts the suite reads are kept in the repository (real_logs/), so a plain clone runs
every test that reads them. Their source is ../shared/sglang/logs: where it is laid beside the clone, the
copy must still be the same, byte for byte; where it is not, this test alone is skipped, and says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import needs
from tests.conftest import REAL_LOGS, SHARED_LOGS


def test_the_suite_has_its_real_excerpts_in_the_repository() -> None:
    names = {p.name for p in REAL_LOGS.iterdir()}
    assert "README.md" in names and len([n for n in names if n.endswith(".log")]) >= 8


def test_the_copied_excerpts_are_their_source_byte_for_byte() -> None:
    needs.require_path(SHARED_LOGS, "the shared SGLang log excerpts (../shared/sglang/logs)")
    source = {p.name: p.read_bytes() for p in SHARED_LOGS.iterdir() if p.is_file()}
    copy = {p.name: p.read_bytes() for p in REAL_LOGS.iterdir()}
    assert copy == source, sorted(set(copy) ^ set(source)) or "a file differs"


def test_missing_shared_data_skips_naming_what_and_where(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"the excerpts not found at .*/gone"):
        needs.require_path(tmp_path / "gone", "the excerpts")


def test_missing_shared_data_fails_under_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """CI lays shared/ beside its clone: a skip there would hide that the copy was never checked."""
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"the excerpts not found at"):
        needs.require_path(tmp_path / "gone", "the excerpts")
