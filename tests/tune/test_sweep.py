"""The sweep engine on a real simulated host (a local agent, the simulated SGLang on loopback): rejected
combinations are never launched, a crashing one is recorded and the sweep goes on, and the figures it
measures agree with the simulator's performance model within its noise."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gdnconsole.host import simulated
from gdnconsole.tune import prompts, report
from gdnconsole.tune.grid import Combo, parse_grid
from gdnconsole.tune.measure import Load
from gdnconsole.tune.store import TuneStore
from gdnconsole.tune.sweep import Options, Sweep, identity_of, run
from tests.host.launchkit import alive, connected, journal_for, launch_host, set_scenario
from tests.host.test_launch_relaunch import sim_env, spawned, start_hold
from tests.simmodules import import_sim

specperf = import_sim("gdnsim.server.specperf")
__all__ = ["spawned"]  # the fixture: processes a test starts itself, killed by their group at the end
FAST = {"tokens_per_s": 200.0}


def load(batches: tuple[int, ...] = (1,), requests: int = 4) -> Load:
    return Load(prompts.load("chat"), batches, requests, max_tokens=64)


async def sweep_on(tmp_path: Path, grid: str, batches: tuple[int, ...] = (1,), requests: int = 4, say=None):  # type: ignore[no-untyped-def]
    host = launch_host(tmp_path, **FAST)
    journal = journal_for(tmp_path, host)
    options = Options(tuple(parse_grid(grid)), load(batches, requests), timeout=60.0)
    lines: list[str] = []
    async with connected(host) as session:
        done = await run(
            session,
            host.profiles["final"],
            options,
            store=TuneStore(host.name, tmp_path / "journal"),
            journal=journal,
            say=say or lines.append,
        )
        assert not session.launched_alive  # the sweep stops its own server at the end
    return host, journal, done, lines


async def test_a_rejected_combination_is_listed_with_its_rule_and_never_launched(tmp_path: Path) -> None:
    _host, journal, done, _ = await sweep_on(tmp_path, "num_steps=2 eagle_topk=2 num_draft_tokens=4,300")
    rejected = next(r for r in done.combos if r.combo == Combo(2, 2, 300))
    assert rejected.status == "rejected" and rejected.rule is not None
    assert rejected.rule[0] == "mamba.track_interval_below_draft_tokens" and rejected.attempt is None
    assert not any("300" in attempt.argv for attempt in journal.attempts())
    accepted = next(r for r in done.combos if r.combo == Combo(2, 2, 4))
    assert accepted.status == "measured" and accepted.by_batch[1].n == 4
    assert done.baseline is not None and done.baseline.status == "measured"
    payload = done.to_json()
    assert set(payload) >= {
        "host",
        "sglang",
        "model",
        "gpus",
        "prompts",
        "batches",
        "baseline",
        "results",
        "best",
    }
    assert payload["baseline"]["combo"] is None and payload["best"]["combo"] == Combo(2, 2, 4).to_json()


async def test_a_crashing_combination_is_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    host = launch_host(tmp_path, **FAST)

    def say(line: str) -> None:  # the simulator crashes the server launched for s2 only
        if line.startswith("["):
            set_scenario(host, **FAST, scenario="oom-graph" if "s2 k1 d3" in line else "ok")

    journal = journal_for(tmp_path, host)
    options = Options(
        tuple(parse_grid("num_steps=1,2,3 eagle_topk=1 num_draft_tokens=3")), load(), timeout=60.0
    )
    async with connected(host) as session:
        done = await run(
            session, host.profiles["final"], options,
            store=TuneStore(host.name, tmp_path / "journal"), journal=journal, say=say,
        )  # fmt: skip
    statuses = {r.label: r.status for r in done.results}
    assert statuses == {
        "baseline": "measured",
        "s1 k1 d3": "measured",
        "s2 k1 d3": "crashed",
        "s3 k1 d3": "measured",
    }
    crashed = next(r for r in done.combos if r.status == "crashed")
    assert crashed.fatal and "out of memory" in crashed.fatal.lower() and not crashed.by_batch
    assert "crashed" in report.text_table(done) and "s3 k1 d3" in "\n".join(report.chart_lines(done))


async def test_measured_figures_follow_the_simulators_model(tmp_path: Path) -> None:
    _host, _journal, done, _ = await sweep_on(
        tmp_path, "num_steps=1,2 eagle_topk=1 num_draft_tokens=3", requests=8
    )
    for result in done.results:
        c = result.combo
        spec = specperf.Spec(c.num_steps, 1, c.num_steps + 1) if c else None  # SGLang's adjustment, topk 1
        model = specperf.SpecPerf(spec, FAST["tokens_per_s"])
        figures = result.by_batch[1]
        assert figures.request_tokens_per_s is not None and figures.n == 8
        want = model.expected_tokens_per_s(1)
        assert abs(figures.request_tokens_per_s - want) / want < 0.2, (result.label, figures, want)
        if c is not None:
            assert figures.accept_length is not None
            assert abs(figures.accept_length - model.expected_accept_length()) < 0.3, (result.label, figures)
    # the speed-up is over the baseline at the same batch size, and speculation pays at batch 1
    assert all((r.by_batch[1].speedup or 0) > 1.1 for r in done.combos)


async def test_resume_keeps_what_was_measured(tmp_path: Path) -> None:
    host, journal, first, _ = await sweep_on(tmp_path, "num_steps=1 eagle_topk=1 num_draft_tokens=2")
    launched = len(journal.attempts())
    options = Options(tuple(parse_grid("num_steps=1,2 eagle_topk=1 num_draft_tokens=3")), load(), resume=True)
    lines: list[str] = []
    async with connected(host) as session:
        again = await run(
            session, host.profiles["final"], options,
            store=TuneStore(host.name, tmp_path / "journal"), journal=journal, say=lines.append,
        )  # fmt: skip
    assert [r.resumed for r in again.results] == [True, False, False]  # the baseline only: other combos
    assert len(journal.attempts()) == launched + 2
    kept, measured = again.results[0].by_batch[1], first.results[0].by_batch[1]
    assert kept.tokens_per_s == pytest.approx(measured.tokens_per_s, abs=0.05)
    assert any("measured before (--resume)" in line for line in lines)


async def test_cancelled_as_a_combination_launches_no_server_is_left(tmp_path: Path) -> None:
    host = launch_host(tmp_path, **FAST)
    options = Options(tuple(parse_grid("num_steps=1 eagle_topk=1 num_draft_tokens=2")), load())
    store = TuneStore(host.name, tmp_path / "journal")
    async with connected(host) as session:
        task: asyncio.Task[Sweep] | None = None
        launches = 0

        def say(line: str) -> None:  # the second launch (the combination) is on its way to the agent
            nonlocal launches
            launches += line == "starting the server"
            if launches == 2 and task is not None:
                task.cancel()

        held = Sweep(identity_of(session, host.profiles["final"], options.load), options.load.batches)
        task = asyncio.create_task(
            run(session, host.profiles["final"], options, store=store, journal=journal_for(tmp_path, host),
                say=say, sweep=held)
        )  # fmt: skip
        with pytest.raises(asyncio.CancelledError):
            await task
        record = session.launched
        assert held.interrupted and [r.label for r in held.results] == ["baseline"]
        assert record is not None and record.pid != held.results[0].attempt  # the combination's server
        assert not session.launched_alive and not alive(record.pid)


async def test_a_host_that_refuses_launches_stops_the_sweep_at_once(tmp_path: Path, spawned) -> None:  # type: ignore[no-untyped-def]
    host = launch_host(tmp_path, **FAST)
    leftover = start_hold(spawned, sim_env(host), "--gpu", "1", "--mib", "40000")  # not ours: never touched
    lines: list[str] = []
    options = Options(tuple(parse_grid("num_steps=1,2 eagle_topk=1 num_draft_tokens=3")), load())
    async with connected(host) as session:
        assert await session.wait_until(
            lambda: any(p.pid == leftover.pid for g in session.gpus for p in g.processes), 10
        )
        done = await run(
            session, host.profiles["final"], options,
            store=TuneStore(host.name, tmp_path / "journal"), journal=journal_for(tmp_path, host), say=lines.append,
        )  # fmt: skip
    assert [r.status for r in done.results] == ["crashed"]  # the baseline, refused; no other launch tried
    assert done.results[0].fatal and f"pid {leftover.pid}" in done.results[0].fatal
    assert any(line.startswith("the sweep stops: ") for line in lines) and alive(leftover.pid)


async def test_combinations_sglang_runs_identically_are_launched_once(tmp_path: Path) -> None:
    _host, journal, done, lines = await sweep_on(tmp_path, "num_steps=2 eagle_topk=1 num_draft_tokens=2,3")
    assert len(journal.attempts()) == 2  # the baseline and s2 k1 d3: s2 k1 d2 is the same server
    lead = next(r for r in done.combos if r.combo == Combo(2, 1, 3))
    same = next(r for r in done.combos if r.combo == Combo(2, 1, 2))
    assert lead.status == same.status == "measured" and lead.same_as is None and same.same_as == lead.combo
    assert same.by_batch[1].tokens_per_s == lead.by_batch[1].tokens_per_s and same.attempt == lead.attempt
    assert "same as s2 k1 d3 (SGLang's adjustment)" in report.text_table(done)
    assert any("s2 k1 d2: same as s2 k1 d3 (SGLang's adjustment): not launched again" in x for x in lines)
    payload = {json_combo(r["combo"]): r for r in done.to_json()["results"]}
    assert len(payload) == 2 and payload["s2 k1 d2"]["same_as"] == Combo(2, 1, 3).to_json()
    assert payload["s2 k1 d2"]["by_batch"] == payload["s2 k1 d3"]["by_batch"]
    assert payload["s2 k1 d3"]["same_as"] is None and done.best is not None and done.best.combo == lead.combo
    # the journal's one entry for the sweep: its grid, its attempts (each once), its counts and best
    [entry] = TuneStore("simbox", tmp_path / "journal").entries()
    assert entry.attempts == tuple(a.number for a in journal.attempts()) and entry.profile == "final"
    assert entry.grid == "num_steps=2 eagle_topk=1 num_draft_tokens=2,3" and entry.batches == (1,)
    assert entry.counts_text == "2 measured" and entry.best.startswith("s2 k1 d3 at batch 1, ")
    # (the stored speed-up went through JSON: 1.555 may print 1.55 there and 1.56 here)
    assert float(entry.best.rsplit(" ", 1)[1].rstrip("×")) == pytest.approx(done.best.speedup, abs=0.006)


def json_combo(raw: dict[str, int]) -> str:
    combo = Combo.parse(raw)
    assert combo is not None
    return combo.label


async def test_gpu_memory_per_rank_is_taken_at_the_memory_pools_end(tmp_path: Path) -> None:
    host, _journal, done, _ = await sweep_on(tmp_path, "num_steps=1 eagle_topk=1 num_draft_tokens=2")
    log = (simulated.workdir(host) / host.log).read_text()  # the last server's: the combination's
    avail = {
        line.split("]")[0].split()[-1]: float(line.rsplit("avail mem=", 1)[1].split()[0])
        for line in log.splitlines()
        if "Memory pool end. avail mem=" in line
    }
    assert set(avail) == {"TP0", "TP1"}
    mib = done.combos[0].gpu_mib
    assert mib == {rank: 49140 - round(gb * 1024) for rank, gb in avail.items()}  # not after the graphs
    assert set(done.results[0].gpu_mib) == {"TP0", "TP1"}  # the baseline too
