"""The real `gdnconsole HOST` in a real terminal: tmux, at 80x24 and 160x48, on a simulated host whose
server was launched and verified first (`gdnconsole launch HOST --wait verified`).

What the terminal shows is read with `tmux capture-pane` (`-e` for the colours) and checked for what
snapshots of Textual's own renderer cannot see: lines that do not fit the real width, boxes cut in half,
panels drawn over each other, the layout after the terminal is resized, colour codes for a 256-colour
and a truecolor terminal, and characters that common terminal fonts lack. Every wait polls the screen
with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import needs

needs.require("tmux", module_level=True)

GDNCONSOLE = [sys.executable, "-m", "gdnconsole"]
HOST = "simbox"
SOCKET = f"gdntest-{os.getpid()}"  # a tmux server of our own: never the user's
WAIT_S = 20.0
POLL_S = 0.05
NARROW = 100  # below this width the dashboard hides the stage timeline
SIZES = [(80, 24), (160, 48)]

# -- characters ------------------------------------------------------------------------------------------

# What a common terminal font (DejaVu Sans Mono, Menlo, Consolas, the Linux console's Terminus) draws: ASCII,
# box drawing, block elements, geometric shapes, arrows, and these few symbols. Emoji (double width, or
# colour glyphs), private-use characters (Nerd Font icons) and the rest are failures.
COMMON_RANGES = [
    (0x0020, 0x007E, "ASCII"),
    (0x2190, 0x21FF, "arrows"),
    (0x2500, 0x257F, "box drawing"),
    (0x2580, 0x259F, "block elements"),
    (0x25A0, 0x25FF, "geometric shapes"),
]
COMMON_SYMBOLS = {
    "·": "middle dot",
    "•": "bullet",
    "×": "multiplication sign",
    "…": "ellipsis",
    "≈": "almost equal",
    "✓": "check mark",
    "✔": "heavy check mark",
    "✖": "heavy multiplication x",
    "✗": "ballot x",
    "⚠": "warning sign",
    "⏎": "return symbol",
    "–": "en dash",
    "—": "em dash",
}
SEEN: dict[str, set[str]] = {}  # every non-ASCII character the captures showed -> where


def glyph_problem(char: str) -> str | None:
    """Why a terminal font may lack ``char``, or None when common fonts have it."""
    code = ord(char)
    if any(low <= code <= high for low, high, _ in COMMON_RANGES) or char in COMMON_SYMBOLS:
        return None
    if 0xE000 <= code <= 0xF8FF or code >= 0xF0000:
        return "private use (an icon font's glyph)"
    if code >= 0x1F000 or unicodedata.east_asian_width(char) in ("W", "F"):
        return "emoji or double width"
    if unicodedata.category(char) in ("Mn", "Me", "Cf", "Cc"):
        return "combining, format or control character"
    return "outside the whitelist"


def cells(line: str) -> int:
    """The width of ``line`` in terminal cells."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in line)


# -- tmux ----------------------------------------------------------------------------------------------------


# Not inherited by the panes: the terminal's size and colours are the pane's own. (os.environ, given
# explicitly: GNU readline, loaded in this process, exports LINES=24 COLUMNS=80 behind its back, and an
# app that inherits them draws 80x24 whatever the size of its terminal.)
UNSET = ("COLUMNS", "LINES", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TMUX", "TMUX_PANE")


def tmux(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    # -u: the client speaks UTF-8 whatever the locale says; -f /dev/null: not the user's tmux.conf.
    return subprocess.run(
        ["tmux", "-u", "-L", SOCKET, "-f", os.devnull, *args],
        env={k: v for k, v in os.environ.items() if k not in UNSET},
        capture_output=True,
        text=True,
        check=check,
        timeout=10,
    )


ESCAPE = re.compile(r"\x1b\[([0-9;:]*)m")


def styled(line: str) -> list[tuple[str, str | None]]:
    """Each character of a ``capture-pane -e`` line with its foreground colour (the SGR that set it)."""
    out: list[tuple[str, str | None]] = []
    fg: str | None = None
    pos = 0
    for match in ESCAPE.finditer(line + "\x1b[m"):
        out.extend((c, fg) for c in line[pos : match.start()])
        pos = match.end()
        params = [int(p) if p.isdigit() else 0 for p in re.split("[;:]", match.group(1) or "0")]
        i = 0
        while i < len(params):
            p = params[i]
            if p in (0, 39):
                fg = None
            elif 30 <= p <= 37 or 90 <= p <= 97:
                fg = str(p)
            elif p == 38 and i + 1 < len(params):
                width = 3 if params[i + 1] == 5 else 5
                fg = ";".join(map(str, params[i : i + width]))
                i += width - 1
            elif p == 48 and i + 1 < len(params):
                i += (3 if params[i + 1] == 5 else 5) - 1
            i += 1
    return out


BACKGROUND = re.compile(r"(?:^|;)(48;5;\d+|48;2;\d+;\d+;\d+|4[0-7]|10[0-7])(?=;|$)")


def backgrounds(line: str) -> set[str]:
    """The background colours a ``capture-pane -e`` line sets (as their SGR codes)."""
    return {m.group(1) for sgr in ESCAPE.finditer(line) for m in BACKGROUND.finditer(sgr.group(1))}


@dataclass
class Pane:
    """One tmux session running one command in a window of ``width`` x ``height``."""

    name: str
    width: int
    height: int
    shots: list[str] = field(default_factory=list)

    def capture(self, escapes: bool = False) -> str:
        return tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", self.name).stdout

    def lines(self) -> list[str]:
        text = self.capture()  # each row of the pane, blank ones too, and a newline after each
        self.shots.append(text)
        return text.removesuffix("\n").split("\n")

    def wait(self, what: str, check: Callable[[list[str]], object], timeout: float = WAIT_S) -> list[str]:
        """Poll the screen until ``check(lines)`` holds (a truthy value, or no AssertionError)."""
        deadline = time.monotonic() + timeout
        problem = ""
        while True:
            lines = self.lines()
            try:
                if check(lines) not in (False, None, 0, ""):
                    return lines
                problem = "not yet"
            except AssertionError as exc:
                problem = str(exc)
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: after {timeout:.0f} s, {problem}\n{self.describe(lines)}")
            time.sleep(POLL_S)

    def dead(self) -> bool:
        """The app has exited (the pane stays, with what it wrote: remain-on-exit)."""
        return (
            tmux("display-message", "-p", "-t", self.name, "#{pane_dead}", check=False).stdout.strip() == "1"
        )

    def history(self) -> str:
        """All the pane holds, the rows scrolled off its top included."""
        return tmux("capture-pane", "-p", "-S", "-", "-t", self.name, check=False).stdout

    def describe(self, lines: list[str]) -> str:
        """The screen, and when the app has exited, all it wrote (its traceback starts above the screen)."""
        size = tmux("display-message", "-p", "-t", self.name, "#{pane_width}x#{pane_height}", check=False)
        if self.dead():
            return f"--- the app exited; all it wrote ({size.stdout.strip()}) ---\n{self.history()}"
        return f"--- screen ({size.stdout.strip()}) ---\n" + "\n".join(lines)

    def keys(self, *keys: str) -> None:
        tmux("send-keys", "-t", self.name, *keys)

    def resize(self, width: int, height: int) -> None:
        tmux("resize-window", "-t", self.name, "-x", str(width), "-y", str(height))
        self.width, self.height = width, height


# -- the host, its server, the app -------------------------------------------------------------------------


@dataclass
class Served:
    env: dict[str, str]  # GDNCONSOLE_* for the app
    argv: list[str]  # the server's command line, as launched
    pid: int


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def hosts_file(tmp: Path) -> Path:
    path = tmp / "hosts.toml"
    path.write_text(
        f"""
[hosts.{HOST}]
local = true
python = "{sys.executable}"

[hosts.{HOST}.simulate]
speed = 50.0
release_lag_s = 0.0
home = "{tmp / "simhome"}"

[hosts.{HOST}.profiles.final]
model = "Qwen/Qwen3.6-27B"
tp = 2
port = {free_port()}
args = ["--mamba-scheduler-strategy", "extra_buffer"]
env = {{ SGLANG_ENABLE_SPEC_V2 = "1" }}
speculative = {{ algorithm = "NEXTN", num_steps = 1, eagle_topk = 1, num_draft_tokens = 2 }}
""",
        encoding="utf-8",
    )
    return path


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """SGLang launched on the simulated host and verified, before any dashboard opens; stopped after."""
    tmp = tmp_path_factory.mktemp("tmux")
    own = {
        "GDNCONSOLE_CONFIG": str(hosts_file(tmp)),
        "GDNCONSOLE_JOURNAL_DIR": str(tmp / "journal"),
        "GDNCONSOLE_PROMPTS_DIR": str(tmp / "prompts"),
    }
    env = {**os.environ, **own}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*GDNCONSOLE, *args], env=env, capture_output=True, text=True, timeout=90)

    record = tmp / "simhome" / ".gdnconsole-server.json"
    pid: int | None = None
    try:
        launched = cli("launch", HOST, "--wait", "verified", "--timeout", "60", "--json")
        if record.exists():
            pid = int(json.loads(record.read_text())["pid"])
        assert launched.returncode == 0, launched.stdout + launched.stderr
        result = json.loads(launched.stdout)
        assert result["outcome"] == "verified", result
        assert pid is not None
        yield Served(env=own, argv=result["argv"], pid=pid)
    finally:
        if pid is None and record.exists():
            pid = int(json.loads(record.read_text())["pid"])
        cli("stop", HOST)
        if pid is not None:
            kill_group(pid)  # whatever the stop left: the simulated host sees every SGLang process here


@pytest.fixture(scope="module")
def tmux_server() -> Iterator[None]:
    """Our tmux server: killed at the end, and its socket file removed (a killed server leaves it)."""
    tmux("start-server", ";", "set-option", "-g", "exit-empty", "off")
    socket_path = tmux("display-message", "-p", "#{socket_path}").stdout.strip()
    yield
    tmux("kill-server", check=False)
    if socket_path:
        Path(socket_path).unlink(missing_ok=True)


@pytest.fixture
def open_app(served: Served, tmux_server: None) -> Iterator[Callable[..., Pane]]:
    """Start `gdnconsole HOST` in a new tmux session of the given size and terminal type."""
    panes: list[Pane] = []

    def start(width: int, height: int, *, truecolor: bool = False, env: dict[str, str] | None = None) -> Pane:
        pane = Pane(f"app{len(panes)}", width, height)
        variables = {
            **served.env,
            "TERM": "xterm-256color",
            **({"COLORTERM": "truecolor"} if truecolor else {}),
            **(env or {}),
        }
        command = shlex.join(
            ["env", *(f"--unset={name}" for name in UNSET)]
            + [f"{k}={v}" for k, v in variables.items()]
            + [*GDNCONSOLE, HOST]
        )
        tmux("new-session", "-d", "-s", pane.name, "-x", str(width), "-y", str(height), command,
             ";", "set-option", "-w", "-t", pane.name, "remain-on-exit", "on",
             ";", "resize-window", "-t", pane.name, "-x", str(width), "-y", str(height))  # fmt: skip
        panes.append(pane)
        return pane

    yield start
    for pane in panes:
        tmux("kill-session", "-t", pane.name, check=False)


# -- what the screen must show ------------------------------------------------------------------------------

STAMP = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
GPU_ROW = r"^[│ ]*{index} .{{0,24}}\bTP{index}\b.*\d+\.\d/\d+\.\d GiB +\d+%[ │]*$"
LEGEND = re.compile(r"■ weights [\d.]+ .*□ free \d+\.\d[ │]*$")
VERIFIED = re.compile(r"✔ VERIFIED( \d+\.\d+ s)?")
TIMELINE = re.compile(r"\bstartup \d+/\d+")


@dataclass
class Layout:
    """Where the dashboard's parts are, by row."""

    gpu0: int
    legend0: int
    gpu1: int
    legend1: int
    logs: list[int]
    pane_status: int


def fits(lines: list[str], width: int, height: int) -> None:
    assert len(lines) == height, f"{len(lines)} rows on a {height}-row terminal"
    for n, line in enumerate(lines):
        assert cells(line) <= width, f"row {n} is {cells(line)} cells wide (> {width}): {line!r}"


def glyphs(lines: list[str], where: str) -> None:
    for line in lines:
        for char in line:
            if ord(char) > 0x7E:
                SEEN.setdefault(char, set()).add(where)
                problem = glyph_problem(char)
                assert problem is None, f"{char!r} U+{ord(char):04X} ({problem}) in {where}: {line!r}"


# Every description the dashboard's key bar may show (its keys, the log's, the pinned three), whole or
# compact (the first word, when the screen's own keys do not fit).
KEY_BAR_WORDS = {
    "Edit flags", "Launch", "Relaunch", "Stop server", "Prompt", "Journal", "Quit", "Reconnect",
    "Next host", "Fold", "Copy", "Wrap", "Follow", "Filter", "Search", "Next match", "First error", "Help",
    "palette", "Edit", "Stop", "Next", "First",
}  # fmt: skip
PINNED = ("q Quit  ? Help  ^p palette", "q Quit  ? Help")  # whole, compact: quit always shows


def whole_keys(footer: str) -> list[str]:
    """The descriptions on the key bar, checking that each key is whole: "KEY Description"."""
    shown = []
    for item in re.split(r" {2,}", footer.strip()):
        key, _, description = item.partition(" ")
        assert key and description in KEY_BAR_WORDS, f"a cut or unknown key {item!r} in {footer!r}"
        shown.append(description)
    return shown


def toast_over(lines: list[str], row: int, col: int) -> bool:
    """A toast (its "▌" edge left of ``col`` on that row) covers the cell at ``row``, ``col``."""
    line = lines[row] if 0 <= row < len(lines) else ""
    edge = line.rfind("▌", 0, col + 1)
    return edge != -1


def boxes(lines: list[str]) -> None:
    """Every box drawn with round corners is whole: four corners, its sides unbroken."""
    grid = [list(line) for line in lines]

    def at(row: int, col: int) -> str:
        return grid[row][col] if 0 <= row < len(grid) and 0 <= col < len(grid[row]) else " "

    for top, row in enumerate(grid):
        for left, char in enumerate(row):
            if char != "╭":
                continue
            corners = [c for c in range(left + 1, len(row)) if row[c] == "╮"]
            assert corners, f"a box at row {top} col {left} has no top-right corner: {lines[top]!r}"
            bottom = next((r for r in range(top + 1, len(grid)) if at(r, left) != "│"), len(grid))
            if at(bottom, left) != "╰" and toast_over(lines, bottom, left):
                continue  # a toast is drawn over everything, a dialog's border too: covered, not broken
            assert at(bottom, left) == "╰", (
                f"the box at row {top} col {left}: its left side ends at row {bottom}"
            )
            # A dialog over a panel may share its top row: the panel's corner is the one its bottom meets.
            right = next((c for c in corners if at(bottom, c) == "╯"), corners[0])
            assert at(bottom, right) == "╯", f"the box at row {top} col {left}: no bottom-right corner"
            for r in range(top + 1, bottom):
                if at(r, right) != "│" and toast_over(lines, r, right):
                    continue
                assert at(r, right) == "│", (
                    f"the box at row {top} col {left}: its right side breaks at row {r}"
                )


def dashboard(lines: list[str], width: int, height: int) -> Layout:
    """The dashboard of a serving, verified host, whole: raises AssertionError with what is wrong."""
    fits(lines, width, height)
    glyphs(lines, f"the dashboard at {width}x{height}")
    status = lines[0]
    for part in (HOST, "● connected", "● serving"):
        assert part in status, f"the status bar lacks {part!r}: {status!r}"
    assert VERIFIED.search(status), f"the status bar does not say VERIFIED: {status!r}"
    assert cells(status.rstrip()) < width, f"the status bar runs to the edge (cut?): {status!r}"
    rows = [
        next((n for n, line in enumerate(lines) if re.search(GPU_ROW.format(index=i), line)), -1)
        for i in (0, 1)
    ]
    assert -1 not in rows, f"GPU rows with TP0 and TP1, their bar and memory whole: found at {rows}"
    gpu0, gpu1 = rows
    assert LEGEND.search(lines[gpu0 + 1]) and LEGEND.search(lines[gpu1 + 1]), (
        "a legend line is cut or wrapped"
    )
    assert gpu1 == gpu0 + 2, "something between GPU 0's legend and GPU 1"
    logs = [n for n, line in enumerate(lines) if STAMP.search(line)]
    assert len(logs) >= 3 and min(logs) > gpu1 + 1, f"log lines under the GPU panel: rows {logs}"
    pane_status = next((n for n, line in enumerate(lines) if re.match(r"^ line \d+/\d+", line)), -1)
    assert max(logs) < pane_status < height - 1, f"the log's status row (row {pane_status}) under the log"
    footer = lines[-1]
    assert footer.startswith("e Edit") and footer.rstrip().endswith(PINNED), (
        f"the key bar on the last row: {footer!r}"
    )
    whole_keys(footer)
    assert sum(line.startswith("e Edit") for line in lines) == 1, "the key bar is drawn twice"
    boxes(lines)
    timeline = any(TIMELINE.search(line) for line in lines)
    assert timeline == (width >= NARROW), (
        f"the timeline {'hidden' if width >= NARROW else 'shown'} at {width} columns"
    )
    return Layout(gpu0, gpu0 + 1, gpu1, gpu1 + 1, logs, pane_status)


def open_dashboard(open_app: Callable[..., Pane], width: int, height: int, **options: bool) -> Pane:
    pane = open_app(width, height, **options)
    pane.wait(f"the dashboard at {width}x{height}", lambda lines: dashboard(lines, width, height))
    return pane


@contextlib.contextmanager
def getting_there() -> Iterator[None]:
    """In an xfail test: failing to reach the state it checks is a failure, not the expected one."""
    try:
        yield
    except AssertionError as exc:
        pytest.fail(f"before the check: {exc}")


# -- the tests ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "height", "truecolor"),
    [(80, 24, False), (160, 48, True)],
    ids=["80x24-xterm-256color", "160x48-truecolor"],
)
def test_dashboard_is_whole_and_in_colour(
    open_app: Callable[..., Pane], width: int, height: int, truecolor: bool
) -> None:
    pane = open_dashboard(open_app, width, height, truecolor=truecolor)
    coloured = pane.capture(escapes=True).removesuffix("\n").split("\n")  # one capture for both reads
    layout = dashboard([ESCAPE.sub("", line) for line in coloured], width, height)
    text = "\n".join(coloured)
    if truecolor:
        assert re.search(r"\x1b\[[0-9;]*38;2;\d+;\d+;\d+", text), "no 24-bit colour with COLORTERM=truecolor"
    else:
        assert re.search(r"\x1b\[[0-9;]*38;5;\d+", text), "no 256-colour code with TERM=xterm-256color"
        assert "38;2;" not in text, "24-bit colour sent to a terminal that said 256 colours"
    # The memory legend: each part in its own colour (weights, KV, mamba, graphs, other, free).
    legend = styled(coloured[layout.legend0])
    squares = {fg for char, fg in legend if char in "■□"}
    assert len(squares) >= 5 and None not in squares, f"legend colours: {squares}"
    colours = {fg for line in coloured for _, fg in styled(line)} - {None}
    assert len(colours) >= 8, f"only {len(colours)} colours on the dashboard"
    # The structure is drawn in backgrounds: the status bar and the key bar stand out from the log's page
    # (in 256 colours gdn-dark's background, surface and panel all once rounded to colour 16).
    page = backgrounds(coloured[layout.logs[0]])
    for row in (0, len(coloured) - 1):
        assert backgrounds(coloured[row]).isdisjoint(page), (row, backgrounds(coloured[row]), page)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_flag_form_shows_the_exact_command(
    open_app: Callable[..., Pane], served: Served, width: int, height: int
) -> None:
    pane = open_dashboard(open_app, width, height)
    pane.keys("e")
    expected = "$ env SGLANG_ENABLE_SPEC_V2=1 " + shlex.join(served.argv)

    def form(lines: list[str]) -> str:
        fits(lines, width, height)
        glyphs(lines, f"the flag form at {width}x{height}")
        assert HOST in lines[0] and "final" in lines[0] and "SGLang 0.5.11" in lines[0], lines[0]
        for label in ("model", "tp", "port", "speculative decoding", "algorithm"):
            assert any(re.search(rf"(^|\s){label}(\s|$)", line) for line in lines), f"no {label!r} field"
        assert any("Qwen/Qwen3.6-27B" in line for line in lines) and any("NEXTN" in line for line in lines)
        start = next((n for n, line in enumerate(lines) if line.lstrip(" │").startswith("$ ")), None)
        assert start is not None, "no command line ($ …)"
        command: list[str] = []
        for line in lines[start:]:
            words = line.strip(" │").rstrip("".join(map(chr, range(0x2580, 0x25A0))) + " ")
            if not words or words.startswith(("•", "✖", "⚠")):
                break
            command.append(words)
        shown = " ".join(command)
        assert re.sub(r"\s+", "", shown) == re.sub(r"\s+", "", expected), f"{shown!r} != {expected!r}"
        boxes(lines)
        return shown

    pane.wait(f"the flag form at {width}x{height}", form)
    pane.keys("Escape")
    pane.wait(
        f"the dashboard again after Esc at {width}x{height}", lambda lines: dashboard(lines, width, height)
    )


def test_resize_adapts_the_layout(open_app: Callable[..., Pane]) -> None:
    pane = open_dashboard(open_app, 160, 48)  # the timeline shown
    pane.resize(80, 24)
    pane.wait("the dashboard resized to 80x24", lambda lines: dashboard(lines, 80, 24))  # the timeline hidden
    pane.resize(160, 48)
    pane.wait("the dashboard resized back to 160x48", lambda lines: dashboard(lines, 160, 48))


def test_resize_to_80x24_leaves_no_blank_rows_under_the_gpus(open_app: Callable[..., Pane]) -> None:
    with getting_there():
        pane = open_dashboard(open_app, 160, 48)
        pane.resize(80, 24)
        lines = pane.wait("the dashboard resized to 80x24", lambda lines: dashboard(lines, 80, 24))
        layout = dashboard(lines, 80, 24)
    gap = [n for n in range(layout.legend1 + 1, min(layout.logs)) if not lines[n].strip()]
    assert not gap, f"blank rows {gap} between the GPU legend (row {layout.legend1}) and the log"


def row0(text: str) -> Callable[[list[str]], bool]:
    return lambda lines: text in lines[0]


def anywhere(pattern: str) -> Callable[[list[str]], bool]:
    return lambda lines: any(re.search(pattern, line) for line in lines)


# Each screen behind a key: the keys to press, each with what shows it worked; then the keys that close it.
Step = tuple[str, Callable[[list[str]], bool]]
SCREENS: list[tuple[str, list[Step], str]] = [
    ("the flag form", [("e", row0("SGLang 0.5.11, SM"))], "Escape"),
    ("the journal", [("j", row0("Launch journal"))], "Escape"),
    ("the prompt panel", [("p", row0("Prompt")), ("C-r", anywhere(r"TTFT +\d+ ms.*accept +\d"))], "Escape"),
    ("the help", [("?", anywhere(r"\bdash\.next_host\b"))], "Escape"),
]


def test_only_glyphs_that_common_fonts_have(open_app: Callable[..., Pane]) -> None:
    """The dashboard and each screen behind a key use no emoji, no icon-font glyph: the characters beyond
    ASCII that the captures showed are listed (pytest -s)."""
    pane = open_dashboard(open_app, 120, 36)
    for name, steps, close in SCREENS:
        for key, shown in steps:
            pane.keys(key)
            lines = pane.wait(f"{name} at 120x36, after {key}", shown)
            fits(lines, 120, 36)
            boxes(lines)
        pane.keys(close)
        pane.wait(f"the dashboard after closing {name}", lambda lines: dashboard(lines, 120, 36))
    for shot in pane.shots:
        glyphs(shot.split("\n"), "the dashboard or a screen behind a key at 120x36")
    used = sorted(SEEN)
    print("\nnon-ASCII characters shown:", " ".join(f"{c} U+{ord(c):04X}" for c in used))
    assert used, "no non-ASCII character at all: was anything captured?"


def test_a_key_typed_while_quitting_ends_cleanly(open_app: Callable[..., Pane]) -> None:
    with getting_there():
        pane = open_dashboard(open_app, 120, 36)
        pane.keys("-l", "qe")  # q, and at once e
        lines = pane.wait("the app to exit", lambda lines: pane.dead())
    assert "Traceback" not in pane.history(), pane.describe(lines)


def test_the_footer_is_whole_at_80x24(open_app: Callable[..., Pane]) -> None:
    with getting_there():
        pane = open_dashboard(open_app, 80, 24)
    footer = pane.lines()[-1].rstrip()
    assert footer.endswith("q Quit  ? Help"), f"quit and help are not last: {footer!r}"
    shown = whole_keys(footer)
    # Compact: the screen's own keys all fit, journal included (it was the first to go, with quit).
    assert shown[:6] == ["Edit", "Launch", "Relaunch", "Stop", "Prompt", "Journal"], f"the keys: {shown}"


def test_a_closed_terminal_leaves_no_copy_of_the_log(open_app: Callable[..., Pane], tmp_path: Path) -> None:
    """SIGHUP (the terminal went away) ends the dashboard, and the mirror of the host's log in its
    temporary folder (the log can hold what the server printed of its arguments) goes with it. A busy
    dashboard once hung for ever instead: Textual's writer thread died on the closed terminal, and its
    shutdown then waited to queue a write."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    pane = open_app(120, 36, env={"TMPDIR": str(tmp)})
    pane.wait("the dashboard connected", lambda lines: "● connected" in lines[0])
    assert [p.name for p in tmp.iterdir() if p.name.startswith("gdnconsole-")]  # the mirror's folder
    tmux("kill-session", "-t", pane.name)  # the terminal closes: SIGHUP
    deadline = time.monotonic() + WAIT_S
    while any(tmp.iterdir()) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    assert not any(tmp.iterdir()), sorted(p.name for p in tmp.iterdir())


def test_the_screen_comes_up_before_the_ssh_link(tmux_server: None, tmp_path: Path) -> None:
    """An SSH server that accepts the connection and never says a word: the dashboard is up and answers
    keys while the link waits (asyncssh loads and connects in the background)."""
    home = tmp_path / "home"  # the link reads ~/.ssh: an empty one of our own, never the user's
    (home / ".ssh").mkdir(parents=True)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        port = silent.getsockname()[1]
        hosts = tmp_path / "hosts.toml"
        hosts.write_text(f'[hosts.slowbox]\nssh = "root@127.0.0.1:{port}"\n\n'
                         '[hosts.slowbox.profiles.p]\nmodel = "Qwen/Qwen3.6-27B"\n')  # fmt: skip
        pane = Pane("silent", 100, 30)
        variables = {"HOME": str(home), "GDNCONSOLE_CONFIG": str(hosts), "TERM": "xterm-256color"}
        command = shlex.join(
            ["env", *(f"--unset={name}" for name in UNSET)]
            + [f"{k}={v}" for k, v in variables.items()]
            + [*GDNCONSOLE, "slowbox"]
        )
        tmux("new-session", "-d", "-s", pane.name, "-x", "100", "-y", "30", command,
             ";", "set-option", "-w", "-t", pane.name, "remain-on-exit", "on")  # fmt: skip
        try:
            # The whole screen, header to footer: a capture can land while a frame is half written.
            pane.wait(
                "the dashboard, connecting",
                lambda lines: (
                    lines[0].startswith(" slowbox")
                    and "◌ connecting…" in lines[0]
                    and lines[-1].startswith("e Edit")
                ),
            )
            pane.keys("?")
            pane.wait("the help, while the link waits", anywhere(r"\bdash\.edit\b"))
            pane.keys("Escape")
            lines = pane.wait(
                "the dashboard again",
                lambda lines: "◌ connecting…" in lines[0] and not anywhere(r"\bdash\.edit\b")(lines),
            )
            pane.keys("q")
            pane.wait("the app to exit", lambda lines: pane.dead())
            assert "Traceback" not in pane.history(), pane.describe(lines)
        finally:
            tmux("kill-session", "-t", pane.name, check=False)
