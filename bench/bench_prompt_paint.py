"""How soon a streamed answer shows in the prompt panel: from a token's arrival to the screen showing it.

The dashboard runs headless (Textual's test driver, 120x36) on a simulated host whose server decodes
RATE tokens per second; the prompt panel sends ANSWERS prompts. For each answer it records when each
token reached the panel and when the answer's text box was given text that includes it, and prints the
median and worst delay, the time to the first token on screen, and how many times the text was painted
while the answer streamed. The panel repaints every 1/15 s (promptpanel.TICK_S): that is the expected
delay. tests/ui/test_prompt_panel.py asserts the order of what is shown, not these times.

    python bench/bench_prompt_paint.py
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textual.widgets import Static  # noqa: E402

from gdnconsole.config.hosts import Host, Profile, Simulate  # noqa: E402
from gdnconsole.host import simulated  # noqa: E402
from gdnconsole.host.session import HostSession  # noqa: E402
from gdnconsole.ui.app import DashboardApp  # noqa: E402
from gdnconsole.ui.screens.promptpanel import TICK_S, PromptScreen  # noqa: E402

RATE = 20.0
ANSWERS = 5
ARGS = ["--model-path", "Qwen/Qwen3.6-27B", "--tp", "2"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def sim_host(home: Path) -> Host:
    table: dict[str, object] = {"speed": 50.0, "release_lag_s": 0.0, "home": str(home), "tokens_per_s": RATE}
    profile = Profile(name="p", model="Qwen/Qwen3.6-27B", tp=2, port=free_port())
    sim = Simulate(2, "NVIDIA RTX A6000", 49140, "0.5.11", 50.0, True, "ok", table)
    return Host(
        name="benchbox",
        ssh=None,
        local=True,
        python=sys.executable,
        log="sglang_serve.log",
        profiles={"p": profile},
        simulate=sim,
    )


def start_server(host: Host) -> subprocess.Popen[bytes]:
    env = {**os.environ, **simulated.environment(host)}
    workdir = simulated.workdir(host)
    assert host.profile is not None
    with (workdir / host.log).open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "sglang.launch_server", *ARGS, "--port", str(host.profile.port)],
            env=env,
            cwd=workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


async def until(pilot: Any, predicate: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await pilot.pause(0.02)
    return True


async def measure(session: HostSession) -> tuple[list[float], list[float], list[int]]:
    delays: list[float] = []  # token arrival -> text including it given to the screen
    firsts: list[float] = []  # request sent -> first token on screen
    paints: list[int] = []  # text paints while streaming, per answer
    app = DashboardApp([session])
    async with app.run_test(size=(120, 36)) as pilot:
        if not await until(pilot, lambda: session.serving.verified is True, 120):
            raise RuntimeError(f"the server was not verified: {session.serving}")
        await pilot.press("p")
        if not await until(pilot, lambda: isinstance(app.screen, PromptScreen), 10):
            raise RuntimeError("the prompt panel did not open")
        screen = app.screen
        assert isinstance(screen, PromptScreen)
        screen.form.thinking = False
        arrivals: list[tuple[float, int]] = []  # (when, characters of answer so far)
        shown: list[tuple[float, int]] = []
        received = 0
        deliver = screen.answer.delta

        def delta(name: str, text: str, now: float) -> None:
            nonlocal received
            received += len(text)
            arrivals.append((time.perf_counter(), received))
            deliver(name, text, now)

        box = screen.query_one("#answer-text", Static)
        update = box.update

        def painted(content: Any = "", *, layout: bool = True) -> None:
            shown.append((time.perf_counter(), len(str(content))))
            update(content, layout=layout)

        screen.answer.delta = delta  # type: ignore[method-assign]
        box.update = painted  # type: ignore[method-assign]
        for i in range(ANSWERS):
            arrivals.clear()
            shown.clear()
            received = 0
            screen.form.box.text = f"Describe the GPU host, take {i}."
            started = screen.started
            sent = time.perf_counter()
            await pilot.press("ctrl+r")
            if not await until(pilot, lambda s=started: screen.started > s and screen.running is None, 120):
                raise RuntimeError("the answer did not end")
            streaming = [(t, n) for t, n in shown if 0 < n < received]
            paints.append(len(streaming))
            for when, length in arrivals:
                seen = next((t for t, n in shown if n >= length and t >= when), None)
                if seen is not None:
                    delays.append(seen - when)
            first = next((t for t, n in shown if n > 0), None)
            if first is not None:
                firsts.append(first - sent)
    return delays, firsts, paints


async def run(work: Path) -> tuple[list[float], list[float], list[int]]:
    host = sim_host(work / "simhome")
    simulated.environment(host)
    server = start_server(host)
    session = HostSession(host, sample_interval=0.2, backoff=(0.05, 0.1, 0.2), mirror=work / "mirror.log")
    try:
        return await measure(session)
    finally:
        await session.stop()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="gdn-paint-") as tmp:
        delays, firsts, paints = asyncio.run(run(Path(tmp)))
    ms = [d * 1000 for d in delays]
    print(f"prompt panel, {ANSWERS} answers at {RATE:.0f} tok/s (repaint every {TICK_S * 1000:.0f} ms):")
    print(f"  token arrived -> on screen: median {statistics.median(ms):.0f} ms, worst {max(ms):.0f} ms")
    print(f"  prompt sent -> first token on screen: median {statistics.median(firsts) * 1000:.0f} ms")
    print(f"  paints of a partial answer per answer: {', '.join(map(str, paints))}")


if __name__ == "__main__":
    main()
