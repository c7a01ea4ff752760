"""How many toasts show at once: newest first, at most a few (fewer on a small terminal, where they are
compact too), the older ones folded into one "+N more" line, so that toasts never cover more than a
third of the log.

Textual stacks every live notification, oldest first; on 80x24 five of them hid most of the log. The app
hands its notifications to ``show`` instead of to the rack's own ``show``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from textual.geometry import Size
from textual.notifications import Notification
from textual.widgets._toast import Toast, ToastHolder, ToastRack

SMALL_HEIGHT = 30  # rows below which toasts are compact (no padding, no gap)
TOAST_WIDTH = 52  # cells, as ThemedApp's CSS has it
MORE_ID = "gdn-toasts-more"
SEVERITY_ORDER = ("information", "warning", "error")


def visible_count(height: int) -> int:
    """The toasts shown at once on a terminal ``height`` rows high."""
    return 1 if height < SMALL_HEIGHT else 2 if height < 45 else 3


@dataclass(frozen=True)
class Shown:
    """What the rack shows: the newest notifications, newest first, and how many older ones are folded."""

    newest: tuple[Notification, ...]
    folded: tuple[Notification, ...]


def toast_width(screen_width: int) -> int:
    """A toast's cells across, as the app's CSS sizes it (``width: 52; max-width: 45%``)."""
    return min(TOAST_WIDTH, screen_width * 45 // 100)


def rows_of(notification: Notification, width: int, compact: bool) -> int:
    """The rows a toast takes: its title and message wrapped to its width, its padding and the gap."""
    room = max(width - 3, 10)  # the coloured edge and the padding on each side
    lines = sum(max(1, -(-cell_len(line) // room)) for line in notification.message.splitlines() or [""])
    return lines + bool(notification.title) + (0 if compact else 3)


def choose(notifications: Sequence[Notification], height: int, width: int, room: int) -> Shown:
    """The newest notifications (newest first) that fit in ``room`` rows with the "+N more" line, at most
    ``visible_count`` of them and at least the newest one; the rest folded."""
    live = [n for n in notifications if not n.has_expired]
    live.sort(key=lambda n: n.raised_at, reverse=True)
    compact = height < SMALL_HEIGHT
    count, used = 0, 0
    for notification in live[: visible_count(height)]:
        more = 1 if len(live) > count + 1 else 0  # the "+N more" line the rest would need
        used += rows_of(notification, toast_width(width), compact)
        if count and used + more > room:
            break
        count += 1
    return Shown(tuple(live[:count]), tuple(live[count:]))


def more_notification(folded: Sequence[Notification]) -> Notification:
    """The "+N more" line: it lasts as long as the longest of the folded ones."""
    worst = max(folded, key=lambda n: SEVERITY_ORDER.index(n.severity)).severity
    left = max(n.time_left for n in folded)
    return Notification(
        f"+{len(folded)} more", severity=worst, timeout=max(left, 0.1), identity=f"{MORE_ID}-{len(folded)}"
    )


async def show(rack: ToastRack, notifications: Sequence[Notification], size: Size, room: int) -> None:
    """Make ``rack`` hold the chosen toasts in order (newest at the top), mounting only what is new;
    ``size``: the terminal's, ``room``: the rows they may cover."""
    shown = choose(notifications, size.height, size.width, room)
    wanted = list(shown.newest)
    if shown.folded:
        wanted.append(more_notification(shown.folded))
    ids = [ToastRack._toast_id(n) for n in wanted]
    stale = [child for child in rack.children if child.id not in ids or _out_of_order(rack, ids)]
    if stale:
        await rack.remove_children(stale)
    rack.display = bool(wanted)
    present = {child.id for child in rack.children}
    for index, notification in enumerate(wanted):
        if ids[index] in present:
            continue
        holder = ToastHolder(Toast(notification), id=ids[index])
        if notification.identity.startswith(MORE_ID):
            holder.add_class("-more")
        before = next((c for c in rack.children if c.id in ids[index + 1 :]), None)
        await rack.mount(holder, before=before) if before is not None else await rack.mount(holder)


def _out_of_order(rack: ToastRack, ids: Sequence[str]) -> bool:
    """Whether the toasts the rack keeps are not in the wanted order (then all are mounted again)."""
    kept = [child.id for child in rack.children if child.id in ids]
    return kept != [i for i in ids if i in kept]
