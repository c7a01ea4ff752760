"""The session's one parse of a host's log: the mirror it writes is the document the dashboard pages
through, and its tracker is the one the status bar, the alerts and `status --json` read. A real local
agent on a simulated host; waits are on the session's own changes."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.host import simulated
from gdnconsole.host.session import HostSession, LogState
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

        relaunch = startup(9, crash=False)[:6]
        log.write_text(text(relaunch))  # `> log`: the same file, shorter (the agent says log_reset)
        assert await session.wait_until(
            lambda: session.log.resets == 1 and session.log.lines == len(relaunch), 20
        )
        assert doc.generation > generation and doc.path.read_bytes() == log.read_bytes()
        assert doc.index.line_count == len(relaunch) and doc.first_error() is None
        assert len(session.log.tracker.startups) == 1 and doc.tracker is session.log.tracker


def test_without_a_mirror_only_the_parse_is_kept() -> None:
    """`status` and the other headless commands: the tracker, and no file."""
    log = LogState.create("sglang_serve.log", None)
    log.append(text(ct129_lines()).encode())
    assert log.doc is None and log.mirror is None and not log.meaning.per_line  # no line is read back
    assert log.lines == len(ct129_lines()) and len(log.tracker.startups) == 2
    current = log.tracker.current
    assert current is not None and current.fatal is not None
    log.restart(None)
    assert log.lines == 0 and log.tracker.startups == [] and log.resets == 1


async def test_every_line_reaches_the_console_once_and_in_order_through_both_rotations(
    tmp_path: Path,
) -> None:
    """logrotate's copytruncate (followed, within one poll, by more than the old file held) and its
    rename + create (the server writing on to the renamed file): no line is lost and none is read twice;
    the mirror says how the log restarted."""
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
        assert await session.wait_until(lambda: len(seen) >= 40, 20)
        doc = session.log.doc
        assert doc is not None and doc.restart_reasons[doc.generation] == "truncated"

        with log.open("ab") as server:
            log.rename(log.with_name(log.name + ".1"))
            log.write_bytes(b"")
            server.write(text([f"line {i}" for i in range(40, 50)]).encode())
            server.flush()
            assert await session.wait_until(lambda: len(seen) >= 50, 20)
        log.write_text(text([f"line {i}" for i in range(50, 55)]))
        assert await session.wait_until(lambda: len(seen) >= 55, 20)
        assert doc.restart_reasons[doc.generation] == "replaced"
        assert doc.path.read_text() == text([f"line {i}" for i in range(50, 55)])
    assert seen == [f"line {i}" for i in range(55)]
