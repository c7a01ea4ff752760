"""The log widget: a cursor over the rows of a log, rendering only the visible lines (Textual's Line API).

The widget reads no file. It knows how many lines the log has, which rows show which lines (filter,
folds), and keeps a bounded cache of lines it was given; when a visible line is missing it posts
``LinesWanted`` and renders a placeholder until ``add_lines`` brings it. Text is cropped to the visible
columns before any styling, so an 11 KB ``server_args=`` line or a 1 MB line costs as much as a short one.
"""

from __future__ import annotations

import time
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import ClassVar

from rich.segment import Segment
from textual import events
from textual.binding import BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gdnconsole.logs.document import Fold, LineInfo
from gdnconsole.ui import clipboard, screenlist
from gdnconsole.ui.models import wrap
from gdnconsole.ui.models.rows import Marker, RowMap
from gdnconsole.ui.theme import LogPalette

CACHE_CHARS = 4 << 20  # characters of line text kept in the cache
H_STEP = 8  # columns per left/right key
WRAP_CACHE_LINES = 2000  # wrapped lines whose pieces are kept (a few screens' worth)


def render_row(
    info: LineInfo,
    palette: LogPalette,
    *,
    width: int,
    x: int = 0,
    tag_width: int = 0,
    marker: Marker | None = None,
    text: str | None = None,
    continued: bool = False,
) -> Strip:
    """One row: fold marker, rank tag, then the line's text from column ``x``, ``width`` cells wide.
    ``text``: what to show instead of the line's body (a wrapped piece, a short timestamp);
    ``continued``: a wrapped line's later piece, under the text of its first (no marker, no tag)."""
    segments: list[Segment] = []
    if continued:
        segments.append(Segment(" " * (2 + (tag_width + 1 if tag_width else 0))))
    elif marker is None:
        segments.append(Segment("  "))
    else:
        segments.append(Segment("▸ " if marker.folded else "▾ ", palette.fold))
    if tag_width and not continued:
        tag = (info.rank or "").ljust(tag_width)
        segments.append(Segment(tag, palette.rank_style(info.rank) if info.rank else None))
        segments.append(Segment(" "))
    if marker is not None and marker.folded and not continued:
        segments.append(Segment(f"{marker.fold.size} lines ▸ ", palette.fold))
    # Crop by characters first (cheap), then by cells: wide characters may take two cells each.
    body = info.body if text is None else text
    segments.append(Segment(body[x : x + width], palette.line_style(info.stage, info.severity)))
    return Strip(segments).crop(0, width)


class LinesCache:
    """The lines the view was given, most recently used last, bounded by total characters."""

    def __init__(self, budget: int = CACHE_CHARS) -> None:
        self._lines: OrderedDict[int, LineInfo] = OrderedDict()
        self._chars = 0
        self.budget = budget

    def get(self, number: int) -> LineInfo | None:
        info = self._lines.get(number)
        if info is not None:
            self._lines.move_to_end(number)
        return info

    def put(self, info: LineInfo) -> None:
        old = self._lines.pop(info.number, None)
        if old is not None:
            self._chars -= len(old.raw) + len(old.body)
        self._lines[info.number] = info
        self._chars += len(info.raw) + len(info.body)
        while self._chars > self.budget and len(self._lines) > 1:
            _, dropped = self._lines.popitem(last=False)
            self._chars -= len(dropped.raw) + len(dropped.body)

    def drop(self, number: int) -> None:
        old = self._lines.pop(number, None)
        if old is not None:
            self._chars -= len(old.raw) + len(old.body)

    def clear(self) -> None:
        self._lines.clear()
        self._chars = 0


class LogView(ScrollView, can_focus=True):
    """A scrollable, filterable, foldable view of a log's lines, with a cursor line."""

    DEFAULT_CSS = """
    LogView {
        background: $background;
        color: $foreground;
        scrollbar-size-vertical: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = list(screenlist.LOG_LINES_KEYS)

    class LinesWanted(Message):
        """Lines to show that the view does not have: someone should read them and call ``add_lines``."""

        def __init__(self, lines: tuple[int, ...]) -> None:
            super().__init__()
            self.lines = lines

    class StateChanged(Message):
        """The cursor, following or the count of unseen new lines changed."""

    def __init__(self, palette: LogPalette, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.palette = palette
        self.cache = LinesCache()
        self._stale: LinesCache | None = None  # lines shown while they are read again (forget_meanings)
        self.rows = RowMap(0)
        self.total = 0
        self.cursor = 0  # a row
        self.tail = False  # stick to the last line as lines arrive
        self.new_lines = 0  # lines that arrived while not sticking to the tail
        self.preview = False  # the lines are a tail read before the index exists
        self.matches: array[int] | None = None
        self.folds: list[Fold] = []
        self.expanded: set[int] = set()
        self.tag_width = 0
        self._widest = 0
        self._pending: set[int] = set()
        self._wanted: set[int] = set()
        self.first_paint: float | None = None  # when a real line was first rendered (perf_counter)
        self.wrap = False  # long lines go on in the rows below (models/wrap.py)
        self.short_time = False  # leading dates and times cut to HH:MM:SS
        self._pieces: dict[int, tuple[LineInfo, list[str]]] = {}  # line -> its wrapped pieces
        self._pieces_width = 0
        self._epoch = 0  # counts changes of the lines held, for the wrapped layout's cache
        self._layout_key: tuple[int, ...] = ()
        self._layout: list[tuple[int, int]] = []

    # -- data in ---------------------------------------------------------------------------------------

    def add_lines(self, infos: Iterable[LineInfo]) -> None:
        for info in infos:
            self.cache.put(info)
            self._pending.discard(info.number)
            if info.rank and len(info.rank) > self.tag_width:
                self.tag_width = len(info.rank)
            self._widest = max(self._widest, len(info.body))
        self._epoch += 1
        if not self._pending and not self._wanted:
            self._stale = None  # everything asked for is read again
        self._resize()
        self.refresh()

    def forget_meanings(self) -> None:
        """The tracker has read more of the file: lines read before it had must be read again, since their
        stage (and so their colour) may now be known from context. Until they are, the screen shows them
        as they were (clearing them drew "…" on every row for a frame, at each poll of a growing log)."""
        self._stale, self.cache = self.cache, LinesCache()
        self._pending.clear()
        self.refresh()

    def show_preview(self, infos: Sequence[LineInfo]) -> None:
        """Show lines read from the end of the file before their numbers are known."""
        self.preview = True
        self.cache.clear()
        self._stale = None
        self.total = len(infos)
        self.add_lines(infos)
        self._rebuild(keep_line=None)
        self.go_last()

    def reset(self, total: int) -> None:
        """The file restarted, or the index replaced a preview: forget the lines and where they were."""
        self.preview = False
        self.cache.clear()
        self._stale = None
        self._pending.clear()
        self.folds = []
        self.expanded.clear()
        self.matches = None if self.matches is None else array("I")
        self.total = total
        self.new_lines = 0
        self._rebuild(keep_line=None)
        if self.tail:
            self.go_last()
        else:
            self.cursor = min(self.cursor, max(0, self.rows.count - 1))
        self.refresh()

    def grow(self, total: int, new_matches: Iterable[int] = (), *, whole: bool = False) -> None:
        """The file has ``total`` lines now; ``new_matches`` are the new lines the filter keeps; ``whole``:
        the file holds whole lines only (a session's mirror), so the old last line stays as it was."""
        if self.total and total >= self.total and not whole:
            self.cache.drop(self.total - 1)  # the old last line may have been incomplete
            if self._stale is not None:
                self._stale.drop(self.total - 1)
        added = max(0, total - self.total)
        self.total = total
        if self.matches is not None:
            last = self.matches[-1] if self.matches else -1
            self.matches.extend(n for n in new_matches if n > last)
        self._rebuild(keep_line=self._cursor_line())
        if self.tail:
            self.go_last()
        elif added:
            self.new_lines += added
            self.post_message(self.StateChanged())
        self.refresh()

    def set_matches(self, matches: array[int] | None) -> None:
        self.matches = matches
        self._rebuild(keep_line=self._cursor_line())
        self._follow_cursor()
        self.refresh()

    def set_folds(self, folds: list[Fold]) -> None:
        self.folds = folds
        self._rebuild(keep_line=self._cursor_line())
        if self.tail:
            self.go_last()
        self._follow_cursor()
        self.refresh()

    def _rebuild(self, keep_line: int | None) -> None:
        self.rows = RowMap(self.total, self.matches, self.folds, frozenset(self.expanded))
        if keep_line is not None:
            self.cursor = self.rows.nearest_row(keep_line)
        self.cursor = max(0, min(self.cursor, self.rows.count - 1))
        self._resize()

    def _resize(self) -> None:
        self._epoch += 1
        wide = 0 if self.wrap else self._widest + self.tag_width + 16  # wrapped: no horizontal scroll
        self.virtual_size = Size(wide, self.rows.count)

    # -- data out ----------------------------------------------------------------------------------------

    def _cursor_line(self) -> int | None:
        return self.rows.line(self.cursor) if self.rows.count and not self.preview else None

    @property
    def cursor_line(self) -> int | None:
        """The file line under the cursor (None when empty or showing a preview)."""
        return self._cursor_line()

    @property
    def current(self) -> LineInfo | None:
        if not self.rows.count:
            return None
        return self.cache.get(self.rows.line(self.cursor))

    def visible_lines(self) -> list[int]:
        top = self.scroll_offset.y
        bottom = min(self.rows.count, top + self.size.height)
        return [self.rows.line(r) for r in range(top, bottom)]

    # -- rendering -----------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        shown = self._screen_rows()
        if y >= len(shown):
            return Strip.blank(width, self.rich_style)
        row, piece = shown[y]
        info = self._info(row)
        if info is None:
            return self._placeholder(width)
        parts = self._pieces_of(info)
        strip = render_row(
            info,
            self.palette,
            width=width,
            x=0 if self.wrap else self.scroll_offset.x,
            tag_width=self.tag_width,
            marker=self.rows.marker(info.number),
            text=parts[min(piece, len(parts) - 1)],
            continued=piece > 0,
        ).extend_cell_length(width)
        return self._styled(strip, row)

    def _info(self, row: int) -> LineInfo | None:
        """The line of ``row`` when the view has it (else asked for, and shown as before if it was)."""
        line = self.rows.line(row)
        info = self.cache.get(line)
        if info is None:
            self._want(row)
            info = None if self._stale is None else self._stale.get(line)
        if info is not None and self.first_paint is None:
            self.first_paint = time.perf_counter()
        return info

    def _placeholder(self, width: int) -> Strip:
        return (
            Strip([Segment("  …", self.palette.dim)]).extend_cell_length(width).apply_style(self.rich_style)
        )

    def _styled(self, strip: Strip, row: int) -> Strip:
        if row == self.cursor:
            strip = strip.apply_style(self.palette.cursor)
        return strip.apply_style(self.rich_style)

    def text_of(self, info: LineInfo) -> str:
        """The line's text as shown: its body, with a short timestamp when asked."""
        return wrap.short_time(info.body) if self.short_time else info.body

    # -- pieces of rows: wrapped text, glued log lines -------------------------------------------------

    def _screen_rows(self) -> list[tuple[int, int]]:
        """Which piece of which row each screen row shows (a row is a line: several pieces when it is
        wrapped or holds glued log lines), worked out once per change of what is shown."""
        height = self.scrollable_content_region.height or self.size.height
        key = (self.scroll_offset.y, self.size.width, height, self.rows.count, self.cursor, self._epoch)
        if key != self._layout_key:
            self._layout_key = key
            self._layout = wrap.layout(
                self.scroll_offset.y, self.rows.count, height, self.cursor, self._height
            )
        return self._layout

    def _height(self, row: int) -> int:
        info = self.cache.get(self.rows.line(row))
        return 1 if info is None else len(self._pieces_of(info))

    def _pieces_of(self, info: LineInfo) -> list[str]:
        """What a line shows, one piece per screen row: the log lines glued to a bar's state each on its
        own (a tqdm bar without a newline hid the next line past the right edge), each wrapped when asked.
        A folded summary keeps one row, as its marker says."""
        width = self.scrollable_content_region.width or self.size.width  # not under the scrollbar
        room = width - 2 - (self.tag_width + 1 if self.tag_width else 0)
        if room != self._pieces_width:
            self._pieces.clear()
            self._pieces_width = room
        held = self._pieces.get(info.number)
        if held is not None and held[0] is info:
            return held[1]
        marker = self.rows.marker(info.number)
        text = self.text_of(info)
        if marker is not None and marker.folded:
            parts = [text]
        else:
            parts = wrap.glued(text) if "\r" in info.raw else [text]
            if self.wrap:
                parts = [piece for part in parts for piece in wrap.pieces(part, room)]
        if len(self._pieces) > WRAP_CACHE_LINES:
            self._pieces.clear()
        self._pieces[info.number] = (info, parts)
        return parts

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap
        self._pieces.clear()
        self.scroll_to(x=0, animate=False, immediate=True)
        self._changed()

    def action_toggle_short_time(self) -> None:
        self.short_time = not self.short_time
        self._pieces.clear()
        self._changed()

    def _changed(self) -> None:
        self._resize()
        self._follow_cursor()
        self.refresh()
        self.post_message(self.StateChanged())

    def _want(self, row: int) -> None:
        """Ask for the missing lines of the screen around ``row`` (once), after this render pass."""
        if self.preview:
            return
        if not self._wanted:
            self.call_later(self._post_wanted)
        height = max(1, self.size.height)
        top = max(0, self.scroll_offset.y - height)
        for r in range(top, min(self.rows.count, self.scroll_offset.y + 2 * height)):
            line = self.rows.line(r)
            if line not in self._pending and self.cache.get(line) is None:
                self._wanted.add(line)

    @property
    def reading(self) -> bool:
        """Lines the screen asked for are not in yet (a worker reads them)."""
        return bool(self._wanted or self._pending)

    def _post_wanted(self) -> None:
        lines = tuple(sorted(self._wanted))
        self._wanted.clear()
        self._pending.update(lines)
        if lines:
            self.post_message(self.LinesWanted(lines))

    def on_resize(self, event: events.Resize) -> None:
        if self.tail and self.rows.count:
            self._follow_cursor()  # opened before its first layout (a hidden tab): the tail is still the end

    def watch_show_horizontal_scrollbar(self, shown: bool) -> None:
        # The scrollbar takes the bottom row (the first long line read brings it): a tail that was on
        # that row would be hidden under it.
        if self.tail and self.rows.count:
            self.call_after_refresh(self._follow_cursor)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.refresh()

    # -- cursor ----------------------------------------------------------------------------------------

    def move_cursor(self, row: int, *, tail: bool = False) -> None:
        self.cursor = max(0, min(row, self.rows.count - 1))
        if tail != self.tail or (tail and self.new_lines):
            self.tail = tail
            self.new_lines = 0 if tail else self.new_lines
        self._follow_cursor()
        self.refresh()
        self.post_message(self.StateChanged())

    @property
    def allow_vertical_scroll(self) -> bool:
        # Textual's answer follows the scrollbar, which shows only at the layout after the lines grew: a
        # log that fitted on the screen and grew past it at once would not scroll to its new tail.
        return not self._check_disabled() and self.max_scroll_y > 0

    def _follow_cursor(self) -> None:
        """Scroll just enough to show the cursor."""
        height = self.scrollable_content_region.height or self.size.height
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif height and self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def go_last(self) -> None:
        """Cursor on the last row, sticking to the tail."""
        self.move_cursor(self.rows.count - 1, tail=True)

    def go_to_line(self, line: int) -> bool:
        """Put the cursor on ``line``, unfolding the block that hides it; False when a filter hides it."""
        fold = self.rows.fold_around(line)
        if fold is not None and fold.first not in self.expanded and self.rows.row(line) is None:
            self.expanded.add(fold.first)
            self._rebuild(keep_line=None)
        row = self.rows.row(line)
        self.move_cursor(self.rows.nearest_row(line) if row is None else row)
        self._center_cursor()
        return row is not None

    def _center_cursor(self) -> None:
        """After a jump: the target in the middle of the screen, with what follows it."""
        height = self.scrollable_content_region.height or self.size.height
        self.scroll_to(y=max(0, self.cursor - height // 3), animate=False, immediate=True)

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor + 1, tail=self.tail and self.cursor + 1 >= self.rows.count - 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor - max(1, self.size.height - 1))

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor + max(1, self.size.height - 1), tail=self.tail)

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.go_last()

    def action_left(self) -> None:
        self.scroll_to(x=max(0, self.scroll_offset.x - H_STEP), animate=False, immediate=True)
        self.refresh()

    def action_right(self) -> None:
        self.scroll_to(x=self.scroll_offset.x + H_STEP, animate=False, immediate=True)
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        self.move_cursor(self.scroll_offset.y + event.y, tail=False)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        super()._on_mouse_scroll_up(event)
        if self.tail:
            self.tail = False
            self.post_message(self.StateChanged())

    # -- folds and copy --------------------------------------------------------------------------------

    def action_toggle_fold(self) -> None:
        line = self._cursor_line()
        if line is None:
            return
        fold = self.rows.fold_around(line)
        if fold is None or fold.size < 2:
            return
        if fold.first in self.expanded:
            self.expanded.discard(fold.first)
            self._rebuild(keep_line=fold.summary)
        else:
            self.expanded.add(fold.first)
            self._rebuild(keep_line=fold.first)
            self._show_block(fold)
        self._follow_cursor()
        self.refresh()
        self.post_message(self.StateChanged())

    def _show_block(self, fold: Fold) -> None:
        """Scroll so that an unfolded block is on screen, as much of it as fits, cursor included."""
        last = self.rows.row(fold.last)
        height = self.scrollable_content_region.height or self.size.height
        if last is not None and last >= self.scroll_offset.y + height:
            self.scroll_to(y=min(self.cursor, last - height + 1), animate=False, immediate=True)

    def action_copy_line(self) -> None:
        info = self.current
        if info is None:
            if self.rows.count:
                self.notify("the line is still being read: try again", timeout=2)
            return
        self.notify(clipboard.send(self.app, info.raw, "the line"), timeout=3)
