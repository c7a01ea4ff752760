"""`gdnconsole demo --scenario tune`: the tune story plays to its end on the real dashboard (a simulated
ct129 at speed 50, decoding fast): the issue's grid swept on screen, the screen closed at the end, no
server of the story's left behind."""

from __future__ import annotations

from gdnconsole.demo.player import StoryOptions, StoryRun
from gdnconsole.host.foreground import group_alive
from tests.ui.dashboard_helpers import SIZE, until

FAST = StoryOptions(pace=0.0, speed=50.0, sim={"tokens_per_s": 2000.0, "release_lag_s": 0.0})


async def test_tune_sweeps_the_grid_and_finds_the_best() -> None:
    with StoryRun("tune", FAST) as run:
        async with run.app.run_test(size=SIZE) as pilot:
            assert await until(pilot, lambda: run.director.done, 90), run.director.captions
            director = run.director
            assert director.error is None, (director.error, director.trace, director.captions)
            attempts = director.journal(0).attempts()
            # the baseline and s1 k1 d2, s2 k1 d3, s3 k1 d4: with topk 1 SGLang runs the other six as these
            assert len(attempts) == 4 and {a.outcome for a in attempts} == {"verified"}
            assert not director.session(0).launched_alive
            ended = next(c for c in director.captions if c.startswith("3/3 "))
            assert "done: 10 measured · best s" in ended, director.captions
            assert type(run.app.screen).__name__ == "DashboardScreen"  # the story closed the tune screen
            groups = set(run.groups)
            await run.app.dashboard.stop_sessions()
    assert groups and not [g for g in groups if group_alive(g)]
