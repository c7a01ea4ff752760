"""GPU memory per rank once the memory pool is allocated, as each combination's server starts.

SGLang logs ``Memory pool end. avail mem=X GB`` on each rank when its KV (and mamba) pools are allocated:
X is what that GPU has left then (torch's free memory, in GiB). The GPU memory a rank's GPU uses after the
pool is the GPU's total (NVML) minus X. The tracker's per-rank numbers cannot say it after VERIFIED: the
CUDA-graph lines that follow print their own ``avail mem`` over it; and NVML's figure then includes the
graphs too. So the lines are read as they arrive (the session's "log" news), and each rank's first
``Memory pool end`` of the server's startup is kept (the target model's pool)."""

from __future__ import annotations

from gdnconsole.host.session import HostSession
from gdnconsole.host.topics import Topic
from gdnconsole.sglang import events, logline
from gdnconsole.sglang.tracker import SOLE_RANK


class PoolWatch:
    """Listens to the session's log from now until ``close``; a log restarted by our launch starts it
    again (the new file is the new server's)."""

    def __init__(self, session: HostSession) -> None:
        self.session = session
        self.resets = session.log.resets
        self.seen = session.log.lines
        self.avail_gb: dict[str, float] = {}  # rank ("TP0") -> GiB available at its memory pool's end
        session.subscribe(self._heard)

    def close(self) -> None:
        self.session.unsubscribe(self._heard)

    def _heard(self, topic: Topic) -> None:
        if topic != "log":
            return
        log = self.session.log
        if log.resets != self.resets or log.lines < self.seen:
            self.resets, self.seen = log.resets, 0
            self.avail_gb.clear()
        if log.lines <= self.seen:
            return
        lines = log.recent(log.lines - self.seen)
        first = log.lines - len(lines) + 1
        for number, text in enumerate(lines, start=first):
            for part in logline.split_glued(text):
                event = events.classify(logline.parse(part), number)
                if event.kind == "pool_end" and "avail_gb" in event.numbers:
                    self.avail_gb.setdefault(event.log.rank or SOLE_RANK, event.numbers["avail_gb"])
        self.seen = log.lines

    def used_mib(self) -> dict[str, int]:
        """Rank -> MiB its GPU used once the pool was allocated (ranks placed on a GPU of known size)."""
        totals = {g.index: g.total_mib for g in self.session.gpus}
        out: dict[str, int] = {}
        for place in self.session.placements():
            avail = self.avail_gb.get(place.rank)
            total = totals.get(place.gpu) if place.gpu is not None else None
            if avail is not None and total:
                out[place.rank] = max(0, total - round(avail * 1024))
        return out
