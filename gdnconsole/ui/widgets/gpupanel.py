"""The GPU panel: per GPU a bar of its memory (weights / KV cache / mamba state / CUDA graphs / other,
memory held by other processes, free), its rank and utilisation, and a warning for every process that
holds memory but is not the server."""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from gdnconsole.sglang.stages import Severity, Stage
from gdnconsole.ui.models.gpurows import SERVER_PARTS, GpuRow, Holder, allocate_cells
from gdnconsole.ui.models.textfit import hanging
from gdnconsole.ui.theme import LogPalette

LABELS = {"weights": "weights", "kv": "KV", "mamba": "mamba", "graphs": "graphs", "other": "other"}
HELD = "held"  # memory of processes that are not the server
FREE = "free"
NARROW = 100  # below this width the GPU name is shortened to fit the bar


def part_styles(palette: LogPalette) -> dict[str, Style]:
    """Each part takes the colour of the stage that allocates it, so the bar reads like the timeline."""
    return {
        "weights": palette.stages[Stage.LOADING],
        "kv": palette.stages[Stage.LOADED],
        "mamba": palette.stages[Stage.MEMORY],
        "graphs": palette.stages[Stage.GRAPHS],
        "other": palette.stages[Stage.STARTING],
        HELD: palette.severities[Severity.ERROR],
        FREE: palette.dim,
    }


SAID_MIB = 52  # the least memory gib() says as more than 0.0: less gets no cell of its own in a bar


def gib(mib: int | None) -> str:
    return "?" if mib is None else f"{mib / 1024:.1f}"


def bar(row: GpuRow, width: int, styles: dict[str, Style]) -> Text:
    """The memory bar, ``width`` cells: the server's parts, memory held by others (hatched), free."""
    names = [*SERVER_PARTS, HELD, FREE]
    values = [*(row.parts.get(p, 0) for p in SERVER_PARTS), row.held_by_others, row.free or 0]
    out = Text()
    for name, cells in zip(names, allocate_cells(values, width, least=SAID_MIB), strict=True):
        char = {HELD: "▓", FREE: "░"}.get(name, "█")
        out.append(char * cells, styles[name])
    return out


def _head(row: GpuRow, name_width: int) -> Text:
    out = Text()
    out.append(f"{row.index:>2} ", Style(bold=True))
    out.append(f"{row.name[:name_width]:<{name_width}} ")
    if row.rank:
        out.append(f"{row.rank:<5}", Style(bold=True))
    else:
        out.append(f"{'–':<5}", Style(dim=True))
    return out


def _tail(row: GpuRow) -> Text:
    util = "  –%" if row.util is None else f"{row.util:>3}%"
    return Text(f" {gib(row.used):>5}/{gib(row.total)} GiB {util}")


def _legend(row: GpuRow, styles: dict[str, Style], indent: int, width: int | None = None) -> Text:
    """``■ weights 26.0  ■ KV 2.7 … □ free 16.0``; tighter (one space apart) when ``width`` is short."""
    wide = _legend_line(row, styles, indent, "  ")
    if width is None or wide.cell_len <= width:
        return wide
    return _legend_line(row, styles, max(1, indent - 2), " ")


def _legend_line(row: GpuRow, styles: dict[str, Style], indent: int, gap: str) -> Text:
    out = Text(" " * indent)
    items: list[tuple[str, int, str]] = [(p, row.parts[p], LABELS[p]) for p in SERVER_PARTS if p in row.parts]
    if row.held_by_others:
        items.append((HELD, row.held_by_others, "not the server"))
    if row.free is not None:
        items.append((FREE, row.free, FREE))
    for i, (part, mib, label) in enumerate(items):
        if i:
            out.append(gap)
        out.append("■ " if part != FREE else "□ ", styles[part])
        out.append(f"{label} {gib(mib)}")
    return out


def _holder_line(holder: Holder, style: Style, indent: int, *, hint: bool) -> Text:
    """A process that holds memory but is not the server; ``hint`` adds why it matters (wide screens)."""
    out = Text(" " * indent)
    if hint:
        what = f"{holder.orphan} (its server is gone)" if holder.orphan else holder.name
        out.append(f"⚠ pid {holder.pid} {what} holds {gib(holder.mib)} GiB and is not the server", style)
        out.append(": a leftover? a launch may run out of memory", Style(dim=True))
    else:
        what = f"{holder.orphan} (orphan)" if holder.orphan else holder.name
        out.append(f"⚠ pid {holder.pid} {what}: {gib(holder.mib)} GiB, not the server", style)
    return out


def render_gpus(rows: Sequence[GpuRow], width: int, palette: LogPalette) -> Text:
    """Two lines per GPU (bar, then its legend) and one per process that is not the server."""
    styles = part_styles(palette)
    warning = palette.severities[Severity.ERROR] + Style(bold=True)
    name_width = max((len(r.name) for r in rows), default=4)
    if width < NARROW:
        name_width = min(name_width, 9)
    lines: list[Text] = []
    for row in rows:
        head, tail = _head(row, name_width), _tail(row)
        bar_width = max(8, width - head.cell_len - tail.cell_len)
        lines.append(Text.assemble(head, bar(row, bar_width, styles), tail))
        lines.append(_legend(row, styles, indent=3, width=width))
        for holder in row.holders:
            lines.extend(hanging(_holder_line(holder, warning, indent=3, hint=width >= NARROW), width, 5))
    return Text("\n").join(lines)


class GpuPanel(Widget):
    """Renders the rows it was given at its current width, or a one-line message instead."""

    DEFAULT_CSS = """
    GpuPanel {
        height: auto;
        max-height: 50%;
        border: round $panel;
        border-title-color: $foreground;
        padding: 0 1;
        overflow-y: auto;
    }
    """

    def __init__(self, palette: LogPalette, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.palette = palette
        self.rows: list[GpuRow] = []
        self.message: Text | None = Text("waiting for the host…", palette.dim)

    def show(self, rows: list[GpuRow], message: Text | None = None) -> None:
        """The GPUs, under a message when there is one (why there is no data, or why the link is down)."""
        if rows == self.rows and message == self.message:
            return
        self.rows, self.message = rows, message
        self.refresh(layout=True)

    def _text(self, width: int) -> Text:
        parts = [] if self.message is None else [self.message]
        if self.rows:
            parts.append(render_gpus(self.rows, width, self.palette))
        return Text("\n").join(parts)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # At the width being laid out, not self.size's: after a resize that is still the old one, and the
        # panel kept the height of lines drawn for another width (blank rows under the GPUs).
        return len(self._text(width).wrap(self.app.console, max(width, 1)))

    def render(self) -> Text:
        return self._text(self.size.width)
