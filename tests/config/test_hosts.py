"""The hosts file: parsing, and one precise message for each way a file can be wrong."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from gdnconsole.config import hosts as config_hosts
from gdnconsole.config import writer as config_writer
from gdnconsole.config.hosts import ConfigError

GOOD = """\
[hosts.ct129]
ssh = "root@ct129:2222"
python = "/opt/py/bin/python3"
log = "/root/sglang_serve.log"

[hosts.ct129.profiles.mtp]
model = "Qwen/Qwen3.6-27B"
tp = 2
mem_fraction = 0.8
args = ["--mamba-scheduler-strategy", "extra_buffer"]
env = { SGLANG_ENABLE_SPEC_V2 = "1", NCCL_P2P_DISABLE = 1 }
speculative = { algorithm = "NEXTN", num_steps = 1, eagle_topk = 1, num_draft_tokens = 2 }

[hosts.alias-only]
ssh = "gpu-box"

[hosts.here]
local = true
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hosts.toml"
    path.write_text(textwrap.dedent(text))
    return path


def error_of(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        config_hosts.load(write(tmp_path, text))
    return info.value


def test_good_file_parses_every_field(tmp_path: Path) -> None:
    cfg = config_hosts.load(write(tmp_path, GOOD))
    ct = cfg.hosts["ct129"]
    assert ct.ssh is not None
    assert (ct.ssh.user, ct.ssh.hostname, ct.ssh.port) == ("root", "ct129", 2222)
    assert ct.python == "/opt/py/bin/python3" and not ct.local
    profile = ct.profiles["mtp"]
    assert profile.tp == 2 and profile.mem_fraction == 0.8 and profile.port == 30000
    assert profile.env == {"SGLANG_ENABLE_SPEC_V2": "1", "NCCL_P2P_DISABLE": "1"}
    assert profile.speculative.algorithm == "NEXTN" and profile.speculative.num_draft_tokens == 2
    assert profile.args == ("--mamba-scheduler-strategy", "extra_buffer")
    assert ct.profile == profile
    alias = cfg.hosts["alias-only"].ssh
    assert alias is not None and (alias.user, alias.hostname, alias.port) == (None, "gpu-box", None)
    assert cfg.hosts["here"].local


def test_missing_file_is_an_empty_config(tmp_path: Path) -> None:
    cfg = config_hosts.load(tmp_path / "none.toml")
    assert cfg.hosts == {} and not cfg.exists


def test_config_path_honours_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GDNCONSOLE_CONFIG", str(tmp_path / "x.toml"))
    assert config_hosts.config_path() == tmp_path / "x.toml"
    monkeypatch.delenv("GDNCONSOLE_CONFIG")
    assert config_hosts.config_path().parts[-2:] == ("gdnconsole", "hosts.toml")


def test_example_is_valid_and_shaped_like_ct129() -> None:
    cfg = config_writer.example_config()
    ct = cfg.hosts["ct129"]
    assert ct.ssh is not None and ct.ssh.user == "root"
    profile = ct.profile
    assert profile is not None and profile.tp == 2 and "Qwen3.6-27B" in profile.model
    assert profile.speculative.algorithm == "NEXTN" and profile.speculative.num_steps == 1
    demo = cfg.hosts["demo"]
    assert demo.simulate is not None and demo.simulate.gpus == 2 and demo.simulate.sglang == "0.5.11"
    assert demo.simulate.ffmpeg is False and demo.local


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ('[hosts.a]\nssh = "x"\nlocal = tru\n', 3, "invalid TOML"),
        ('[hosts.a\nssh = "x"\n', 1, "invalid TOML"),
        ('[hosts.a]\nssh = "unterminated\n', 2, "invalid TOML"),
        ('[hosts.a]\nssh = "x"\nssh = "y"\n', 3, "duplicate key"),
    ],
)
def test_toml_syntax_errors_name_the_line(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    err = error_of(tmp_path, text)
    assert err.line == line and fragment in str(err)
    if fragment == "duplicate key":
        assert err.key == "ssh"
    assert str(err).startswith(f"{tmp_path / 'hosts.toml'}:{line}:")


def test_duplicate_host_tables(tmp_path: Path) -> None:
    err = error_of(
        tmp_path, "[hosts.a]\nlocal = true\n\n[hosts.b]\nlocal = true\n\n[hosts.a]\nlocal = true\n"
    )
    assert err.line == 7 and err.key == "hosts.a" and "duplicate host" in str(err)


def test_duplicate_hosts_differing_in_case(tmp_path: Path) -> None:
    err = error_of(tmp_path, "[hosts.ct129]\nlocal = true\n[hosts.CT129]\nlocal = true\n")
    assert err.line == 3 and "differ only in case" in str(err)


@pytest.mark.parametrize(
    ("text", "line", "key", "hint"),
    [
        ('[hosts.a]\nssh = "x"\npyhton = "python3"\n', 3, "hosts.a.pyhton", "did you mean 'python'?"),
        (
            '[hosts.a]\nssh = "x"\n[hosts.a.profiles.p]\nmodel = "m"\nmem_fracton = 0.8\n',
            5,
            "hosts.a.profiles.p.mem_fracton",
            "did you mean 'mem_fraction'?",
        ),
        (
            '[hosts.a]\nssh = "x"\n[hosts.a.profiles.p]\nmodel = "m"\nspeculative = { num_step = 1 }\n',
            5,
            "hosts.a.profiles.p.speculative.num_step",
            "did you mean 'num_steps'?",
        ),
        (
            "[hosts.a]\nlocal = true\nsimulate = { gpu = 2 }\n",
            3,
            "hosts.a.simulate.gpu",
            "did you mean 'gpus'?",
        ),
        ("[host.a]\nlocal = true\n", 1, "host", "did you mean 'hosts'?"),
        ('[hosts.a]\nssh = "x"\n\nzzz = 1\n', 4, "hosts.a.zzz", "known keys: ssh, local"),
    ],
)
def test_unknown_keys_suggest_the_right_one(
    tmp_path: Path, text: str, line: int, key: str, hint: str
) -> None:
    err = error_of(tmp_path, text)
    assert (err.line, err.key) == (line, key)
    assert "unknown" in err.problem and err.hint is not None and hint in err.hint


@pytest.mark.parametrize(
    ("body", "key", "expected", "found"),
    [
        ('tp = "two"', "tp", "an integer ≥ 1", '"two"'),
        ("tp = 0", "tp", "an integer ≥ 1", "0"),
        ("tp = true", "tp", "an integer ≥ 1", "true"),
        ("mem_fraction = 1.5", "mem_fraction", "a number in (0, 1]", "1.5"),
        ('args = "--disable-radix-cache"', "args", "a list of strings", '"--disable-radix-cache"'),
        ("args = [1, 2]", "args", "a list of strings", "a list"),
        ("env = { A = true }", "env.A", "a string value", "true"),
        ("speculative = { num_steps = 1.5 }", "speculative.num_steps", "an integer ≥ 1", "1.5"),
        ("verify = { max_tokens = 0 }", "verify.max_tokens", "an integer from 1 to 4096", "0"),
        ('verify = { prompt = "  " }', "verify.prompt", "a non-empty string", '"  "'),
        ('verify = { timeout = "soon" }', "verify.timeout", "a number of seconds > 0", '"soon"'),
        ("port = 70000", "port", "an integer port from 1 to 65535", "70000"),
        ("port = 0", "port", "an integer port from 1 to 65535", "0"),
        ('port = "30000"', "port", "an integer port from 1 to 65535", '"30000"'),
    ],
)
def test_wrong_types_name_line_key_expected_and_found(
    tmp_path: Path, body: str, key: str, expected: str, found: str
) -> None:
    text = f'[hosts.a]\nssh = "x"\n\n[hosts.a.profiles.p]\nmodel = "m"\n{body}\n'
    err = error_of(tmp_path, text)
    assert err.line == 6
    assert err.key == f"hosts.a.profiles.p.{key}"
    assert f"expected {expected}" in err.problem and f"found {found}" in err.problem


def test_missing_required_model_points_at_the_profile_header(tmp_path: Path) -> None:
    err = error_of(tmp_path, '[hosts.a]\nssh = "x"\n\n[hosts.a.profiles.p]\ntp = 2\n')
    assert err.line == 4 and err.key == "hosts.a.profiles.p" and "missing required key 'model'" in str(err)


def test_host_without_a_transport(tmp_path: Path) -> None:
    err = error_of(tmp_path, '[hosts.a]\npython = "python3"\n')
    assert err.line == 1 and "missing how to reach the host" in str(err)


def test_host_with_two_transports(tmp_path: Path) -> None:
    err = error_of(tmp_path, '[hosts.a]\nssh = "x"\nlocal = true\n')
    assert err.line == 3 and "not both" in str(err)


@pytest.mark.parametrize(
    ("ssh", "fragment"),
    [
        ("root@ct129:99999", "port from 1 to 65535"),
        ("root@ct129:abc", "port from 1 to 65535"),
        ("root@", "user@host[:port]"),
        ("a b", "user@host[:port]"),
    ],
)
def test_bad_ssh_targets(tmp_path: Path, ssh: str, fragment: str) -> None:
    err = error_of(tmp_path, f'[hosts.a]\nssh = "{ssh}"\n')
    assert err.line == 2 and err.key == "hosts.a.ssh" and fragment in str(err)


def test_ipv6_ssh_target(tmp_path: Path) -> None:
    cfg = config_hosts.load(write(tmp_path, '[hosts.a]\nssh = "me@[::1]:2200"\n'))
    target = cfg.hosts["a"].ssh
    assert target is not None and (target.user, target.hostname, target.port) == ("me", "::1", 2200)


def test_bad_host_names(tmp_path: Path) -> None:
    err = error_of(tmp_path, '[hosts."bad name"]\nlocal = true\n')
    assert "host name" in str(err) and err.line == 1
    with pytest.raises(ConfigError) as info:  # the names come from the CLI's group (tests/cli)
        config_hosts.load(write(tmp_path, "[hosts.status]\nlocal = true\n"), reserved={"status"})
    assert "is a gdnconsole command" in str(info.value) and info.value.line == 1


def test_default_profile_must_exist(tmp_path: Path) -> None:
    err = error_of(
        tmp_path, '[hosts.a]\nssh = "x"\ndefault_profile = "mtpp"\n[hosts.a.profiles.mtp]\nmodel = "m"\n'
    )
    assert err.line == 3 and "did you mean 'mtp'?" in str(err)


def test_simulate_values_are_checked(tmp_path: Path) -> None:
    err = error_of(tmp_path, '[hosts.a]\nlocal = true\nsimulate = { scenario = "explode" }\n')
    assert err.line == 3 and err.key == "hosts.a.simulate.scenario" and '"crash-serving"' in str(err)
    err = error_of(tmp_path, "[hosts.a]\nlocal = true\nsimulate = { speed = 0 }\n")
    assert "a number > 0" in str(err)


def test_a_simulated_host_needs_no_transport(tmp_path: Path) -> None:
    cfg = config_hosts.load(write(tmp_path, "[hosts.sim]\nsimulate = { gpus = 4 }\n"))
    host = cfg.hosts["sim"]
    assert host.local and host.simulate is not None and host.simulate.gpus == 4
    assert host.simulate.table == {"gpus": 4}


def test_contradictory_flags_are_not_a_config_error(tmp_path: Path) -> None:
    # topk without num_steps crashes SGLang, but catching that is the flag checker's job.
    text = """\
    [hosts.a]
    ssh = "x"
    [hosts.a.profiles.p]
    model = "Qwen/Qwen3.6-27B"
    speculative = { algorithm = "NEXTN", eagle_topk = 1 }
    args = ["--disable-radix-cache", "--mamba-scheduler-strategy", "extra_buffer"]
    """
    profile = config_hosts.load(write(tmp_path, text)).hosts["a"].profiles["p"]
    assert profile.speculative.eagle_topk == 1 and profile.speculative.num_steps is None


def test_verify_table_sets_the_verification_prompt(tmp_path: Path) -> None:
    text = """
    [hosts.a]
    ssh = "x"
    [hosts.a.profiles.p]
    model = "m"
    [hosts.a.profiles.p.verify]
    prompt = "2+2?"
    max_tokens = 4
    timeout = 30
    """
    profile = config_hosts.load(write(tmp_path, text)).hosts["a"].profiles["p"]
    assert profile.verify == config_hosts.Verify(prompt="2+2?", max_tokens=4, timeout=30.0)
    plain = config_hosts.load(write(tmp_path, '[hosts.a]\nssh = "x"\n[hosts.a.profiles.p]\nmodel = "m"\n'))
    assert plain.hosts["a"].profiles["p"].verify == config_hosts.Verify()


def test_errors_in_multiline_arrays_and_dotted_keys_are_located(tmp_path: Path) -> None:
    text = (
        '[hosts.a]\nssh = "x"\n[hosts.a.profiles.p]\nmodel = "m"\n'
        'args = [\n  "--a",\n  "b=c",\n]\nspeculative.num_steps = "x"\n'
    )
    err = error_of(tmp_path, text)
    assert err.line == 9 and err.key == "hosts.a.profiles.p.speculative.num_steps"


def test_unreadable_and_invalid_utf8_files(tmp_path: Path) -> None:
    path = tmp_path / "hosts.toml"
    path.write_bytes(b'[hosts.a]\nssh = "\xff"\n')
    with pytest.raises(ConfigError, match=r"hosts.toml:2: expected UTF-8"):
        config_hosts.load(path)
    with pytest.raises(ConfigError, match="found a directory"):
        config_hosts.load(tmp_path)


# -- [console] ---------------------------------------------------------------------------------------


def test_console_table_sets_the_theme(tmp_path: Path) -> None:
    cfg = config_hosts.load(write(tmp_path, '[hosts.a]\nlocal = true\n\n[console]\ntheme = "gdn-light"\n'))
    assert cfg.console == config_hosts.Console(theme="gdn-light", theme_line=5)
    assert config_hosts.load(write(tmp_path, GOOD)).console == config_hosts.Console()
    dotted = config_hosts.load(write(tmp_path, 'console.theme = "mine"\n'))
    assert dotted.console.theme == "mine" and dotted.console.theme_line == 1


@pytest.mark.parametrize(
    ("text", "line", "key", "problem"),
    [
        ("[console]\ntheme = 3\n", 2, "console.theme", 'expected a theme name, e.g. "gdn-light"'),
        ('[console]\ntheme = ""\n', 2, "console.theme", 'found ""'),
        ('[console]\ntheme = "../x"\n', 2, "console.theme", 'found "../x"'),
        ('[console]\ntheme = "a"\nthem = "b"\n', 3, "console.them", "unknown key"),
        ('console = "gdn-light"\n', 1, "console", 'expected a table of console settings, found "gdn-light"'),
        ('[consle]\ntheme = "x"\n', 1, "consle", "unknown top-level key"),
    ],
)
def test_console_table_errors_name_line_and_key(
    tmp_path: Path, text: str, line: int, key: str, problem: str
) -> None:
    err = error_of(tmp_path, text)
    assert (err.line, err.key) == (line, key)
    assert problem in err.problem


def test_unknown_top_level_keys_suggest_console(tmp_path: Path) -> None:
    err = error_of(tmp_path, '[consle]\ntheme = "x"\n')
    assert err.hint == "did you mean 'console'?"
    err = error_of(tmp_path, "zzz = 1\n")
    assert err.hint is not None and "[console]" in err.hint and "[hosts.NAME]" in err.hint


# -- [console] bell and readonly, [keys] -----------------------------------------------------------------


def test_console_bell_and_readonly(tmp_path: Path) -> None:
    cfg = config_hosts.load(write(tmp_path, "[console]\nbell = true\nreadonly = true\n"))
    assert (cfg.console.bell, cfg.console.readonly) == (True, True)
    assert (config_hosts.Console().bell, config_hosts.Console().readonly) == (False, False)
    err = error_of(tmp_path, '[console]\nbell = "yes"\n')
    assert (err.line, err.key) == (2, "console.bell") and err.problem.startswith("expected true or false")


def test_keys_table_keeps_each_entry_and_its_line(tmp_path: Path) -> None:
    text = '[hosts.a]\nlocal = true\n\n[keys]\n"dash.prompt" = "P"\nlog.filter = "ctrl+f"\n'
    cfg = config_hosts.load(write(tmp_path, text))
    assert cfg.console.keys == {"dash.prompt": "P", "log.filter": "ctrl+f"}  # unquoted dotted ids too
    assert cfg.console.key_lines == {"dash.prompt": 5, "log.filter": 6}
    err = cfg.console.key_error(cfg.path, "log.filter", "unknown binding id", "did you mean 'log.filter'?")
    assert str(err) == f"{cfg.path}:6: keys.\"log.filter\": unknown binding id (did you mean 'log.filter'?)"
    dotted = config_hosts.load(write(tmp_path, 'keys."dash.quit" = "Q"\n'))
    assert dotted.console.keys == {"dash.quit": "Q"} and dotted.console.key_lines == {"dash.quit": 1}


@pytest.mark.parametrize(
    ("text", "line", "key", "problem"),
    [
        ('[keys]\n"dash.prompt" = 3\n', 2, 'keys."dash.prompt"', "expected a string of keys"),
        ('[keys]\n"dash.prompt" = ""\n', 2, 'keys."dash.prompt"', 'found ""'),
        ('[keys]\n"dash.prompt" = ["P"]\n', 2, 'keys."dash.prompt"', "found a list"),
        ('keys = "P"\n', 1, "keys", 'expected a table of binding id = keys, found "P"'),
    ],
)
def test_keys_table_shape_errors_name_line_and_key(
    tmp_path: Path, text: str, line: int, key: str, problem: str
) -> None:
    err = error_of(tmp_path, text)
    assert (err.line, err.key) == (line, key)
    assert problem in err.problem


@pytest.mark.parametrize(
    "python",
    ["-S sh -c 'touch PWNED' x", "-I", "PYTHONPATH=/tmp python3", "python3\\n", " python3", ""],
)
def test_python_must_be_a_path_or_a_command_name(tmp_path: Path, python: str) -> None:
    """`env` read a leading "-" as its option (and ran a command), an "=" as an assignment."""
    err = error_of(tmp_path, f'[hosts.box]\nssh = "root@box"\npython = "{python}"\n')
    assert err.key == "hosts.box.python" and err.line == 3, err
    assert 'not starting with "-"' in str(err)


@pytest.mark.parametrize("python", ["python3", "python3.11", "/opt/my venv/bin/python", "./venv/bin/python"])
def test_interpreters_that_are_paths_or_names_pass(tmp_path: Path, python: str) -> None:
    cfg = config_hosts.load(write(tmp_path, f'[hosts.box]\nssh = "root@box"\npython = "{python}"\n'))
    assert cfg.hosts["box"].python == python


def test_a_fifo_or_a_device_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO as the hosts file blocked every command for ever; a link to /dev/zero filled the memory."""
    fifo = tmp_path / "hosts.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="found a FIFO, socket or device"):
        config_hosts.load(fifo)
    zero = tmp_path / "zero.toml"
    zero.symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match="found a FIFO, socket or device"):
        config_hosts.load(zero)


def test_a_huge_or_deeply_nested_file_is_one_clear_error(tmp_path: Path) -> None:
    big = write(tmp_path, "# " + "x" * (2 << 20) + "\n")
    with pytest.raises(ConfigError, match="over 1024 KiB"):
        config_hosts.load(big)
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        config_hosts.load(deep)


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('model = "Qwen/\\nQwen3"', "model"),
        ('model = "   "', "model"),
        ('model = "m"\nargs = ["--x", "a\\u0000b"]', "args"),
        ('model = "m"\nenv = { A = "1\\n2" }', "env.A"),
        ('model = "m"\ntp = 1000000000000', "tp"),
        ('model = "m"\nverify = { timeout = inf }', "verify.timeout"),
    ],
)
def test_values_that_would_break_later_are_refused_now(tmp_path: Path, line: str, key: str) -> None:
    """NUL ends an argv element early, a newline breaks the command line or the log, a blank model or
    tp = 10**12 or an infinite timeout pass through to fail (or hang) far from the file."""
    err = error_of(tmp_path, f'[hosts.box]\nssh = "root@box"\n[hosts.box.profiles.p]\n{line}\n')
    assert err.key == f"hosts.box.profiles.p.{key}", err


def test_an_infinite_simulated_speed_is_refused(tmp_path: Path) -> None:
    err = error_of(tmp_path, "[hosts.box]\nlocal = true\nsimulate = { speed = inf }\n")
    assert err.key == "hosts.box.simulate.speed" and "a number > 0" in str(err)


def test_an_error_shows_escapes_and_newlines_from_the_file_never_sends_them(tmp_path: Path) -> None:
    err = error_of(tmp_path, '[hosts."a\\u001b]0;pwned\\u0007"]\nssh = 3\n')
    text = str(err)
    assert "\x1b" not in text and "\x07" not in text and "\n" not in text
    assert "a\\x1b]0;pwned\\x07" in text
