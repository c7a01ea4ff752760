"""The log view on a 1 GB log: time to the first painted screen, peak memory, time to render a screen.

Each measurement runs in a fresh subprocess (so its peak RSS is its own), headless through Textual's
``run_test``. "First paint" is the time from creating the app to the first render of a row holding a
real log line (not a placeholder) — what a user sees first; Python's and Textual's import time is
printed apart. Peak RSS is ``ru_maxrss`` after the background index and tracker scan have finished.

    python bench/bench_logview.py            # reuses bench/out/big1g.log, generating it when missing
    GDNCONSOLE_BENCH_LOG=/tmp/big1g.log python bench/bench_logview.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from biglog import big_log

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZE = (120, 36)


def child(path: Path, follow: bool) -> dict[str, float]:
    """Runs in the subprocess: open the app, wait for the first paint, then for the background work."""
    import asyncio
    import resource

    started = time.perf_counter()
    from gdnconsole.ui.screens.logscreen import LogViewApp

    imported = time.perf_counter()
    figures: dict[str, float] = {"import_s": imported - started}

    async def run() -> None:
        t0 = time.perf_counter()
        app = LogViewApp(path, follow=follow, poll_interval=None)
        async with app.run_test(size=SIZE) as pilot:
            view = app.log_screen.view
            while view.first_paint is None:
                await asyncio.sleep(0.001)
            figures["first_paint_s"] = view.first_paint - t0
            await app.workers.wait_for_complete()
            await pilot.pause()
            await app.workers.wait_for_complete()
            figures["background_done_s"] = time.perf_counter() - t0
            figures["lines"] = view.total
            figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            figures.update(await render_times(app, pilot))

    asyncio.run(run())
    return figures


async def render_times(app: object, pilot: object) -> dict[str, float]:
    """Milliseconds to render one full screen (every row through render_line) at hard places."""
    from textual.pilot import Pilot

    from gdnconsole.ui.screens.logscreen import LogViewApp

    assert isinstance(app, LogViewApp) and isinstance(pilot, Pilot)
    view = app.log_screen.view
    out: dict[str, float] = {}
    # The first startup's server_args= line (~11 KB) and the tqdm lines (~800 chars with \r) are near the top.
    view.go_to_line(0)
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()
    for name, x in (("top_x0", 0), ("top_x200", 200), ("top_x9000", 9000)):
        view.scroll_to(x=x, y=0, animate=False)
        await pilot.pause()
        start = time.perf_counter()
        repeats = 20
        for _ in range(repeats):
            for y in range(view.size.height):
                view.render_line(y)
        out[f"render_screen_ms_{name}"] = (time.perf_counter() - start) * 1000 / repeats
    # What a scroll costs off the UI thread: reading and classifying the rows around a screen.
    doc = app.log_screen.pane.doc
    for name, line in (
        ("start", 0),
        ("middle", doc.index.line_count // 2),
        ("end", doc.index.line_count - 108),
    ):
        start = time.perf_counter()
        doc.read(range(line, line + 3 * SIZE[1]))
        out[f"read_ms_{name}"] = (time.perf_counter() - start) * 1000
    return out


def measure(path: Path, follow: bool) -> dict[str, float]:
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); from bench.bench_logview import child; "
        f"from pathlib import Path; print(json.dumps(child(Path({str(path)!r}), {follow})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    path = big_log()
    print(f"log: {path} ({path.stat().st_size / 2**20:,.0f} MiB)")
    for follow in (False, True):
        figures = measure(path, follow)
        mode = "--follow (opens at the end)" if follow else "(opens at the start)"
        print(f"log view {mode}")
        print(f"  import gdnconsole.ui        {figures['import_s'] * 1000:8.0f} ms")
        print(f"  app start → first paint    {figures['first_paint_s'] * 1000:8.0f} ms")
        print(
            f"  index + tracker scan done  {figures['background_done_s']:8.2f} s"
            f"   ({figures['lines']:,.0f} lines)"
        )
        print(f"  peak RSS                   {figures['peak_rss_mb']:8.1f} MB")
        for key, value in figures.items():
            if key.startswith("render_screen_ms_"):
                print(f"  render one screen, {key.removeprefix('render_screen_ms_'):<9} {value:8.2f} ms")
        for key, value in figures.items():
            if key.startswith("read_ms_"):
                print(
                    f"  read 3 screens, {key.removeprefix('read_ms_'):<12} {value:8.2f} ms  (worker thread)"
                )


if __name__ == "__main__":
    main()
