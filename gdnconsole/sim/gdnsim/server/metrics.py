"""``/metrics`` as a real SGLang server serves it: SGLang always runs prometheus_client in multiprocess
mode (it sets ``PROMETHEUS_MULTIPROC_DIR``, 0.5.11 utils/common.py:1401-1408), so what comes out is what
``MultiProcessCollector`` + ``generate_latest`` (prometheus_client 0.26 multiprocess.py, exposition.py)
make of the processes' files:

- a family appears only once one of its children exists: labels are set lazily, on the first
  ``log_stats`` (scheduler gauges) or the first finished request (tokenizer counters and histograms);
- gauges with ``multiprocess_mode="mostrecent"`` lose the ``pid`` label, the others (mode ``all``) keep it;
- counters are named without ``_total`` inside, so HELP and TYPE carry ``name_total``; no ``_created``;
- a histogram's samples come as ``_sum``, the cumulative ``_bucket`` (``le`` as Go floats), ``_count``;
- labels sorted by name, values as Go floats (``0.0``, ``1.0``).

Everything lives in the server process: a restart starts from nothing, as SGLang's fresh multiprocess
directory does."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from gdnsim.server.metrics_defs import FAMILIES, Family

Labels = tuple[tuple[str, str], ...]


def go_float(value: float) -> str:
    """prometheus_client's ``floatToGoString`` (utils.py)."""
    if value == math.inf:
        return "+Inf"
    if value == -math.inf:
        return "-Inf"
    if math.isnan(value):
        return "NaN"
    text = repr(float(value))
    dot = text.find(".")
    if value > 0 and dot > 6:
        mantissa = f"{text[0]}.{text[1:dot]}{text[dot + 1 :]}".rstrip("0.")
        return f"{mantissa}e+{dot - 1:02d}"
    return text


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labelstr(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items())) + "}"


@dataclass
class Histo:
    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0

    def observe(self, value: float) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.buckets) + 1)
        self.total += value
        for i, bound in enumerate((*self.buckets, math.inf)):
            if value <= bound:
                self.counts[i] += 1
                break


@dataclass
class Registry:
    """The children that exist, per family, in the order they were made."""

    version: str
    gauges: dict[str, dict[Labels, float]] = field(default_factory=dict)
    counters: dict[str, dict[Labels, float]] = field(default_factory=dict)
    histos: dict[str, dict[Labels, Histo]] = field(default_factory=dict)

    def families(self) -> tuple[Family, ...]:
        return FAMILIES[self.version]

    def family(self, name: str) -> Family:
        for fam in FAMILIES[self.version]:
            if fam.name == name:
                return fam
        raise KeyError(name)

    def has(self, name: str) -> bool:
        return any(fam.name == name for fam in FAMILIES[self.version])

    def has_child(self, name: str, labels: Mapping[str, str]) -> bool:
        return tuple(sorted(labels.items())) in self.gauges.get(name, {})

    def set(self, name: str, labels: Mapping[str, str], value: float) -> None:
        self.gauges.setdefault(name, {})[tuple(sorted(labels.items()))] = float(value)

    def inc(self, name: str, labels: Mapping[str, str], value: float = 1.0) -> None:
        children = self.counters.setdefault(name, {})
        key = tuple(sorted(labels.items()))
        children[key] = children.get(key, 0.0) + value

    def observe(self, name: str, labels: Mapping[str, str], value: float) -> None:
        buckets = self.family(name).buckets or ()
        children = self.histos.setdefault(name, {})
        children.setdefault(tuple(sorted(labels.items())), Histo(buckets)).observe(value)

    def render(self, scheduler_pid: int) -> str:
        out: list[str] = []
        for fam in FAMILIES[self.version]:
            out.extend(self._family_lines(fam, scheduler_pid))
        return "".join(out)

    def _family_lines(self, fam: Family, pid: int) -> list[str]:
        if fam.kind == "gauge" and fam.name in self.gauges:
            lines = _head(fam.name, fam.doc, "gauge")
            for labels, value in self.gauges[fam.name].items():
                extra = {"pid": str(pid)} if fam.pid else {}
                lines.append(f"{fam.name}{_labelstr({**dict(labels), **extra})} {go_float(value)}\n")
            return lines
        if fam.kind == "counter" and fam.name in self.counters:
            lines = _head(fam.name, fam.doc, "counter")
            for labels, value in self.counters[fam.name].items():
                lines.append(f"{fam.name}{_labelstr(dict(labels))} {go_float(value)}\n")
            return lines
        if fam.kind == "histogram" and fam.name in self.histos:
            lines = _head(fam.name, fam.doc, "histogram")
            for labels, histo in self.histos[fam.name].items():
                lines.extend(_histo_lines(fam.name, dict(labels), histo))
            return lines
        return []


def _head(name: str, doc: str, kind: str) -> list[str]:
    doc = doc.replace("\\", "\\\\").replace("\n", "\\n")
    return [f"# HELP {name} {doc}\n", f"# TYPE {name} {kind}\n"]


def _histo_lines(name: str, labels: dict[str, str], histo: Histo) -> list[str]:
    lines = [f"{name}_sum{_labelstr(labels)} {go_float(histo.total)}\n"]
    acc = 0
    for bound, count in zip((*histo.buckets, math.inf), histo.counts, strict=True):
        acc += count
        lines.append(f"{name}_bucket{_labelstr({**labels, 'le': go_float(bound)})} {go_float(acc)}\n")
    lines.append(f"{name}_count{_labelstr(labels)} {go_float(acc)}\n")
    return lines
