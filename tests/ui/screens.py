"""Every screen of gdnconsole on hand-set, deterministic state: the builders that both `make screenshots`
(tests/ui/screenshots.py) and the snapshot tests (tests/ui/test_screens_snapshots.py) use.

A Shot builds its app in a work folder of its own and says what to do before the picture is taken. The
apps run with a fixed clock, no polling and no sessions of their own (state set by agent messages given
by hand), so two runs draw the same picture. Two things come from the process rather than the app: the
journal's times (local time: run under TZ=UTC, see ``utc``) and its path (relative to the working folder:
run in the work folder).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from gdnconsole.host.journal import Attempt, Journal, env_diff, flag_diff
from gdnconsole.host.session import HostSession
from gdnconsole.ui.app import DashboardApp
from gdnconsole.ui.dialogs.confirm import relaunch_dialog
from gdnconsole.ui.screens.journal import JournalScreen
from gdnconsole.ui.screens.logscreen import LogViewApp
from tests.ui.conftest import after, settle
from tests.ui.dashboard_helpers import (
    CLOCK,
    SIZE,
    crashed_session,
    feed_log,
    fixed_clock,
    gpu,
    hello,
    local_host,
    mamba_line,
    on_screen,
    refused_session,
    server,
    serving_session,
    until,
)
from tests.ui.fixtures import ct129_lines, startup, write_log
from tests.ui.servingshot import fed, tuned_store
from tests.ui.test_flagform_snapshots import NEW, OLD, form_with_error, relaunch_plan
from tests.ui.test_prompt_snapshots import burst_results, prompt_app, streaming
from tests.ui.tune_shot import tune_shown

SMALL = (80, 24)
Steps = Callable[[Pilot[Any]], Awaitable[None]]
Make = Callable[[Path], tuple[App[Any], Steps]]  # a work folder -> the app, and what to do before the shot
THEMES = ("gdn-light", "gdn-high-contrast")
JOURNAL_DIR = Path("journal")  # relative: the journal screen shows its path, which must not be a tmp one


@dataclass(frozen=True)
class Shot:
    """One screen: ``make`` builds the app in a folder of its own, and the steps to run before the picture."""

    name: str
    make: Make
    size: tuple[int, int] = SIZE


@contextlib.contextmanager
def utc() -> Iterator[None]:
    """Local time is UTC inside (the journal shows its attempts' times in local time)."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


@contextlib.contextmanager
def in_folder(path: Path) -> Iterator[None]:
    """The working folder is ``path`` inside (the journal's folder is relative to it)."""
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def fixed_app(
    *sessions: HostSession, theme_name: str = "gdn-dark", journal_dir: Path | None = None
) -> DashboardApp:
    return DashboardApp(
        list(sessions),
        start=False,
        clock=fixed_clock,
        theme_name=theme_name,
        journal_dir=journal_dir,
    )


# -- sessions ------------------------------------------------------------------------------------------


def verified(session: HostSession) -> HostSession:
    """The session's server answered the verification prompt in 412 ms: VERIFIED."""
    session.prober.sync()
    session.serving.verified = True
    session.serving.latency_ms = 412.0
    return session


def graphs_log() -> list[str]:
    """The ct129 startup up to the CUDA graph capture, the capture under way on both ranks."""
    out: list[str] = []
    for line in startup(0, crash=False):
        if "Capture cuda graph end" in line:
            break
        out.append(line)
        if "KV Cache is allocated" in line:
            out.append(mamba_line(41, "TP0" if " TP0]" in line else "TP1"))
    out.append(
        "Capturing batches (bs=48 avail_mem=16.40 GB):  "
        + "".join(
            f"\rCapturing batches (bs={48 - 4 * k} avail_mem=16.{40 - k} GB):  {k * 100 // 12:3d}%"
            for k in range(8)
        )
    )
    return out


def starting_session(tmp_path: Path, name: str = "ct129", index: int = 0) -> HostSession:
    """ct129 45 s into a launch: weights, KV cache and mamba state in place, CUDA graphs being captured."""
    session = HostSession(local_host(name), mirror=tmp_path / f"mirror{index}.log")
    session.handle(hello(name))
    session.rtt_ms = 3.2
    session.handle({"type": "gpus", "gpus": [gpu(0, 43980, 96, [(4250, 43460, "sglang::scheduler_TP0")]),
                                            gpu(1, 43978, 95, [(4251, 43458, "sglang::scheduler_TP1")])]})  # fmt: skip
    session.handle({"type": "processes", "servers": [server(4242, CLOCK - 45)], "orphans": []})
    feed_log(session, graphs_log())
    return session


def crashed_alone(tmp_path: Path) -> HostSession:
    """ct129 just after its server died capturing CUDA graphs (a rank left behind holding GPU 1)."""
    return crashed_session(tmp_path, name="ct129", index=0)


# -- steps ---------------------------------------------------------------------------------------------


async def crash_seen(pilot: Pilot[Any]) -> None:
    """The agent reports the server's exit (the dashboard says why, at once); the log at the fatal error."""
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, DashboardApp)
    app.sessions[0].handle({"type": "server_exit", "pid": 4300, "pgid": 4300, "returncode": 1, "t": CLOCK})
    await settle(pilot)
    await pilot.press("x")  # the fatal error: its traceback folded to the line that names it
    await settle(pilot)


async def relaunch_asked(pilot: Pilot[Any]) -> None:
    """R on a serving host: what will be stopped and the flags that change (a fixed plan and diff)."""
    await settle(pilot)
    pilot.app.push_screen(relaunch_dialog("ct129", "final", relaunch_plan(), flag_diff(OLD, NEW), 30.0))
    await settle(pilot)


# -- the journal of the DESIGN journey -----------------------------------------------------------------

ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B", "--tp-size", "2",
        "--host", "127.0.0.1", "--port", "30000", "--speculative-algorithm", "NEXTN"]  # fmt: skip
TOPK = ["--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2"]
FINAL = [*ARGV, "--speculative-num-steps", "1", *TOPK, "--mamba-scheduler-strategy", "extra_buffer"]
ATTENTION = "Attention backend not specified. Use flashinfer backend by default."
TORCHCODEC = (
    "Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: Could not load libtorchcodec. "
    "Likely causes"
)
TOPK_RULE = (
    "SGLang 0.5.11 would stop with a bare AssertionError in _handle_speculative_decoding: "
    "--speculative-eagle-topk or --speculative-num-draft-tokens is set without --speculative-num-steps."
)


def journey() -> list[Attempt]:
    """Getting Qwen3.6-27B to answer on ct129 (ARCHITECTURE.md): an AssertionError caught before anything
    started, an OOM capturing CUDA graphs, a wait that gave up during the capture, a ready server whose
    verification prompt timed out, and VERIFIED. Each attempt's diff is against the one before."""
    warnings = [ATTENTION, TORCHCODEC]
    loading = {"starting": 2.0, "distributed": 1.0, "loading": 37.1, "loaded": 1.0, "memory": 1.0}
    done = {**loading, "graphs": 5.9, "scheduler_ready": 1.0, "listening": 1.0, "warmup": 1.0, "ready": 1.0}
    oom = "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.02 GiB."
    plans: list[tuple[str, list[str], dict[str, str], dict[str, Any]]] = [
        ("topk-only", [*ARGV, *TOPK, "--mamba-scheduler-strategy", "extra_buffer"], {},
         {"outcome": "rejected", "rule": {"id": "spec.topk_without_steps", "message": TOPK_RULE}}),
        ("final", [*FINAL, "--mem-fraction-static", "0.92"], {},
         {"outcome": "crashed", "stage": "graphs", "pid": 4101, "warnings": warnings,
          "stages": {**loading, "graphs": 3.9}, "fatal": {"line": 30, "summary": oom}}),
        ("final", [*FINAL, "--cuda-graph-max-bs", "256"], {},
         {"outcome": "timeout", "stage": "graphs", "pid": 4160, "warnings": warnings,
          "stages": {**loading, "graphs": 120.0}}),
        ("final", FINAL, {},
         {"outcome": "ready", "stage": "ready", "pid": 4201, "warnings": warnings, "stages": done,
          "verify": {"ok": False, "latency_ms": None, "reason": "timeout: no answer within 30 s"}}),
        ("final", FINAL, {"SGLANG_ENABLE_SPEC_V2": "1"},
         {"outcome": "verified", "stage": "ready", "pid": 4242, "warnings": warnings, "stages": done,
          "verify": {"ok": True, "latency_ms": 412.0, "reason": None}}),
    ]  # fmt: skip
    attempts: list[Attempt] = []
    for number, (profile, argv, env, outcome) in enumerate(plans, start=1):
        previous = attempts[-1] if attempts else None
        diff = [] if previous is None else flag_diff(previous.argv, argv) + env_diff(previous.env, env)
        when = CLOCK - 3000 + 540 * number
        record = {
            "number": number,
            "time": when,
            "host": "ct129",
            "profile": profile,
            "argv": argv,
            "env": env,
        }
        attempts.append(Attempt.from_json({**record, "diff": diff, **outcome}))
    return attempts


def journal_app(tmp_path: Path) -> DashboardApp:
    """The serving ct129 whose journal (in ``tmp_path``/journal) holds the five attempts of the journey."""
    journal = Journal("ct129", tmp_path / JOURNAL_DIR / "ct129.jsonl")
    for attempt in journey():
        journal.record(attempt)
    return fixed_app(verified(serving_session(tmp_path)), journal_dir=JOURNAL_DIR)


async def journal_open(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("j")
    assert await until(pilot, lambda: on_screen(pilot.app, JournalScreen), 5)
    await settle(pilot)


# -- the log view ----------------------------------------------------------------------------------------


def log_app(tmp_path: Path, theme_name: str = "gdn-dark") -> LogViewApp:
    log = write_log(tmp_path / "sglang_serve.log", ct129_lines())
    return LogViewApp(log, poll_interval=None, theme_name=theme_name)


async def filtered(pilot: Pilot[Any]) -> None:
    """f, a regex, enter: the memory figures of both startups, every other line hidden."""
    await settle(pilot)
    await pilot.press("f")
    await settle(pilot)
    await pilot.press(*"avail mem|mem usage", "enter")
    await settle(pilot)


# -- every screen ------------------------------------------------------------------------------------------


def plain(build: Callable[[Path], App[Any]], steps: Steps) -> Make:
    return lambda tmp_path: (build(tmp_path), steps)


def dashboard(
    build: Callable[[Path], HostSession], theme_name: str = "gdn-dark"
) -> Callable[[Path], App[Any]]:
    return lambda tmp_path: fixed_app(build(tmp_path), theme_name=theme_name)


def three_hosts(tmp_path: Path) -> DashboardApp:
    for sub in ("b", "c"):
        (tmp_path / sub).mkdir(exist_ok=True)
    return fixed_app(
        verified(serving_session(tmp_path)), crashed_session(tmp_path / "b"), refused_session(tmp_path / "c")
    )


def serving_verified(tmp_path: Path) -> HostSession:
    return verified(serving_session(tmp_path))


def serving_app(tmp_path: Path) -> DashboardApp:
    """The serving ct129 after six minutes of polls (a burst in the last one), its profile tuned."""
    session = verified(serving_session(tmp_path))
    tuned_store(tmp_path / JOURNAL_DIR, "ct129", session.host.profiles["qwen36-mtp"], session.host.python)
    session.figures.feed = fed()
    return fixed_app(session, journal_dir=JOURNAL_DIR)


def stale_serving_app(tmp_path: Path) -> DashboardApp:
    """As ``serving_app``, but the last poll of /metrics timed out 12 s ago."""
    session = verified(serving_session(tmp_path))
    session.figures.feed = fed(stale_s=12.0)
    return fixed_app(session, journal_dir=JOURNAL_DIR)


async def serving_open(pilot: Pilot[Any]) -> None:
    from gdnconsole.ui.screens.serving import ServingScreen

    await settle(pilot)
    await pilot.press("v")
    assert await until(pilot, lambda: on_screen(pilot.app, ServingScreen), 5)
    await settle(pilot)


def themed_log(theme_name: str) -> Callable[[Path], App[Any]]:
    return lambda tmp_path: log_app(tmp_path, theme_name)


SHOTS: list[Shot] = [
    Shot("dashboard-startup", plain(dashboard(starting_session), after())),
    Shot("dashboard-serving", plain(dashboard(serving_verified), after())),
    Shot("dashboard-crashed", plain(dashboard(crashed_alone), crash_seen)),
    Shot("dashboard-three-hosts", plain(three_hosts, after())),
    Shot("dashboard-crash-80x24", plain(three_hosts, after("2")), SMALL),
    Shot("flag-form-rule-error", form_with_error),
    Shot("relaunch-confirmation", plain(dashboard(serving_verified), relaunch_asked)),
    Shot("journal", plain(journal_app, journal_open)),
    Shot("prompt-panel-streaming", plain(prompt_app, streaming)),
    Shot("prompt-panel-burst", plain(prompt_app, burst_results)),
    Shot("log-view", plain(log_app, after())),
    Shot("log-view-crash", plain(log_app, after("x", "enter"))),
    Shot("log-view-filtered", plain(log_app, filtered)),
    Shot("help", plain(dashboard(serving_verified), after("question_mark"))),
    Shot("tune", plain(dashboard(serving_verified), tune_shown)),
    Shot("dashboard-serving-strip", plain(serving_app, after())),
    Shot("dashboard-serving-stale", plain(stale_serving_app, after()), SMALL),
    Shot("serving", plain(serving_app, serving_open)),
    *(
        Shot(f"dashboard-serving-{name}", plain(dashboard(serving_verified, name), after()))
        for name in THEMES
    ),
    *(Shot(f"log-view-{name}", plain(themed_log(name), after())) for name in THEMES),
]
SHOT_BY_NAME = {shot.name: shot for shot in SHOTS}
