"""The server log as one session has read it: where the agent is in the file, and the one parse of it.

The session applies the agent's ``log`` and ``log_reset`` frames here (host/state.py parses them); the
dashboard's log pane, the status bar, the alerts and `status --json` read the offset, the mirror and the
tracker from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gdnconsole.logs.document import MirrorDocument
from gdnconsole.logs.meaning import LogMeaning
from gdnconsole.sglang.tracker import StageTracker

if TYPE_CHECKING:
    from gdnconsole.host.state import LogChunk

RECENT_BYTES = 1 << 20  # text kept in memory for a quick look; views page through the mirror file

ROTATED = {  # how another's rotation of the log is said in the mirror, by the agent's reason
    "truncated": "truncated (copytruncate, or `> log`)",
    "replaced": "rotated or replaced (the old file was read to its end)",
}


@dataclass
class LogState:
    """The server log as read so far: where the agent is in the file, and the one parse of it.

    With a ``mirror`` every byte read is appended to that local file, parsed and indexed as it is written
    (``logs.document.MirrorDocument``): the dashboard's log pane pages through it when told it grew, and
    the status bar, alerts and `status --json` read the same tracker. Without one (the headless commands)
    only the parse is kept. Either way the session holds an index and the recent lines, never the log."""

    path: str
    offset: int = 0  # bytes of the file read so far (always at a line boundary)
    inode: int | None = None
    size: int = 0  # the file's size when the agent last looked
    held: int = 0  # of which, after the offset, an unfinished last line (a progress bar) the agent holds
    lines: int = 0
    tail: str = ""  # the last RECENT_BYTES of text read, for a glance without the mirror
    resets: int = 0
    seen: bool = False  # the agent has said something about the file
    meaning: LogMeaning = field(default_factory=LogMeaning)
    doc: MirrorDocument | None = None  # the mirror, sharing ``meaning``

    @classmethod
    def create(cls, path: str, mirror: Path | None) -> LogState:
        if mirror is None:
            return cls(path, meaning=LogMeaning(per_line=False))
        meaning = LogMeaning()
        return cls(path, meaning=meaning, doc=MirrorDocument(mirror, meaning))

    @property
    def tracker(self) -> StageTracker:
        return self.meaning.tracker

    @property
    def mirror(self) -> Path | None:
        """The local copy of what was read, for views that page through the file."""
        return self.doc.path if self.doc is not None else None

    def recent(self, count: int = 1000) -> list[str]:
        """The last ``count`` whole lines read (as many as the kept tail holds)."""
        lines = self.tail.split("\n")[:-1]
        if len(self.tail) >= RECENT_BYTES and lines:
            lines = lines[1:]  # the first one may be cut
        return lines[-count:]

    def append(self, data: bytes) -> None:
        """Whole lines read after the others: parsed (and mirrored), counted, kept in the tail."""
        count = self.doc.append(data) if self.doc is not None else self.meaning.feed_chunk(data)
        self.lines += count
        # Decode only what is kept: a cut multi-byte character at the start becomes one replacement char.
        self.tail = (self.tail + data[-RECENT_BYTES:].decode("utf-8", errors="replace"))[-RECENT_BYTES:]

    def take(self, chunk: LogChunk) -> bool:
        """Apply a ``log`` frame: its lines are appended when they start where the read stopped; a
        duplicate after a reconnect, or one out of order, is never applied twice (False). The file's
        size, what the agent holds and the inode are taken from every frame."""
        self.size, self.held = chunk.size, chunk.held
        if chunk.names_inode:
            self.inode = chunk.inode
        if chunk.offset != self.offset:
            return False
        # Batch and access lines are most of a serving log: only the others (and the ends of each run of
        # them) go through the tracker, which reads the same story from them (logs/meaning.py).
        self.append(chunk.data)
        self.offset = chunk.end
        self.seen = True
        return True

    @property
    def caught_up(self) -> bool:
        """Everything the agent can send has come: a last line that has no newline yet (a hung
        server's progress bar) may never be finished, and does not count."""
        return self.offset + self.held >= self.size

    def restart(self, inode: int | None, *, own: bool = False, reason: str = "replaced") -> None:
        """The file was truncated or replaced: read it again from its start. ``own``: by this console's
        launch (it rotates the log), which starts a new story: the mirror and its parse start again.
        Anyone else's rotation (logrotate at midnight, `> log`) continues the story: the server that
        wrote the old file may well write the new one, and its startup, stage and VERIFIED still hold
        (a relaunch in the new file is found by its own first lines). A line says so where it happened,
        as ``tail -F`` does."""
        self.offset, self.inode, self.size, self.held = 0, inode, 0, 0
        if not own and reason in ROTATED and self.lines:
            self.append(
                f"gdnconsole: {self.path} was {ROTATED[reason]}; following it from its new start\n".encode()
            )
            return
        self.lines = 0
        self.tail = ""
        self.resets += 1
        if self.doc is not None:
            self.doc.clear(own=own, reason=reason)  # the mirror restarts with the parse
        else:
            self.meaning.reset()
