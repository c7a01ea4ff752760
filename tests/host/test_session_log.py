"""The session's one parse of a host's log: the mirror it writes is the document the dashboard pages
through, and its tracker is the one the status bar, the alerts and `status --json` read. A real local
agent on a simulated host; waits are on the session's own changes."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.host import simulated
from gdnconsole.host.logstate import LogState
from gdnconsole.host.session import HostSession
from tests.host.test_session import FAST_BACKOFF, running, sim_host
from tests.ui.fixtures import ct129_lines, startup


def text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


async def test_one_parse_feeds_the_mirror_and_the_tracker_and_restarts_with_the_log(tmp_path: Path) -> None:
    host = sim_host(tmp_path)
    simulated.environment(host)
    log = simulated.workdir(host) / host.log
    log.write_text(text(ct129_lines()))
    session = HostSession(host, sample_interval=0.5, backoff=FAST_BACKOFF, mirror=tmp_path / "mirror.log")
    heard: list[str] = []
    session.subscribe(heard.append)
    async with running(session):
        assert await session.wait_until(lambda: session.log.seen and session.log.caught_up, 20)
        doc = session.log.doc
        assert doc is not None and doc.tracker is session.log.tracker  # one parse, not two
        assert doc.index.line_count == session.log.lines == len(ct129_lines())
        assert doc.path.read_bytes() == log.read_bytes()
        assert doc.first_error() == 75 and len(session.log.tracker.startups) == 2
        assert "log" in heard
        generation = doc.generation

        before = log.read_bytes()
        relaunch = startup(9, crash=False)[:6]
        log.write_text(text(relaunch))  # `> log` and a relaunch by hand (the agent says log_reset)
        lines = len(ct129_lines()) + 1 + len(relaunch)  # a line says where the file restarted
        assert await session.wait_until(lambda: session.log.lines == lines, 20)
        assert doc.generation == generation and session.log.resets == 0  # the story goes on
        said = f"gdnconsole: {host.log} was truncated (copytruncate, or `> log`); following it from its new start\n"
        assert doc.path.read_bytes() == before + said.encode() + log.read_bytes()
        assert doc.index.line_count == lines and doc.tracker is session.log.tracker
        tracker = session.log.tracker  # the relaunch is a startup of its own, found by its first lines
        assert len(tracker.startups) == 3 and tracker.current is not None and tracker.current.fatal is None


def test_without_a_mirror_only_the_parse_is_kept() -> None:
    """`status` and the other headless commands: the tracker, and no file."""
    log = LogState.create("sglang_serve.log", None)
    log.append(text(ct129_lines()).encode())
    assert log.doc is None and log.mirror is None and not log.meaning.per_line  # no line is read back
    assert log.lines == len(ct129_lines()) and len(log.tracker.startups) == 2
    current = log.tracker.current
    assert current is not None and current.fatal is not None
    log.restart(None, reason="truncated")  # someone else's rotation: the story goes on
    assert log.lines == len(ct129_lines()) + 1 and len(log.tracker.startups) == 2 and log.resets == 0
    log.restart(None, own=True)  # this console's launch: a new story
    assert log.lines == 0 and log.tracker.startups == [] and log.resets == 1


async def test_every_line_reaches_the_console_once_and_in_order_through_both_rotations(
    tmp_path: Path,
) -> None:
    """logrotate's copytruncate (followed, within one poll, by more than the old file held) and its
    rename + create (the server writing on to the renamed file): no line is lost and none is read twice;
    the mirror goes on, with a line where each restart happened."""
    host = sim_host(tmp_path)
    simulated.environment(host)
    log = simulated.workdir(host) / host.log
    log.write_text(text([f"line {i}" for i in range(14)]))
    session = HostSession(host, sample_interval=0.5, backoff=FAST_BACKOFF, mirror=tmp_path / "mirror.log")
    seen: list[str] = []  # every line as the session takes it in
    take = session.log.append

    def append(data: bytes) -> None:
        seen.extend(data.decode().splitlines())
        take(data)

    session.log.append = append  # type: ignore[method-assign]
    async with running(session):
        assert await session.wait_until(lambda: session.log.lines == 14, 20)
        with log.open("r+b") as fh:
            fh.truncate(0)
            fh.write(text([f"line {i}" for i in range(14, 40)]).encode())
        assert await session.wait_until(lambda: len(seen) >= 41, 20)

        with log.open("ab") as server:
            log.rename(log.with_name(log.name + ".1"))
            log.write_bytes(b"")
            server.write(text([f"line {i}" for i in range(40, 50)]).encode())
            server.flush()
            assert await session.wait_until(lambda: len(seen) >= 51, 20)
        log.write_text(text([f"line {i}" for i in range(50, 55)]))
        assert await session.wait_until(lambda: len(seen) >= 57, 20)
    said = [line for line in seen if line.startswith("gdnconsole: ")]
    assert [line for line in seen if line not in said] == [f"line {i}" for i in range(55)]
    assert seen.index(said[0]) == 14 and "was truncated" in said[0]  # where each restart happened
    assert seen.index(said[1]) == 51 and "was rotated or replaced" in said[1]
    assert session.log.doc is not None and session.log.doc.path.read_text() == text(seen)
