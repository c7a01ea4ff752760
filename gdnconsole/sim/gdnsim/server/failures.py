"""How a rank's startup stops: with an exception SGLang would log, or by hanging."""

from __future__ import annotations


class SchedulerFailed(Exception):
    """A rank cannot go on; ``traceback`` is what SGLang logs after "Scheduler hit an exception: "."""

    def __init__(self, traceback: str) -> None:
        super().__init__(traceback)
        self.traceback = traceback
