"""`gdnconsole launch --wait`: each stage as it is reached, on stderr, with the time since the launch;
`--json` stays one object on stdout."""

from __future__ import annotations

import asyncio
import json
import re
import time

from gdnconsole.cli.launch import PROGRESS_EVERY_S, StageNotes
from gdnconsole.host.journal import Attempt
from tests.host.test_launch_cli import cli_env, run

__all__ = ["cli_env"]  # the fixture, used by name

STAGE_LINE = re.compile(r"^-- (?P<stage>[a-z_]+) \((?P<took>\d+ ms|[0-9.]+ s|\d+m\d\ds)\)$")


def test_launch_says_each_stage_as_it_is_reached(cli_env: dict[str, str]) -> None:
    done = run(cli_env, "launch", "simbox", "--json", "--timeout", "60")
    try:
        assert done.returncode == 0, done.stderr
        payload = json.loads(done.stdout)
        assert done.stdout.count("\n") == 1  # one object, on one line
        said = [m["stage"] for line in done.stderr.splitlines() if (m := STAGE_LINE.match(line))]
        # The stages the JSON says the server went through, in order, as the human lines named them.
        assert said and said[-1] == payload["stage"] == "ready", done.stderr
        order = [*payload["durations"], payload["stage"]]
        assert said == sorted(set(said), key=order.index)  # once each, in the order they came
        assert {"loading", "graphs"} <= set(said), said
    finally:
        run(cli_env, "stop", "simbox")


def test_human_output_names_the_stage_as_json_does(cli_env: dict[str, str]) -> None:
    done = run(cli_env, "launch", "simbox", "--timeout", "60")
    try:
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("attempt 1: ready (stage ready)")
        assert any(STAGE_LINE.match(line) for line in done.stderr.splitlines()), done.stderr
    finally:
        run(cli_env, "stop", "simbox")


async def test_a_quiet_wait_says_it_still_waits() -> None:
    """No new stage for PROGRESS_EVERY_S (a long graph capture): the wait says so, and where it is."""
    said: list[str] = []
    heard = asyncio.Event()

    def say(message: str) -> None:
        said.append(message)
        heard.set()

    attempt = Attempt(number=1, time=time.time(), host="simbox", profile="p", argv=[], env={})
    notes = StageNotes(None, attempt, say)  # type: ignore[arg-type]  # the heartbeat reads no session
    notes.stage = "graphs"
    notes.said_at -= PROGRESS_EVERY_S  # the last note was that long ago
    heartbeat = asyncio.create_task(notes.keep_saying())
    try:
        await asyncio.wait_for(heard.wait(), 10)
    finally:
        heartbeat.cancel()
    assert re.fullmatch(r"still graphs \((\d+ ms|[0-9.]+ s)\)", said[0]), said
