"""One profile, one host's facts, one verdict (issue 27): the launcher (and its relaunch pre-check), `tune`'s
plan (a combination laid over the profile), the flag form and `config check` all reach the same check, so
they reject the same profiles at the same first rule, with the model's config.json counted where the host
showed it, and the model being the last --model-path of the argv."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from gdnconsole.cli.configcheck import Facts, rule_report
from gdnconsole.config import hosts as config_hosts
from gdnconsole.config.hosts import Profile
from gdnconsole.host import launcher, profilecheck, seenmodels
from gdnconsole.host.modelconfig import ModelConfig
from gdnconsole.host.session import HostSession
from gdnconsole.sglang.launch import launch_spec
from gdnconsole.sglang.profilerules import check_profile, model_of
from gdnconsole.tune import plan
from gdnconsole.tune.grid import Combo
from gdnconsole.ui.screens.flagform import FlagFormScreen
from gdnconsole.ui.screens.launchcontrol import LaunchControl
from tests.ui.dashboard_helpers import hello

HOST = "box"
QWEN3_8B = {"architectures": ["Qwen3ForCausalLM"], "max_position_embeddings": 40960}

HOSTS = """\
[hosts.box]
local = true

[hosts.box.profiles.dense]
model = "Qwen/Qwen3-8B"

[hosts.box.profiles.many]
model = "Qwen/Qwen3.6-27B"
tp = 3
args = ["--dp-size", "2", "--enable-dp-attention"]
speculative = { algorithm = "NEXTN", eagle_topk = 4 }

[hosts.box.profiles.long]
model = "Qwen/Qwen3-8B"
args = ["--context-length", "65536"]

[hosts.box.profiles.override]
model = "Qwen/Qwen3-8B"
args = ["--model-path", "Qwen/Qwen3.6-27B"]
speculative = { algorithm = "NEXTN" }

[hosts.box.profiles.hybrid]
model = "Qwen/Qwen3.6-27B"
tp = 2
args = ["--mamba-scheduler-strategy", "extra_buffer"]
env = { SGLANG_ENABLE_SPEC_V2 = "1" }
speculative = { algorithm = "NEXTN" }

[hosts.box.profiles.hybrid-s1k1d2]
model = "Qwen/Qwen3.6-27B"
tp = 2
args = ["--mamba-scheduler-strategy", "extra_buffer"]
env = { SGLANG_ENABLE_SPEC_V2 = "1" }
speculative = { algorithm = "NEXTN", num_steps = 1, eagle_topk = 1, num_draft_tokens = 2 }

[hosts.box.profiles.hybrid-s2k2d300]
model = "Qwen/Qwen3.6-27B"
tp = 2
args = ["--mamba-scheduler-strategy", "extra_buffer"]
env = { SGLANG_ENABLE_SPEC_V2 = "1" }
speculative = { algorithm = "NEXTN", num_steps = 2, eagle_topk = 2, num_draft_tokens = 300 }
"""
OVERLAYS = {"hybrid-s1k1d2": Combo(1, 1, 2), "hybrid-s2k2d300": Combo(2, 2, 300)}  # over "hybrid"
MORE = re.compile(r" \(and (\d+) more once that is fixed: ([^;]+);")


@pytest.fixture(autouse=True)
def _kept_here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(seenmodels, "default_dir", lambda: tmp_path / "state")


def session_for(tmp_path: Path, sglang: str | None) -> HostSession:
    """The host as a console that reached it holds it: its facts come from its hello."""
    config = tmp_path / "hosts.toml"
    config.write_text(HOSTS, encoding="utf-8")
    session = HostSession(config_hosts.load(config).hosts[HOST], mirror=tmp_path / "mirror.log")
    message = hello(HOST)
    message["sglang"] = sglang
    for gpu in message["gpus"]:
        gpu["compute_capability"] = "8.6"
    session.handle(message)
    return session


def by_launcher(session: HostSession, profile: Profile) -> list[str]:
    """Every error id, in order, as the launcher's rule break says them (the first, then the rest)."""
    spec = launch_spec(profile, session.host.python)
    kept = profilecheck.kept_model_config(HOST, model_of(spec.args))
    rule = launcher.check_rules(session, spec, kept.config if kept is not None else None)
    if rule is None:
        return []
    more = MORE.search(rule.message)
    rest = more.group(2).split(", ") if more else []
    assert not more or int(more.group(1)) == len(rest)
    return [rule.id, *rest]


def by_relaunch_precheck(session: HostSession, profile: Profile) -> bool:
    control = SimpleNamespace(sessions=[session])  # what the pre-check reads of the launch control
    return LaunchControl._rejected(control, 0, profile)  # type: ignore[arg-type]


def by_form(session: HostSession, profile: Profile) -> list[str]:
    """The flag form's verdict, its model's config.json read as the host holds it."""
    form = FlagFormScreen(session, profile, config_path=None)
    kept = seenmodels.recall(HOST, model_of(launch_spec(profile).args))
    form.model_configs[model_of(launch_spec(profile).args)] = ModelConfig(kept.config if kept else None)
    result = form._check(profile)
    assert result is not None
    return [e.id for e in result.errors]


def by_config_check(session: HostSession, path: Path, name: str) -> list[str]:
    """`config check`'s error ids for the profile, in the order it prints them, on the same facts."""
    cfg = config_hosts.load(path)
    lines, _, _ = rule_report(cfg, Facts(session.facts, "as the session holds them"))
    mine = re.compile(rf"hosts\.{HOST}\.profiles\.{re.escape(name)}[.:]")
    return [
        m.group(1)
        for line in lines
        if mine.search(line)
        for m in [re.search(r" error \[([^]]+)\]", line)]
        if m
    ]


def by_tune(session: HostSession, profile: Profile, combo: Combo | None) -> str | None:
    kept = profilecheck.kept_model_config(HOST, model_of(launch_spec(profile).args))
    planned = plan.check(session.facts, profile, combo, session.host.python, kept.config if kept else None)
    return planned.rule.id if planned.rule is not None else None


EXPECTED = {  # first error, as SGLang 0.5.11 raises it on two SM 8.6 GPUs of 48 GiB
    "dense": None,
    "many": "mamba.speculative_needs_extra_buffer",  # and two more
    "long": "model.context_length_above_model",  # only with the model's config.json
    "override": "mamba.speculative_needs_extra_buffer",  # the model of the args: hybrid, not Qwen3-8B
    "hybrid": None,  # and tune's overlays of it:
    "hybrid-s1k1d2": None,
    "hybrid-s2k2d300": "mamba.track_interval_below_draft_tokens",  # 300 draft tokens: above 256
}


def test_the_four_callers_give_one_verdict(tmp_path: Path) -> None:
    session = session_for(tmp_path, "0.5.11")
    seenmodels.remember(HOST, "Qwen/Qwen3-8B", QWEN3_8B)
    profiles = config_hosts.load(tmp_path / "hosts.toml").hosts[HOST].profiles
    for name, profile in profiles.items():
        ids = by_form(session, profile)
        assert by_config_check(session, tmp_path / "hosts.toml", name) == ids, name
        assert by_launcher(session, profile) == ids, name
        assert by_relaunch_precheck(session, profile) is bool(ids), name
        if not profile.speculative.algorithm:  # tune's baseline is the profile without speculative flags
            assert by_tune(session, profile, None) == (ids[0] if ids else None), name
        assert (ids[0] if ids else None) == EXPECTED[name], (name, ids)


def test_tunes_overlay_is_checked_as_the_profile_it_launches(tmp_path: Path) -> None:
    session = session_for(tmp_path, "0.5.11")
    profiles = config_hosts.load(tmp_path / "hosts.toml").hosts[HOST].profiles
    for name, combo in OVERLAYS.items():
        launched = plan.combo_profile(profiles["hybrid"], combo)
        assert dataclasses.replace(launched, name=name) == profiles[name]  # the file holds the overlay
        ids = by_form(session, launched)
        assert by_tune(session, profiles["hybrid"], combo) == (ids[0] if ids else None) == EXPECTED[name]
        assert (
            by_launcher(session, launched) == ids == by_config_check(session, tmp_path / "hosts.toml", name)
        )


def test_a_host_without_a_known_sglang(tmp_path: Path) -> None:
    """No verdict to give: the launcher refuses (nothing to check against), tune plans every combination
    (the launch will tell), the form shows none."""
    session = session_for(tmp_path, None)
    bare = session.facts
    assert bare.sglang is None and bare.gpus == 2
    dense = config_hosts.load(tmp_path / "hosts.toml").hosts[HOST].profiles["dense"]
    assert FlagFormScreen(session, dense, config_path=None)._check(dense) is None
    assert launcher.check_rules(session, launch_spec(dense, session.host.python)) is not None
    assert check_profile(dense, bare) is None
    rule = profilecheck.check_rules(bare, launch_spec(dense, "python3.11"))
    assert rule is not None and rule.id == "no-sglang" and "for python3.11 " in rule.message
    assert plan.check(bare, dense, Combo(1, 1, 2)).rule is None
