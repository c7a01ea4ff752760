"""Record a story into an asciinema cast: the real app in a real terminal (tmux), no manual step.

python -m tests.ui.record [OUT.cast] [--story seed] [--pace 0.8] [--speed 5]      (make record)

tmux gives the recording a terminal of exactly 120x36 (its own server socket, so that no tmux of the
user's is touched); in it `asciinema rec` runs `gdnconsole demo --scenario STORY --exit-at-end` with an
empty hosts file and the simulated hosts in a temporary folder.

Textual writes a lot to draw a frame (a colour sequence and a reset around every cell, the whole widget
again for each repaint): a minute of the dashboard is megabytes. So the recording is then played through a
small terminal model (the sequences Textual uses: cursor position, SGR, the alternate screen) and written
again as what changed on the screen every FRAME_S seconds, a colour sequence only where the style changes:
the same screens at the same times, a hundredth of the bytes. It ends on the app's last frame (the lines
printed after the app left the alternate screen are not part of the demo). The cast is then checked:
asciicast v2, a JSON header of that size, then one `[time, "o", data]` event per line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.cells import get_character_cell_size

COLS, ROWS = 120, 36
IDLE_LIMIT_S = 1.5  # a longer gap without output plays as this long
FRAME_S = 0.25  # the compacted cast shows the screen as it is at most this often
GAP = 8  # unchanged cells between two changes of a row are written again rather than a cursor move
TIMEOUT_S = 600.0
SOCKET = "gdnconsole-record"  # tmux -L: a server of our own


def gdnconsole_command() -> list[str]:
    script = Path(sys.executable).with_name("gdnconsole")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gdnconsole"]


def tmux(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-L", SOCKET, *args], check=check, capture_output=True, text=True)


def record(out: Path, story: str, pace: float, speed: float) -> None:
    for tool in ("tmux", "asciinema"):
        if shutil.which(tool) is None:
            sys.exit(f"record: {tool} is not installed (apt-get install {tool})")
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gdnconsole-record-") as tmp:
        work = Path(tmp)
        status = work / "status"
        demo = [*gdnconsole_command(), "demo", "--scenario", story, "--exit-at-end"]
        demo += ["--pace", f"{pace:g}", "--speed", f"{speed:g}"]
        env = {
            "GDNCONSOLE_CONFIG": str(
                work / "hosts.toml"
            ),  # none there: the built-in demo host, the default theme
            "GDNCONSOLE_JOURNAL_DIR": str(work / "journal"),
            "GDNCONSOLE_PROMPTS_DIR": str(work / "prompts"),
            "COLORTERM": "truecolor",
            "TERM": "xterm-256color",
            **{k: v for k, v in os.environ.items() if k.startswith("TEXTUAL_")},
        }
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        # What asciinema runs (sh -c): the story (Textual draws on stderr), then its exit status where this
        # driver can read it.
        inner = f"env {exports} {shlex.join(demo)}; echo $? > {shlex.quote(str(status))}"
        rec = ["asciinema", "rec", "--overwrite", "--quiet", "--cols", str(COLS), "--rows", str(ROWS)]
        raw = work / "raw.cast"
        rec += ["-i", f"{IDLE_LIMIT_S:g}", "-t", f"gdnconsole demo --scenario {story}", "-c", inner, str(raw)]
        session = f"record-{os.getpid()}"
        tmux("new-session", "-d", "-s", session, "-x", str(COLS), "-y", str(ROWS), shlex.join(rec))
        started = time.monotonic()
        print(f"recording {story} into {out} (tmux -L {SOCKET} attach -t {session} to watch)")
        try:
            while tmux("has-session", "-t", session, check=False).returncode == 0:
                if time.monotonic() - started > TIMEOUT_S:
                    sys.exit(f"record: the story did not end within {TIMEOUT_S:.0f} s")
                time.sleep(0.5)
        finally:
            tmux("kill-session", "-t", session, check=False)  # ours, if still there after a timeout
        code = status.read_text().strip() if status.exists() else "?"
        if code != "0":
            failed = out.with_suffix(".failed.cast")
            shutil.copy(raw, failed)
            sys.exit(f"record: the story ended with status {code} (its last words are in {failed})")
        raw_size = raw.stat().st_size
        compact(raw, out)
    print(f"recorded {raw_size / 1024:.0f} KiB, compacted to {out.stat().st_size / 1024:.0f} KiB")
    summary = check_cast(out)
    print(
        f"wrote {out}: {summary['size'] / 1024:.0f} KiB, {summary['events']} events, "
        f"{summary['duration']:.1f} s, {summary['width']}x{summary['height']}"
    )


# -- compaction: the screens, written again with only what changed ------------------------------------------

Style = tuple[str | None, str | None, frozenset[str]]  # foreground, background, other SGR attributes
Cell = tuple[str, Style]  # the text of a cell ("" behind a wide character) and its style
PLAIN: Style = (None, None, frozenset())
BLANK: Cell = (" ", PLAIN)
SEQUENCE = re.compile(
    r"\x1b(?:\[([0-?]*)([ -/]*)([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_]|.)|[\x00-\x1f]"
)
# A sequence cut by the end of an event: kept until the next event completes it.
PARTIAL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?)?\Z")
OFF = {
    "22": ("1", "2"),
    "23": ("3",),
    "24": ("4", "21"),
    "25": ("5",),
    "27": ("7",),
    "28": ("8",),
    "29": ("9",),
}


def sgr(style: Style, params: str) -> Style:
    """``style`` after ``ESC [ params m``."""
    fg, bg, flags = style
    on = set(flags)
    codes = params.split(";") if params else ["0"]
    i = 0
    while i < len(codes):
        code = codes[i] or "0"
        if code in ("38", "48"):  # 38;5;N or 38;2;R;G;B
            size = 3 if codes[i + 1 : i + 2] == ["5"] else 5
            color = ";".join(codes[i : i + size])
            fg, bg = (color, bg) if code == "38" else (fg, color)
            i += size
            continue
        number = int(code) if code.isdigit() else -1
        if number == 0:
            fg, bg, on = None, None, set()
        elif 30 <= number <= 37 or 90 <= number <= 97:
            fg = code
        elif 40 <= number <= 47 or 100 <= number <= 107:
            bg = code
        elif number == 39:
            fg = None
        elif number == 49:
            bg = None
        elif code in OFF:
            on.difference_update(OFF[code])
        else:
            on.add(code)
        i += 1
    return fg, bg, frozenset(on)


def sgr_text(style: Style, current: Style) -> str:
    """The shortest SGR sequence (of two kinds) from ``current`` to ``style``."""
    fg, bg, flags = style
    if flags != current[2] and not flags >= current[2]:  # an attribute goes: start from a reset
        return "\x1b[" + ";".join(["0", *sorted(flags), *(c for c in (fg, bg) if c)]) + "m"
    codes = sorted(flags - current[2])
    if fg != current[0]:
        codes.append(fg or "39")
    if bg != current[1]:
        codes.append(bg or "49")
    return "\x1b[" + ";".join(codes) + "m"


class Screen:
    """The cells of a terminal as Textual draws on it (it writes every cell, with autowrap off)."""

    def __init__(self, cols: int, rows: int) -> None:
        self.cols, self.rows = cols, rows
        self.cells = [[BLANK] * cols for _ in range(rows)]
        self.row = self.col = 0
        self.style = PLAIN
        self.left_alternate = False  # the app has ended: what follows is not the demo
        self.pending = ""  # the start of a sequence the next event completes

    def feed(self, data: str) -> None:
        data, self.pending = self.pending + data, ""
        cut = PARTIAL.search(data)
        if cut is not None:
            data, self.pending = data[: cut.start()], data[cut.start() :]
        pos = 0
        for match in SEQUENCE.finditer(data):
            self._text(data[pos : match.start()])
            pos = match.end()
            self._control(match)
            if self.left_alternate:
                return
        self._text(data[pos:])

    def _control(self, match: re.Match[str]) -> None:
        token = match.group(0)
        if token == "\r":
            self.col = 0
        elif token == "\n":
            self.row = min(self.row + 1, self.rows - 1)
        elif match.group(3) is not None and not match.group(2):
            params, final = match.group(1), match.group(3)
            if final == "m" and not params.startswith(("?", ">", "<", "=")):
                self.style = sgr(self.style, params)
            elif final == "H":
                row, _, col = params.partition(";")
                self.row = min(max(int(row or 1), 1), self.rows) - 1
                self.col = min(max(int(col or 1), 1), self.cols) - 1
            elif params == "?1049" and final == "h":
                self.cells = [[BLANK] * self.cols for _ in range(self.rows)]
            elif params == "?1049" and final == "l":
                self.left_alternate = True

    def _text(self, text: str) -> None:
        for char in text:
            width = get_character_cell_size(char)
            row = self.cells[self.row]
            if width == 0:  # a combining mark, a joiner: part of the cell before
                at = max(self.col - 1, 0)
                row[at] = (row[at][0] + char, row[at][1])
                continue
            col = min(self.col, self.cols - width)
            row[col] = (char, self.style)
            if width == 2:
                row[col + 1] = ("", self.style)
            self.col = col + width


def frame_diff(old: list[list[Cell]], new: list[list[Cell]], style: Style) -> tuple[str, Style]:
    """What turns ``old`` into ``new`` on a terminal whose current SGR state is ``style``."""
    out: list[str] = []
    for r, (before, after) in enumerate(zip(old, new, strict=True)):
        changed = [c for c in range(len(after)) if after[c] != before[c]]
        spans: list[list[int]] = []
        for c in changed:
            if spans and c - spans[-1][1] <= GAP:
                spans[-1][1] = c
            else:
                spans.append([c, c])
        for start, end in spans:
            if after[start][0] == "" and start > 0:
                start -= 1  # the wide character this cell belongs to
            if end + 1 < len(after) and after[end + 1][0] == "":
                end += 1
            out.append(f"\x1b[{r + 1};{start + 1}H")
            for text, cell_style in after[start : end + 1]:
                if not text:
                    continue
                if cell_style != style:
                    out.append(sgr_text(cell_style, style))
                    style = cell_style
                out.append(text)
    return "".join(out), style


def compact(raw: Path, out: Path, frame_s: float = FRAME_S) -> None:
    """Write ``raw`` (a cast of a Textual app) again as the screen's changes, at most one per ``frame_s``."""
    lines = raw.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    screen = Screen(int(header["width"]), int(header["height"]))
    shown = [[BLANK] * screen.cols for _ in range(screen.rows)]
    style = PLAIN
    events: list[tuple[float, str]] = [(0.0, "\x1b[?25l\x1b[?7l\x1b[0m\x1b[2J")]
    window: int | None = None
    last = 0.0

    def flush(at: float) -> None:
        nonlocal shown, style
        data, style = frame_diff(shown, screen.cells, style)
        shown = [list(row) for row in screen.cells]
        if data:
            events.append((round(at, 6), data))

    for line in lines[1:]:
        at, kind, data = json.loads(line)
        if kind != "o":
            continue
        if window is not None and int(at // frame_s) != window:
            flush(last)
        window, last = int(at // frame_s), float(at)
        screen.feed(data)
        if screen.left_alternate:
            break
    flush(last)
    with out.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(header) + "\n")
        for at, data in events:
            fh.write(json.dumps([at, "o", data]) + "\n")


def check_cast(path: Path) -> dict[str, Any]:
    """Check an asciicast v2 file of COLSxROWS; its size, event count and duration."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    if header.get("version") != 2 or (header.get("width"), header.get("height")) != (COLS, ROWS):
        raise SystemExit(f"record: {path} has an unexpected header: {header}")
    last = 0.0
    for number, line in enumerate(lines[1:], 2):
        event = json.loads(line)
        ok = isinstance(event, list) and len(event) == 3 and isinstance(event[0], int | float)
        if not ok or event[1] not in ("o", "i", "m", "r") or not isinstance(event[2], str) or event[0] < last:
            raise SystemExit(f"record: {path}:{number} is not an event: {line[:120]}")
        last = float(event[0])
    return {
        "size": path.stat().st_size,
        "events": len(lines) - 1,
        "duration": last,
        "width": header["width"],
        "height": header["height"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.ui.record", description=__doc__.split("\n")[0])
    parser.add_argument("out", nargs="?", default="screenshots/demo-seed.cast", type=Path)
    parser.add_argument("--story", default="seed")
    parser.add_argument("--pace", type=float, default=0.8, help="the story's pauses, scaled")
    parser.add_argument("--speed", type=float, default=5.0, help="the simulated servers' timeline speed")
    args = parser.parse_args()
    record(args.out, args.story, args.pace, args.speed)


if __name__ == "__main__":
    main()
