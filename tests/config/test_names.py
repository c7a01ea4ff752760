"""Host and profile names show as what they are: no bidi override, zero-width or control character, and
not longer than a tab can show; refused at their own line of the hosts file, and every value an error
shows back is escaped, never sent to the terminal."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from gdnconsole.config import hosts as config_hosts
from gdnconsole.config.hosts import NAME_MAX, ConfigError
from tests.cli.test_config_cmds import run


def load(tmp_path: Path, text: str) -> config_hosts.Config:
    path = tmp_path / "hosts.toml"
    path.write_text(text, encoding="utf-8")
    return config_hosts.load(path)


def refused(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, text)
    return info.value


def raw_free(text: str) -> None:
    """Nothing a terminal would obey or a reader be fooled by."""
    bad = [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") and c not in "\n"]
    assert not bad, [f"U+{ord(c):04X}" for c in bad]


def profile_file(name: str) -> str:
    quoted = json.dumps(name)  # a TOML basic string: \uXXXX escapes
    return f'[hosts.box]\nlocal = true\n\n[hosts.box.profiles.{quoted}]\nmodel = "Qwen/Qwen3.6-27B"\n'


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("evil\u202elanif", "evil\\u202elanif"),  # right-to-left override: displays "evilfinal"
        ("fi\u200bnal", "fi\\u200bnal"),  # zero-width space: looks like "final"
        ("fi\u2066nal\u2069", "fi\\u2066nal\\u2069"),  # isolates
        ("\ufefffinal", "\\ufefffinal"),  # zero-width no-break space
        ("fi\u00adnal", "fi\\xadnal"),  # soft hyphen
        ("a\u2028b", "a\\u2028b"),  # line separator
        ("a\x1b]0;PWNED\x07", "a\\x1b]0;PWNED\\x07"),
        ("a\x9bb", "a\\x9bb"),
        ("a\u00a0b", "a\\xa0b"),  # a no-break space looks like a space
    ],
)
def test_a_profile_name_that_would_not_show_as_itself_is_refused_at_its_line(
    tmp_path: Path, name: str, shown: str
) -> None:
    err = refused(tmp_path, profile_file(name))
    assert err.line == 4 and err.key.startswith("hosts.box.profiles.")
    text = str(err)
    raw_free(text)
    assert f'"{shown}"' in text and "printable" in text and text.startswith(f"{tmp_path / 'hosts.toml'}:4:")


@pytest.mark.parametrize("name", ["final", "qwen-快", "Qwen 3.6 (MTP)", "é" * NAME_MAX])
def test_printable_profile_names_are_taken(tmp_path: Path, name: str) -> None:
    assert name in load(tmp_path, profile_file(name)).hosts["box"].profiles


@pytest.mark.parametrize("name", ["", "   "])
def test_an_empty_profile_name_is_refused(tmp_path: Path, name: str) -> None:
    assert refused(tmp_path, profile_file(name)).line == 4


def test_a_5000_character_name_is_refused_and_not_shown_whole(tmp_path: Path) -> None:
    host = refused(tmp_path, f"[hosts.{'h' * 5000}]\nlocal = true\n")
    assert host.line == 1 and f"at most {NAME_MAX} characters, found 5000" in str(host)
    assert len(str(host)) < 300
    profile = refused(tmp_path, profile_file("p" * 5000))
    assert profile.line == 4 and "found 5000" in str(profile) and len(str(profile)) < 300


def test_a_name_of_the_longest_length_is_taken_and_one_more_is_not(tmp_path: Path) -> None:
    assert "h" * NAME_MAX in load(tmp_path, f"[hosts.{'h' * NAME_MAX}]\nlocal = true\n").hosts
    assert refused(tmp_path, f"[hosts.{'h' * (NAME_MAX + 1)}]\nlocal = true\n").line == 1
    assert refused(tmp_path, profile_file("p" * (NAME_MAX + 1))).line == 4


@pytest.mark.parametrize(
    ("text", "line", "shown"),
    [
        ('[hosts.box]\nssh = "\\u202eroot@a b"\n', 2, '"\\u202eroot@a b"'),
        ('[hosts.box]\nlocal = true\ndefault_profile = "fi\\u200bnal"\n', 3, '"fi\\u200bnal"'),
    ],
)
def test_a_value_shown_back_in_an_error_is_escaped(tmp_path: Path, text: str, line: int, shown: str) -> None:
    err = refused(tmp_path, text)
    raw_free(str(err))
    assert err.line == line and shown in str(err), str(err)


def test_config_check_refuses_a_reversed_name_in_one_escaped_line(tmp_path: Path) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(profile_file("evil\u202elanif"), encoding="utf-8")
    for command in (["config", "check"], ["hosts"]):
        result = run(command, path)
        assert result.returncode == 2, result
        assert result.stderr.count("\n") == 1 and f"{path}:4:" in result.stderr, result.stderr
        raw_free(result.stderr + result.stdout)
        assert "evil\\u202elanif" in result.stderr
