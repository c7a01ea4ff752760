"""Durations in the few characters a status bar or a dialog has for them."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """``45s``, ``3m12s``, ``2h05m``, ``3d04h``."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"
