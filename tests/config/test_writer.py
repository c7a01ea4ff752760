"""Writing the hosts file: the example, and saving an edited profile without losing what the user wrote."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gdnconsole.config import hosts as config_hosts
from gdnconsole.config import writer as config_writer
from gdnconsole.config.hosts import ConfigError, Speculative


@pytest.fixture
def hosts_file(tmp_path: Path) -> Path:
    path = tmp_path / "hosts.toml"
    config_writer.write_example(path)
    return path


def test_write_example_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text("# mine\n")
    with pytest.raises(FileExistsError):
        config_writer.write_example(path)
    assert path.read_text() == "# mine\n"
    backup = config_writer.write_example(path, force=True)
    assert backup is not None and backup.read_text() == "# mine\n"
    assert path.read_text() == config_writer.EXAMPLE


def test_editing_a_profile_keeps_comments_order_and_other_hosts(hosts_file: Path) -> None:
    before = hosts_file.read_text()
    profile = config_hosts.load(hosts_file).hosts["ct129"].profiles["qwen36-mtp"]
    edited = dataclasses.replace(
        profile,
        tp=4,
        speculative=dataclasses.replace(profile.speculative, num_steps=3, num_draft_tokens=4),
    )
    config_writer.save_profile(hosts_file, "ct129", edited)
    after = hosts_file.read_text()
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert changed == [
        ("tp = 2", "tp = 4"),
        ("num_steps = 1", "num_steps = 3"),
        ("num_draft_tokens = 2", "num_draft_tokens = 4"),
    ]
    assert config_hosts.load(hosts_file).hosts["ct129"].profiles["qwen36-mtp"] == edited


def test_unchanged_profile_saves_byte_for_byte(hosts_file: Path) -> None:
    before = hosts_file.read_text()
    for host in ("ct129", "demo"):
        profile = config_hosts.load(hosts_file).hosts[host].profiles["qwen36-mtp"]
        config_writer.save_profile(hosts_file, host, profile)
    assert hosts_file.read_text() == before


def test_added_and_removed_keys_in_tables_and_inline_tables(hosts_file: Path) -> None:
    cfg = config_hosts.load(hosts_file)
    ct = cfg.hosts["ct129"].profiles["qwen36-mtp"]
    config_writer.save_profile(hosts_file, "ct129", dataclasses.replace(ct, env={"NCCL_DEBUG": "INFO"}))
    demo = cfg.hosts["demo"].profiles["qwen36-mtp"]
    config_writer.save_profile(
        hosts_file, "demo", dataclasses.replace(demo, mem_fraction=0.8, speculative=Speculative(), args=())
    )
    text = hosts_file.read_text()
    # The new env var sits in its table, above the comment that introduces the next host.
    assert '[hosts.ct129.profiles.qwen36-mtp.env]\nNCCL_DEBUG = "INFO"\n\n# A simulated GPU box' in text
    assert "SGLANG_ENABLE_SPEC_V2" in text  # still in the demo host's inline env
    assert "# mem_fraction = 0.85" in text and "# draft_model" in text
    saved = config_hosts.load(hosts_file)
    assert saved.hosts["demo"].profiles["qwen36-mtp"].speculative == Speculative()
    assert saved.hosts["demo"].profiles["qwen36-mtp"].mem_fraction == 0.8
    assert saved.hosts["demo"].profiles["qwen36-mtp"].args == ()


def test_save_as_new_profile_goes_after_the_hosts_last_profile(hosts_file: Path) -> None:
    profile = config_hosts.load(hosts_file).hosts["ct129"].profiles["qwen36-mtp"]
    config_writer.save_profile(
        hosts_file, "ct129", dataclasses.replace(profile, name="no-spec", speculative=Speculative())
    )
    text = hosts_file.read_text()
    assert text.index("[hosts.ct129.profiles.no-spec]") < text.index("# A simulated GPU box")
    assert text.index("[hosts.ct129.profiles.no-spec]") > text.index("[hosts.ct129.profiles.qwen36-mtp.env]")
    cfg = config_hosts.load(hosts_file)
    assert list(cfg.hosts["ct129"].profiles) == ["qwen36-mtp", "no-spec"]
    new = cfg.hosts["ct129"].profiles["no-spec"]
    assert new == dataclasses.replace(profile, name="no-spec", speculative=Speculative())


def test_a_save_that_would_break_the_file_changes_nothing(hosts_file: Path) -> None:
    before = hosts_file.read_text()
    profile = config_hosts.load(hosts_file).hosts["ct129"].profiles["qwen36-mtp"]
    with pytest.raises(ConfigError):
        config_writer.save_profile(hosts_file, "ct129", dataclasses.replace(profile, tp=0))
    with pytest.raises(ConfigError, match="no such host"):
        config_writer.save_profile(hosts_file, "nope", profile)
    assert hosts_file.read_text() == before


def test_profile_in_a_host_without_profiles(tmp_path: Path) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text('# my box\n[hosts.box]\nssh = "me@box"  # the big one\n')
    profile = config_hosts.Profile(name="first", model="m", tp=2, env={"A": "1"})
    config_writer.save_profile(path, "box", profile)
    assert path.read_text().startswith('# my box\n[hosts.box]\nssh = "me@box"  # the big one\n')
    assert config_hosts.load(path).hosts["box"].profiles["first"] == profile


def test_a_copied_profile_keeps_its_verification_prompt(hosts_file: Path) -> None:
    profile = config_hosts.load(hosts_file).hosts["ct129"].profiles["qwen36-mtp"]
    verify = config_hosts.Verify(prompt="What is 2+2?", max_tokens=8)
    config_writer.save_profile(
        hosts_file, "ct129", dataclasses.replace(profile, name="checked", verify=verify)
    )
    saved = config_hosts.load(hosts_file).hosts["ct129"].profiles["checked"]
    assert saved.verify == verify
    table = hosts_file.read_text().split("[hosts.ct129.profiles.checked", 1)[1].split("\n[hosts.demo]")[0]
    assert "max_tokens = 8" in table and "timeout" not in table
