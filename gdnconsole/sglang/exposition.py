"""A /metrics page read with Prometheus' own text parser into typed samples.

The page is untrusted (any server, any proxy in between): whatever the parser refuses, and a page past
``MAX_TEXT`` characters, is one ``ExpositionError`` value saying why, never a traceback.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

# A full 0.5.23 page with 8 DP ranks is some hundreds of KiB; past this it is not a /metrics page.
MAX_TEXT = 32 * 1024 * 1024

Labels = tuple[tuple[str, str], ...]
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABELS_KEPT = 65536  # label sets remembered between pages (a page holds some hundreds)
_labels_seen: dict[str, Labels] = {}


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


_SUFFIXES = ("_bucket", "_count", "_sum", "_created", "_total")


def _line_name(line: str) -> str:
    """The metric a line is of: a sample's name, or the name a ``# HELP``/``# TYPE`` line declares."""
    if line.startswith("#"):
        words = line.split(None, 3)
        return words[2] if len(words) > 2 else ""
    end = len(line)
    for stop in "{ \t":
        at = line.find(stop)
        if at != -1:
            end = min(end, at)
    return line[:end]


def _wanted(name: str, keep: frozenset[str]) -> bool:
    if name in keep:
        return True
    return any(name.endswith(sfx) and name[: -len(sfx)] in keep for sfx in _SUFFIXES)


def only(text: str, keep: frozenset[str]) -> str:
    """The lines of the families named in ``keep`` (as declared: a counter's ``…_total``): the parser is
    the cost of a scrape, and a page holds ten times the families the panel shows."""
    if _one_help_per_type(text):
        return _only_blocks(text, keep)
    return "\n".join(line for line in text.splitlines() if _wanted(_line_name(line), keep)) + "\n"


def _one_help_per_type(text: str) -> bool:
    """Every family opens with its ``# HELP`` line then its ``# TYPE``, as prometheus_client writes a
    page (SGLang's, in multiprocess mode too): the page splits into families at its HELP lines."""
    helps = text.count("\n# HELP ") + text.startswith("# HELP ")
    return helps > 0 and helps == text.count("\n# TYPE ") + text.startswith("# TYPE ")


def _only_blocks(text: str, keep: frozenset[str]) -> str:
    """``only`` a family at a time: fifteen times faster than a line at a time on a 0.5.23 page."""
    kept = []
    for i, block in enumerate(text.split("\n# HELP ")):
        if i == 0:
            if not block.startswith("# HELP "):
                continue  # what comes before the first family: no family's lines
            block = block[len("# HELP ") :]
        if _wanted(block[: block.find(" ")], keep):
            kept.append(block)
    return "".join("# HELP " + block.rstrip("\n") + "\n" for block in kept)


def parse(text: str, keep: frozenset[str] | None = None) -> Exposition | ExpositionError:
    """Parse a Prometheus text page (format 0.0.4, as SGLang serves it), only the families in ``keep``
    when given."""
    if len(text) > MAX_TEXT:
        return ExpositionError(f"/metrics page too large: {len(text)} characters (at most {MAX_TEXT})")
    if keep is not None:
        text = only(text, keep)
    try:
        fast = _common_lines(text)
        return fast if fast is not None else _parsed(text)
    # The parser says a bad line with ValueError, but a hostile page reaches others (IndexError,
    # TypeError, KeyError inside it): each is a refusal of this page, said as one value.
    except Exception as exc:
        # The parser quotes the page: its controls escaped here too, and cut, before anyone shows it.
        said = repr(str(exc))[1:-1][:300]
        return ExpositionError(f"/metrics page not readable: {type(exc).__name__}: {said}")


def _parsed(text: str) -> Exposition:
    """The page through prometheus_client's whole parser."""
    from prometheus_client.parser import text_string_to_metric_families  # with the first page, not at start

    samples: list[Sample] = []
    types: list[tuple[str, str]] = []
    for family in text_string_to_metric_families(text):
        types.append((family.name, family.type))
        for s in family.samples:
            samples.append(Sample(s.name, tuple(sorted(s.labels.items())), float(s.value)))
    return Exposition(tuple(samples), tuple(types))


def _common_lines(text: str) -> Exposition | None:
    """The page as SGLang writes it, a line at a time, each label set parsed once by prometheus_client's
    own ``parse_labels`` and remembered (the same series come back every poll: the label parser was two
    thirds of a poll's cost). None at the first line of any other shape: the whole parser reads it."""
    samples: list[Sample] = []
    types: list[tuple[str, str]] = []
    for line in text.split("\n"):
        if not line or line.startswith("# HELP "):
            continue
        if line.startswith("#"):
            words = line.split()
            if len(words) != 4 or words[1] != "TYPE":
                return None
            name = words[2].removesuffix("_total") if words[3] == "counter" else words[2]
            types.append((name, words[3]))
            continue
        sample = _sample(line)
        if sample is None:
            return None
        samples.append(sample)
    return Exposition(tuple(samples), tuple(types))


def _sample(line: str) -> Sample | None:
    brace = line.find("{")
    if brace == -1:
        name, _, rest = line.partition(" ")
        labels: Labels = ()
    else:
        close = line.rfind("}")
        if close < brace:
            return None
        name, rest = line[:brace], line[close + 1 :]
        labels = _labels(line[brace + 1 : close])
    words = rest.split()
    if not _NAME.fullmatch(name) or len(words) not in (1, 2):
        return None
    return Sample(name, labels, float(words[0]))


def _labels(text: str) -> Labels:
    known = _labels_seen.get(text)
    if known is None:
        from prometheus_client.parser import parse_labels  # the dashboard's first frame must not wait for it

        if len(_labels_seen) >= _LABELS_KEPT:
            _labels_seen.clear()
        known = _labels_seen[text] = tuple(sorted(parse_labels(text).items()))
    return known


def finite(value: float) -> float | None:
    """A value fit to show: NaN and ±Inf (a gauge SGLang never set to a number) are no reading."""
    return value if math.isfinite(value) else None
