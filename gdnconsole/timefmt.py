"""Durations in the few characters a status bar or a dialog has for them."""

from __future__ import annotations


def span(seconds: float) -> str:
    """How long something took, said one way everywhere: ``406 ms``, ``2.0 s``, ``37.1 s``, ``1m40s``
    (it was ``0.41 s`` in one place, ``406 ms`` in another and ``2.0s`` in a third)."""
    if seconds < 1:
        return f"{max(0.0, seconds) * 1000:.0f} ms"
    if seconds < 100:
        return f"{seconds:.1f} s"
    return duration(seconds)


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
