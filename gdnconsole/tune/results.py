"""What a sweep measured: per combination a status and, per batch size, the figures; and what it was
measured on. ``to_json`` is the `tune --json` object (issue 19)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from gdnconsole.chat.model import rounded
from gdnconsole.tune.grid import Combo

Status = Literal["measured", "rejected", "crashed", "timeout"]


@dataclass
class BatchFigures:
    batch: int
    n: int  # requests answered
    tokens_per_s: float | None  # every answer's tokens over the batch's wall time
    request_tokens_per_s: float | None  # the median of each answer's own decode rate
    ttft_p50_ms: float | None
    ttft_p90_ms: float | None
    ttft_max_ms: float | None
    accept_length: float | None
    accept_source: str | None  # "request" (per answer) or "server" (the server's average)
    spread: float | None  # relative spread (stdev / mean) of the waves' tokens/s: the repeats' noise
    failed: int = 0
    speedup: float | None = None  # over the baseline at the same batch size

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens_per_s": rounded(self.tokens_per_s),
            "speedup": None if self.speedup is None else round(self.speedup, 3),
            "ttft_p50_ms": rounded(self.ttft_p50_ms),
            "ttft_p90_ms": rounded(self.ttft_p90_ms),
            "ttft_max_ms": rounded(self.ttft_max_ms),
            "accept_length": None if self.accept_length is None else round(self.accept_length, 3),
            "accept_source": self.accept_source,
            "request_tokens_per_s": rounded(self.request_tokens_per_s),
            "spread": None if self.spread is None else round(self.spread, 4),
            "n": self.n,
            "failed": self.failed,
        }

    @classmethod
    def from_json(cls, batch: int, raw: Mapping[str, Any]) -> BatchFigures:
        def num(key: str) -> float | None:
            value = raw.get(key)
            return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

        source = raw.get("accept_source")
        return cls(
            batch=batch,
            n=int(raw.get("n") or 0),
            tokens_per_s=num("tokens_per_s"),
            request_tokens_per_s=num("request_tokens_per_s"),
            ttft_p50_ms=num("ttft_p50_ms"),
            ttft_p90_ms=num("ttft_p90_ms"),
            ttft_max_ms=num("ttft_max_ms"),
            accept_length=num("accept_length"),
            accept_source=source if isinstance(source, str) else None,
            spread=num("spread"),
            failed=int(raw.get("failed") or 0),
            speedup=num("speedup"),
        )


@dataclass
class ComboResult:
    combo: Combo | None  # None: the baseline
    status: Status
    rule: tuple[str, str] | None = None  # (id, message) of the rule SGLang would raise
    fatal: str | None = None
    notices: list[str] = field(default_factory=list)
    startup_s: float | None = None
    kv_tokens: int | None = None
    gpu_mib: dict[str, int] = field(default_factory=dict)  # rank -> its GPU's MiB used at its pool's end
    warnings: list[str] = field(default_factory=list)
    attempt: int | None = None  # the journal's attempt number
    resumed: bool = False  # taken from an earlier sweep (--resume), not measured now
    same_as: Combo | None = None  # SGLang runs this one identically to ``same_as``: its figures, shared
    by_batch: dict[int, BatchFigures] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.combo.label if self.combo is not None else "baseline"

    def shared_by(self, combo: Combo, notices: Sequence[str]) -> ComboResult:
        """The same figures for ``combo``, which SGLang runs identically to this one (never launched)."""
        copy = dataclasses.replace(
            self,
            combo=combo,
            same_as=self.combo,
            notices=list(notices),
            gpu_mib=dict(self.gpu_mib),
            warnings=list(self.warnings),
            by_batch={b: dataclasses.replace(f) for b, f in self.by_batch.items()},
        )
        return copy

    def to_json(self) -> dict[str, Any]:
        return {
            "combo": self.combo.to_json() if self.combo is not None else None,
            "status": self.status,
            "rule": {"id": self.rule[0], "message": self.rule[1]} if self.rule else None,
            "fatal": self.fatal,
            "startup_s": None if self.startup_s is None else round(self.startup_s, 2),
            "kv_tokens": self.kv_tokens,
            "gpu_mib": dict(self.gpu_mib),
            "notices": list(self.notices),
            "warnings": list(self.warnings),
            "attempt": self.attempt,
            "resumed": self.resumed,
            "same_as": self.same_as.to_json() if self.same_as is not None else None,
            "by_batch": {str(b): f.to_json() for b, f in sorted(self.by_batch.items())},
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> ComboResult | None:
        status = raw.get("status")
        if status not in ("measured", "rejected", "crashed", "timeout"):
            return None
        rule = raw.get("rule")
        by_batch = raw.get("by_batch") if isinstance(raw.get("by_batch"), Mapping) else {}
        assert isinstance(by_batch, Mapping)
        return cls(
            combo=Combo.parse(raw.get("combo")),
            status=status,
            rule=(str(rule.get("id")), str(rule.get("message"))) if isinstance(rule, Mapping) else None,
            fatal=raw.get("fatal") if isinstance(raw.get("fatal"), str) else None,
            notices=[str(n) for n in raw.get("notices") or []],
            startup_s=raw.get("startup_s") if isinstance(raw.get("startup_s"), int | float) else None,
            kv_tokens=raw.get("kv_tokens") if isinstance(raw.get("kv_tokens"), int) else None,
            gpu_mib={str(k): int(v) for k, v in (raw.get("gpu_mib") or {}).items()},
            warnings=[str(w) for w in raw.get("warnings") or []],
            attempt=raw.get("attempt") if isinstance(raw.get("attempt"), int) else None,
            same_as=Combo.parse(raw.get("same_as")),
            by_batch={
                int(b): BatchFigures.from_json(int(b), f) for b, f in by_batch.items() if str(b).isdigit()
            },
        )


@dataclass(frozen=True)
class Identity:
    """What every measurement of a sweep was measured on."""

    host: str
    sglang: str | None
    model: str
    gpus: list[str]  # "NVIDIA RTX A6000" per GPU
    prompts: str  # the prompt set's name@digest
    flags: str  # a digest of the profile's flags apart from the speculative ones
    max_tokens: int = 0  # the length of every answer

    def key(self) -> dict[str, Any]:
        """Same host, model, version, prompt set, flags and answer length: figures --resume may reuse."""
        return {
            "host": self.host,
            "sglang": self.sglang,
            "model": self.model,
            "prompts": self.prompts,
            "flags": self.flags,
            "max_tokens": self.max_tokens,
        }


@dataclass(frozen=True)
class Best:
    combo: Combo
    batch: int
    speedup: float

    def to_json(self) -> dict[str, Any]:
        return {"combo": self.combo.to_json(), "batch": self.batch, "speedup": round(self.speedup, 3)}


def set_speedups(baseline: ComboResult | None, results: Sequence[ComboResult]) -> None:
    """Each measured combination's tokens/s over the baseline's, batch by batch."""
    base = baseline.by_batch if baseline is not None and baseline.status == "measured" else {}
    for result in results:
        for batch, figures in result.by_batch.items():
            ref = base.get(batch)
            if ref is not None and ref.tokens_per_s and figures.tokens_per_s is not None:
                figures.speedup = figures.tokens_per_s / ref.tokens_per_s
            else:
                figures.speedup = None


def best_of(results: Sequence[ComboResult], batches: Sequence[int]) -> Best | None:
    """The combination with the highest speed-up at the first batch size that has one (the batch the user
    listed first is the one they care most about); ties go to the earlier in the grid."""
    for batch in batches:
        scored = [
            (r.by_batch[batch].speedup, r)
            for r in results
            if r.combo is not None
            and r.status == "measured"
            and batch in r.by_batch
            and r.by_batch[batch].speedup is not None
        ]
        if scored:
            speedup, result = max(scored, key=lambda pair: pair[0] or 0.0)
            assert result.combo is not None and speedup is not None
            return Best(result.combo, batch, speedup)
    return None


def ranked(results: Sequence[ComboResult], batch: int) -> list[ComboResult]:
    """Measured first, fastest first at ``batch``; then the others in grid order."""
    measured = [r for r in results if r.status == "measured" and batch in r.by_batch]
    measured.sort(key=lambda r: -(r.by_batch[batch].tokens_per_s or 0.0))
    return measured + [r for r in results if r not in measured]
