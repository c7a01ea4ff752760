"""`gdnconsole config …` and `gdnconsole hosts`, run as a user would: the installed console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

GDNCONSOLE = shutil.which("gdnconsole") or str(Path(__file__).resolve().parents[2] / ".venv/bin/gdnconsole")


def run(args: list[str], config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GDNCONSOLE_CONFIG": str(config)}
    return subprocess.run([GDNCONSOLE, *args], env=env, capture_output=True, text=True, timeout=60)


def test_config_init_path_and_hosts(tmp_path: Path) -> None:
    config = tmp_path / "conf" / "hosts.toml"
    assert run(["config", "path"], config).stdout.strip() == str(config)
    listed = run(["hosts"], config)
    assert listed.returncode == 0 and "config init" in listed.stdout
    init = run(["config", "init"], config)
    assert init.returncode == 0 and config.exists()
    again = run(["config", "init"], config)
    assert again.returncode == 2 and "already exists" in again.stderr and "Traceback" not in again.stderr
    hosts = run(["hosts"], config)
    assert hosts.returncode == 0
    assert "ct129  (ssh root@ct129)" in hosts.stdout
    assert (
        "* qwen36-mtp: Qwen/Qwen3.6-27B, tp 2, port 30000, NEXTN (steps 1, topk 1, draft 2)" in hosts.stdout
    )
    assert "demo  (local, simulated 2x NVIDIA RTX A6000, SGLang 0.5.11)" in hosts.stdout
    payload = json.loads(run(["hosts", "--json"], config).stdout)
    assert [h["name"] for h in payload["hosts"]] == ["ct129", "demo"]
    assert payload["hosts"][0]["profiles"]["qwen36-mtp"]["speculative"]["num_steps"] == 1
    assert run(["config", "check"], config).stdout.endswith("ok, 2 hosts, 2 profiles\n")


@pytest.mark.parametrize("command", [["hosts"], ["config", "check"], ["demo"]])
def test_malformed_file_is_one_line_and_exit_2(tmp_path: Path, command: list[str]) -> None:
    config = tmp_path / "hosts.toml"
    config.write_text('[hosts.a]\nssh = "x"\n[hosts.a.profiles.p]\nmodel = "m"\ntp = "two"\n')
    result = run(command, config)
    assert result.returncode == 2
    assert result.stderr == (
        f"gdnconsole: error: {config}:5: hosts.a.profiles.p.tp: "
        'expected an integer ≥ 1 (tensor-parallel ranks, at most 1024), found "two"\n'
    )
    assert result.stdout == ""


def test_an_unknown_configured_theme_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "hosts.toml"
    config.write_text('[console]\ntheme = "solarized"\n\n[hosts.a]\nlocal = true\n')
    result = run(["config", "check"], config)
    assert result.returncode == 2
    assert result.stderr == (
        f"gdnconsole: error: {config}:2: console.theme: "
        "no theme 'solarized' (available: gdn-dark, gdn-high-contrast, gdn-light)\n"
    )


def test_theme_option_lists_the_users_themes_and_exits_2_before_anything_starts(tmp_path: Path) -> None:
    config = tmp_path / "hosts.toml"
    (tmp_path / "themes").mkdir()
    (tmp_path / "themes" / "mine.toml").write_text("not parsed to be listed\n")
    for args in (["ct129", "--theme", "nope"], ["demo", "--theme", "nope"]):
        result = run(args, config)
        assert result.returncode == 2, args
        assert result.stderr == (
            "gdnconsole: error: no theme 'nope' (available: gdn-dark, gdn-high-contrast, gdn-light, mine)\n"
        )
        assert result.stdout == ""  # the demo server was not started


def test_config_check_names_a_bad_key_binding(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gdnconsole.cli.main import main

    path = tmp_path / "hosts.toml"
    path.write_text('[hosts.a]\nlocal = true\n\n[keys]\n"dash.promt" = "P"\n')
    result = CliRunner().invoke(main, ["config", "check"], env={"GDNCONSOLE_CONFIG": str(path)})
    assert result.exit_code == 2
    assert f"{path}:5: keys.\"dash.promt\": unknown binding id (did you mean 'dash.prompt'?)" in result.output


def test_hosts_never_prints_a_secret_or_an_escape(tmp_path: Path) -> None:
    """API keys in args and tokens in env are masked in hosts --json; a bidi override in a model shows as
    its escape (a name holding one, or an ESC, is refused: tests/config/test_names.py)."""
    config = tmp_path / "hosts.toml"
    config.write_text(
        '[hosts.box]\nssh = "root@box"\n'
        '[hosts.box.profiles.p]\nmodel = "m\\u202ex"\n'
        'args = ["--api-key", "sk-live-123", "--admin-api-key=adm-456"]\n'
        'env = { HF_TOKEN = "hf_secret", OPENAI_API_KEY = "sk-openai", SGLANG_X = "1" }\n'
    )
    shown = run(["hosts", "--json"], config)
    assert shown.returncode == 0, shown.stderr
    for secret in ("sk-live-123", "adm-456", "hf_secret", "sk-openai"):
        assert secret not in shown.stdout
    profile = next(iter(json.loads(shown.stdout)["hosts"][0]["profiles"].values()))
    assert profile["env"]["SGLANG_X"] == "1" and profile["env"]["HF_TOKEN"].startswith("<redacted:")
    plain = run(["hosts"], config)
    assert plain.returncode == 0 and "\u202e" not in plain.stdout
    assert "m\\u202ex" in plain.stdout


RULES_FILE = """\
[hosts.box]
local = true
simulate = { sglang = "0.5.11", gpus = 2 }

[hosts.box.profiles.final]
model = "Qwen/Qwen3.6-27B"
tp = 2
args = ["--mamba-scheduler-strategy", "extra_buffer"]
speculative = { algorithm = "NEXTN", num_steps = 1, eagle_topk = 1, num_draft_tokens = 2 }

[hosts.box.profiles.topk-only]
model = "Qwen/Qwen3.6-27B"
tp = 2
args = ["--dp", "4", "--enable-dp-attention"]
speculative = { algorithm = "NEXTN", eagle_topk = 1, num_draft_tokens = 2 }

[hosts.far]
ssh = "root@far"

[hosts.far.profiles.p]
model = "Qwen/Qwen3-8B"
"""


def test_config_check_runs_the_rules_on_every_profile(tmp_path: Path) -> None:
    config = tmp_path / "hosts.toml"
    config.write_text(RULES_FILE)
    result = run(["config", "check"], config)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert "hosts.box.profiles.final: SGLang 0.5.11 (configured in simulate; rule set 0.5.11): ok" in lines
    assert "hosts.box.profiles.topk-only: SGLang 0.5.11 (configured in simulate; rule set 0.5.11): would fail (3 errors)" in lines  # fmt: skip
    errors = [line for line in lines if " error [" in line]
    assert errors[0].startswith(
        f"{config}:11: hosts.box.profiles.topk-only: error [mamba.speculative_needs_extra_buffer] "
        "(SGLang stops here first)"
    )  # the mamba rule concerns a flag the profile does not set: the profile's table
    assert errors[1].startswith(
        f"{config}:14: hosts.box.profiles.topk-only.args: error [parallel.tp_not_divisible_by_dp]"
    )
    assert errors[2].startswith(f"{config}:15: hosts.box.profiles.topk-only.speculative.eagle_topk: error [spec.topk_without_steps]")  # fmt: skip
    assert any(
        line.startswith("hosts.far: rules not run: its SGLang version is not known here") for line in lines
    )
    assert lines[-1] == f"{config}: SGLang would reject 1 of 2 checked profiles"


def test_config_check_with_a_given_version(tmp_path: Path) -> None:
    config = tmp_path / "hosts.toml"
    config.write_text(RULES_FILE)
    result = run(["config", "check", "--sglang", "0.5.23"], config)
    assert result.returncode == 1
    assert "hosts.far.profiles.p: SGLang 0.5.23 (given with --sglang; rule set 0.5.23): ok" in result.stdout
    assert (
        "did you mean" not in result.stdout and "write --mamba-radix-cache-strategy instead" in result.stdout
    )
    bad = run(["config", "check", "--sglang", "latest"], config)
    assert bad.returncode == 2 and "'latest' is not an SGLang version" in bad.stderr and bad.stdout == ""
    alone = run(["config", "check", "--gpus", "2"], config)
    assert alone.returncode == 2 and "go with --sglang" in alone.stderr


def test_config_check_uses_what_a_host_said_of_itself_when_last_reached(tmp_path: Path) -> None:
    """A real host's profiles are checked for the SGLang version and GPUs it reported the last time a
    console reached it (kept beside the journal), and the output says when that was."""
    from gdnconsole.host import seenfacts
    from gdnconsole.host.state import HostFacts

    config = tmp_path / "hosts.toml"
    config.write_text(RULES_FILE)
    seenfacts.remember("far", HostFacts("0.5.23", "9.0", 8, 143771))
    result = run(["config", "check"], config)
    far = [line for line in result.stdout.splitlines() if line.startswith("hosts.far.profiles.p: ")]
    assert len(far) == 1 and "SGLang 0.5.23 (as the host said at " in far[0] and "rule set 0.5.23" in far[0]
    assert "rules not run" not in result.stdout
