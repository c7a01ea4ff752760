"""Where the tests find SGLang's own sources: the wheels ``make wheels`` unpacks (tests/tools/
sglang_wheels.py), under ``build/sgw`` or ``$GDN_SGLANG_WHEELS``."""

from __future__ import annotations

import os
from pathlib import Path

from tests.needs import require_path

ROOT = Path(__file__).resolve().parent.parent
WHEELS = Path(os.environ.get("GDN_SGLANG_WHEELS", ROOT / "build" / "sgw"))


def unpacked(version: str) -> Path:
    """``.../u<version>``, the root of that wheel's ``sglang`` package."""
    return WHEELS / f"u{version}"


def have(version: str) -> bool:
    return (unpacked(version) / "sglang" / "srt").is_dir()


def wheel_source(version: str, relative: str) -> Path:
    """``sglang/srt/<relative>`` of that version's wheel; skips the test (fails under CI) when missing."""
    path = unpacked(version) / "sglang" / "srt" / relative
    require_path(path, f"sglang {version}'s {relative} (`make wheels` unpacks it)")
    return path
