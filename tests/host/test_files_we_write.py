"""Every file the console and the agent write is written so that someone who can write to the folder
cannot redirect it or read it: a link or a file planted at the temporary name the old code used (or at
the file itself) is never written through, and the file has its mode (0600 unless it is meant to be
read by others) from its first byte, whatever the umask."""

from __future__ import annotations

import json
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gdnconsole import safefile
from gdnconsole.config import writer as config_writer
from gdnconsole.host import agent, consolelog, jsonlines, seenfacts, simhome
from gdnconsole.host.state import HostFacts
from gdnconsole.ui import pickedtheme

SECRET = "--api-key sk-planted-test"


@pytest.fixture(autouse=True)
def _open_umask() -> Iterator[None]:
    """A permissive umask: a mode must come from our code, not from the user's umask."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Where a planted link points: it must stay as it is."""
    path = tmp_path / "victim"
    path.write_text("untouched\n")
    return path


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def plant(at: Path, victim: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(victim)


def facts() -> HostFacts:
    parsed = HostFacts.parse({"sglang": "0.5.11", "gpus": [{"index": 0, "compute_capability": "8.6"}]})
    assert parsed.sglang == "0.5.11"
    return parsed


# (what writes, the file it writes, the predictable temporary name the old code used)
Writer = tuple[Callable[[Path], object], Callable[[Path], Path], Callable[[Path], Path]]
WRITERS: dict[str, Writer] = {
    "the agent's pid file": (
        lambda d: agent.write_json_file(str(d / agent.PIDFILE_NAME), {"pid": 1, "argv": [SECRET]}),
        lambda d: d / agent.PIDFILE_NAME,
        lambda d: d / f"{agent.PIDFILE_NAME}.{os.getpid()}.tmp",
    ),
    "the flag form's command.sh": (
        lambda d: jsonlines.write_private(d / "ct129-command.sh", SECRET),
        lambda d: d / "ct129-command.sh",
        lambda d: d / f".ct129-command.sh.{os.getpid()}.tmp",
    ),
    "the facts a host said": (
        lambda d: seenfacts.remember("ct129", facts(), d),
        lambda d: d / "ct129.facts.json",
        lambda d: d / f"ct129.facts.json.{os.getpid()}.tmp",
    ),
    "a simulated host's settings": (
        lambda d: simhome.prepare_home(d, {"gpus": 2}),
        lambda d: d / "sim.json",
        lambda d: d / f".sim.json.{os.getpid()}",
    ),
}


@pytest.mark.parametrize("name", WRITERS)
def test_a_link_at_the_old_temporary_name_is_not_written_through(
    name: str, tmp_path: Path, victim: Path
) -> None:
    write, target, old_partial = WRITERS[name]
    folder = tmp_path / "folder"
    plant(old_partial(folder), victim)
    write(folder)
    assert victim.read_text() == "untouched\n"
    assert mode_of(target(folder)) == 0o600
    assert [p for p in folder.iterdir() if p.name.endswith(".tmp") and not p.is_symlink()] == []


def test_the_picked_theme_is_not_written_through_a_link(
    tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    plant(pickedtheme.path().with_suffix(".tmp"), victim)
    pickedtheme.remember("nord", over=None)
    assert victim.read_text() == "untouched\n"
    assert pickedtheme.remembered(None) == "nord" and mode_of(pickedtheme.path()) == 0o600


def test_the_hosts_file_writer_keeps_the_files_mode_from_its_first_byte(tmp_path: Path) -> None:
    path = tmp_path / "hosts.toml"
    config_writer.write_example(path)
    assert mode_of(path) == 0o600  # a new hosts file may name keys
    path.chmod(0o640)  # the user's choice: a profile saved into it keeps it
    profile = config_writer.example_config().hosts["demo"].profile
    assert profile is not None
    config_writer.save_profile(path, "demo", profile)
    assert mode_of(path) == 0o640


def test_a_new_journal_is_private_and_a_link_at_it_is_refused(tmp_path: Path, victim: Path) -> None:
    journal = tmp_path / "ct129.jsonl"
    jsonlines.append_json_line(journal, {"argv": [SECRET]})
    assert mode_of(journal) == 0o600
    linked = tmp_path / "ct130.jsonl"
    plant(linked, victim)
    with pytest.raises(OSError, match="symbolic link"):
        jsonlines.append_json_line(linked, {"argv": [SECRET]})
    assert victim.read_text() == "untouched\n"


def test_the_console_log_is_private_and_never_written_through_a_link(
    tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "logs" / "console.log"
    monkeypatch.setenv(consolelog.LOG_ENV, str(log))
    consolelog.record_bug("a test", RuntimeError(SECRET))
    assert mode_of(log) == 0o600 and SECRET in log.read_text()
    log.unlink()
    plant(log, victim)
    said = consolelog.record_bug("a test", RuntimeError(SECRET))
    assert "not logged" in said and victim.read_text() == "untouched\n"


def test_the_launch_lock_is_never_taken_through_a_link(tmp_path: Path, victim: Path) -> None:
    lock = tmp_path / agent.LOCK_NAME
    plant(lock, tmp_path / "nowhere")  # a dangling link: O_EXCL refuses it, and it reads as stale
    agent.take_lock(str(lock), "test")
    assert not lock.is_symlink() and json.loads(lock.read_text())["owner"] == "test"
    assert not (tmp_path / "nowhere").exists()


def test_safefile_replaces_a_link_at_the_target_itself(tmp_path: Path, victim: Path) -> None:
    target = tmp_path / "out.md"
    plant(target, victim)
    safefile.write_text(target, SECRET)
    assert victim.read_text() == "untouched\n"
    assert not target.is_symlink() and target.read_text() == SECRET and mode_of(target) == 0o600


def test_safefile_says_when_random_names_keep_existing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sixteen random names all taken can only be someone planting them: an error, not a loop."""
    monkeypatch.setattr(secrets, "token_hex", lambda n: "0" * (2 * n))
    (tmp_path / f".out.{'0' * 16}.tmp").write_text("planted")
    with pytest.raises(FileExistsError, match="random temporary names"):
        safefile.write_text(tmp_path / "out", "x")
    assert not (tmp_path / "out").exists()
