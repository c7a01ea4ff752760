"""What SGLang's rules need to know of a host, as one pure value (issue 27): its SGLang version, its GPUs'
compute capability, count and memory. None is "not said": the rules then report only what holds whatever
it is. The host layer builds it from the agent's hello and GPU samples (``of``) or reads it back from what
a host said before (``parse``); `config check` builds it from its options. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class GpuSaid(Protocol):
    """One GPU as the host describes it (host.state.Gpu): only what the rules read of it."""

    @property
    def compute_capability(self) -> str | None: ...
    @property
    def total_mib(self) -> int | None: ...


class HelloSaid(Protocol):
    """The agent's hello (host.state.Hello): only what the rules read of it."""

    @property
    def sglang(self) -> str | None: ...
    @property
    def gpus(self) -> Sequence[GpuSaid]: ...


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class HostFacts:
    """What SGLang's rules need to know of the host (None: the agent has not said): one object per
    session, read by the flag form, `check --host`, `tune`, `config check` and the launcher alike."""

    sglang: str | None = None
    compute_capability: str | None = None  # of the first GPU that reports one
    gpus: int | None = None
    # One GPU's memory, of the first GPU that reports it: SGLang sizes chunked prefill by it. A float:
    # `config check --gpu-memory` takes GiB, which need not be a whole number of MiB.
    gpu_memory_mb: float | None = None

    @classmethod
    def of(cls, hello: HelloSaid | None, gpus: Sequence[GpuSaid]) -> HostFacts:
        """From the agent's hello and its latest GPU sample (the sample first: it is newer)."""
        listed = gpus or (hello.gpus if hello is not None else ())
        capability = next((g.compute_capability for g in listed if g.compute_capability), None)
        memory = next((g.total_mib for g in listed if g.total_mib), None)
        return cls(hello.sglang if hello is not None else None, capability, len(listed) or None, memory)

    def to_json(self) -> dict[str, Any]:
        return {
            "sglang": self.sglang,
            "compute_capability": self.compute_capability,
            "gpus": self.gpus,
            "gpu_memory_mb": self.gpu_memory_mb,
        }

    @classmethod
    def parse(cls, raw: Any) -> HostFacts:
        """Read back (untrusted): a field of the wrong type is not said."""
        data = raw if isinstance(raw, dict) else {}
        sglang, capability = data.get("sglang"), data.get("compute_capability")
        return cls(
            sglang if isinstance(sglang, str) else None,
            capability if isinstance(capability, str) else None,
            _int(data.get("gpus")),
            _int(data.get("gpu_memory_mb")),
        )

    def describe(self) -> str:
        parts = [f"SGLang {self.sglang}" if self.sglang else "SGLang unknown"]
        if self.compute_capability:
            parts.append(f"SM {self.compute_capability}")
        if self.gpus:
            parts.append(f"{self.gpus} GPU{'s' if self.gpus > 1 else ''}")
        return ", ".join(parts)
