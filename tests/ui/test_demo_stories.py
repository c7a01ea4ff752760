"""`gdnconsole demo --scenario seed|crash|fleet`: each story plays to its end on the real dashboard (real
HostSessions on simulated hosts, the keys a user presses), fast (no pauses, the simulated timeline at speed
50), and leaves the state it promises; every server and helper process it started is gone afterwards.
Also: an unknown name lists the stories and the scenarios, and the recorder's compaction keeps the screen.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.worker import WorkerCancelled

from gdnconsole.cli.main import main
from gdnconsole.demo.player import StoryOptions, StoryRun
from gdnconsole.demo.stories import demo_profile
from gdnconsole.host.foreground import group_alive
from gdnconsole.host.link import LinkState
from gdnconsole.sglang.launch import launch_spec
from tests.ui.dashboard_helpers import SIZE, until
from tests.ui.record import Screen, compact

# No pauses, a fast timeline, quick answers, GPU memory released at once.
FAST = StoryOptions(pace=0.0, speed=50.0, sim={"tokens_per_s": 400.0, "release_lag_s": 0.0})
STORY_S = 90.0


@contextlib.asynccontextmanager
async def played(name: str) -> AsyncIterator[StoryRun]:
    """The story played to its end; the app still runs while the test looks. Afterwards every process
    group the story started must be gone."""
    started: set[int] = set()
    with StoryRun(name, FAST) as run:
        async with run.app.run_test(size=SIZE) as pilot:
            finished = await until(pilot, lambda: run.director.done, STORY_S)
            started |= run.groups | run.helpers
            if not finished:  # stop it: a key it sends while run_test closes the screens fails the app,
                # and that error would be reported instead of this one
                with contextlib.suppress(WorkerCancelled):
                    await run.app.workers.wait_for_complete(run.app.workers.cancel_group(run.app, "story"))
            assert finished, run.director.captions
            assert run.director.error is None, (run.director.error, run.director.trace, run.director.captions)
            yield run
            started |= run.groups | run.helpers
            await run.app.dashboard.stop_sessions()
    assert started and not [g for g in started if group_alive(g)]


def steps_shown(run: StoryRun) -> list[str]:
    return sorted({c.split(" ", 1)[0] for c in run.director.captions if c[:1].isdigit()})


async def test_seed_replays_the_five_launches_to_verified() -> None:
    async with played("seed") as run:
        journal = run.director.journal(0)
        attempts = journal.attempts()
        assert [a.outcome for a in attempts] == ["rejected", "crashed", "verified", "verified"]
        rejected, crashed, warned, final = attempts
        assert (
            rejected.pid is None
            and rejected.rule is not None
            and rejected.rule.id == "spec.topk_without_steps"
        )
        assert crashed.diff == [] and crashed.fatal is not None and "AssertionError" in crashed.fatal.summary
        assert warned.diff == ["+ --speculative-num-steps 1"]
        assert any("Ignore import error" in w for w in warned.warnings), warned.warnings
        assert final.diff == ["+ env SGLANG_ENABLE_SPEC_V2=1"]
        # What finally ran is the built-in demo host's profile (ct129's flags), edited there in the form.
        host = run.hosts[0]
        profile = dataclasses.replace(demo_profile(), port=next(iter(host.profiles.values())).port)
        assert final.argv == list(launch_spec(profile, host.python).argv) and final.env == dict(profile.env)
        session = run.director.session(0)
        assert session.serving.verified is True and session.launched_pid == final.pid
        assert steps_shown(run) == ["1/5", "2/5", "3/5", "4/5", "5/5"]
        assert type(run.app.screen).__name__ == "DashboardScreen"


async def test_crash_then_a_relaunch_that_is_verified() -> None:
    async with played("crash") as run:
        attempts = run.director.journal(0).attempts()
        assert [a.outcome for a in attempts] == ["crashed", "verified"]
        assert attempts[0].fatal is not None and attempts[0].fatal.summary and attempts[0].stage == "serving"
        assert run.director.session(0).serving.verified is True
        assert any(c.startswith("2/3 crashed: ") for c in run.director.captions), run.director.captions


async def test_fleet_shows_three_hosts_in_their_states() -> None:
    async with played("fleet") as run:
        d = run.director
        names = [s.host.name for s in run.sessions]
        assert names == ["ct129", "ct130", "ct131"]
        links = [s.link for s in run.sessions]
        assert links[:2] == [LinkState.CONNECTED, LinkState.CONNECTED]
        # The story waited for ct131's link to fail; by now it may be trying again (backoff).
        assert links[2] in (LinkState.DOWN, LinkState.CONNECTING)
        assert [a.outcome for a in d.journal(0).attempts()] == ["verified"]
        assert [a.outcome for a in d.journal(1).attempts()] == ["crashed"]
        assert d.journal(2).attempts() == []
        leftover = [o for o in d.session(1).orphans if o.title == "sglang::scheduler_TP1"]
        assert len(leftover) == 1 and leftover[0].pid in run.helpers
        assert d.session(0).orphans == ()  # each simulated host sees only its own processes
        assert d.dashboard.active_index == 0


def test_unknown_story_lists_the_stories_and_scenarios(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GDNCONSOLE_CONFIG", str(tmp_path / "hosts.toml"))
    result = CliRunner().invoke(main, ["demo", "--scenario", "nope"])
    assert result.exit_code == 2
    assert "unknown scenario 'nope'" in result.output
    assert "stories: seed (" in result.output and "crash (" in result.output and "fleet (" in result.output
    assert "simulator scenarios: ok, crash-serving" in result.output
    result = CliRunner().invoke(main, ["demo", "--scenario", "seed", "--plain"])
    assert result.exit_code == 2 and "--plain" in result.output
    result = CliRunner().invoke(main, ["demo", "--exit-at-end", "--plain"])
    assert result.exit_code == 2 and "applies to a story" in result.output


def test_compaction_keeps_the_screen(tmp_path: Path) -> None:
    """Sequences cut between events, a cell per SGR, a wide character, a rewrite of the same text: the
    compacted cast draws the same cells, in fewer bytes, and stops where the app left the screen."""
    red, reset = "\x1b[38;2;255;0;0;48;2;0;0;2m", "\x1b[0m"
    frames = [
        "\x1b[?1049h\x1b[1;1H" + "".join(f"{red}{c}{reset}" for c in "ct129 ● ready"),
        "\x1b[2;3H\x1b[1mVERIFIED\x1b[0m 漢字\x1b[38;2;0;",
        "200;0mok\x1b[0m\x1b[1;1H" + "".join(f"{red}{c}{reset}" for c in "ct129 ● ready"),
        "\x1b[3;1Hbye\x1b[?1049lprinted after the app",
    ]
    raw = tmp_path / "raw.cast"
    header = {"version": 2, "width": 20, "height": 4}
    raw.write_text(
        "\n".join([json.dumps(header), *(json.dumps([i * 0.1, "o", f]) for i, f in enumerate(frames))])
    )
    out = tmp_path / "out.cast"
    compact(raw, out, frame_s=0.05)
    expected, replayed = Screen(20, 4), Screen(20, 4)
    for frame in frames:
        expected.feed(frame)
    lines = out.read_text().splitlines()
    for line in lines[1:]:
        replayed.feed(json.loads(line)[2])
    assert replayed.cells == expected.cells and expected.left_alternate
    text = ["".join(cell[0] for cell in row) for row in replayed.cells]
    assert (
        text[0].startswith("ct129 ● ready")
        and text[1].startswith("  VERIFIED 漢字ok")
        and text[2].startswith("bye")
    )
    assert out.stat().st_size < raw.stat().st_size and "printed after" not in out.read_text()
