"""A /metrics page read with Prometheus' own text parser into typed samples.

The page is untrusted (any server, any proxy in between): whatever the parser refuses, and a page past
``MAX_TEXT`` characters, is one ``ExpositionError`` value saying why, never a traceback.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

# A full 0.5.23 page with 8 DP ranks is some hundreds of KiB; past this it is not a /metrics page.
MAX_TEXT = 32 * 1024 * 1024

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Sample:
    """One line of the page: the sample's own name (``…_bucket``, ``…_total``), its labels sorted by
    name, and its value."""

    name: str
    labels: Labels
    value: float

    def label(self, key: str) -> str | None:
        for name, value in self.labels:
            if name == key:
                return value
        return None


@dataclass(frozen=True)
class Exposition:
    """A parsed page: every sample, and each family's declared type by sample name prefix."""

    samples: tuple[Sample, ...]
    types: tuple[tuple[str, str], ...]

    def named(self, name: str) -> Iterator[Sample]:
        """The samples whose own name is ``name``."""
        return (s for s in self.samples if s.name == name)

    def has(self, name: str) -> bool:
        return any(True for _ in self.named(name))


@dataclass(frozen=True)
class ExpositionError:
    """Why a page could not be read."""

    message: str


def parse(text: str) -> Exposition | ExpositionError:
    """Parse a Prometheus text page (format 0.0.4, as SGLang serves it)."""
    if len(text) > MAX_TEXT:
        return ExpositionError(f"/metrics page too large: {len(text)} characters (at most {MAX_TEXT})")
    samples: list[Sample] = []
    types: list[tuple[str, str]] = []
    try:
        for family in text_string_to_metric_families(text):
            types.append((family.name, family.type))
            for s in family.samples:
                samples.append(Sample(s.name, tuple(sorted(s.labels.items())), float(s.value)))
    # The parser says a bad line with ValueError, but a hostile page reaches others (IndexError,
    # TypeError, KeyError inside it): each is a refusal of this page, said as one value.
    except Exception as exc:
        # The parser quotes the page: its controls escaped here too, and cut, before anyone shows it.
        said = repr(str(exc))[1:-1][:300]
        return ExpositionError(f"/metrics page not readable: {type(exc).__name__}: {said}")
    return Exposition(tuple(samples), tuple(types))


def finite(value: float) -> float | None:
    """A value fit to show: NaN and ±Inf (a gauge SGLang never set to a number) are no reading."""
    return value if math.isfinite(value) else None
