"""A damaged or hostile hosts file is one ConfigError naming the file, whatever it holds: never another
exception (a traceback), never a hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gdnconsole.config import hosts as config_hosts
from gdnconsole.config.hosts import ConfigError

HOST = '[hosts.ct129]\nssh = "root@ct129"\n[hosts.ct129.profiles.final]\nmodel = "Qwen/Qwen3.6-27B"\n'
# Where a value can sit: a host's key, a profile's, the console's, a key binding, a verify setting.
PLACES = [
    ("[hosts.ct129]", "python"),
    ("[hosts.ct129]", "log"),
    ("[hosts.ct129.profiles.final]", "tp"),
    ("[hosts.ct129.profiles.final]", "port"),
    ("[hosts.ct129.profiles.final]", "mem_fraction"),
    ("[hosts.ct129.profiles.final]", "args"),
    ("[hosts.ct129.profiles.final]", "env"),
    ("[console]", "theme"),
    ("[keys]", "dashboard.launch"),
    ("[hosts.ct129.verify]", "timeout"),
]
HOSTILE = st.one_of(
    st.integers(min_value=1, max_value=6000).map(lambda n: "9" * n),  # past int()'s 4300 digits
    st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n + "]" * n),
    st.integers(min_value=1, max_value=3000).map(lambda n: "{a = " * n + "1" + "}" * n),
    st.sampled_from(
        ["inf", "-inf", "nan", "1979-05-27", "07:32:00", "true", '"\\ud800"', "0x7fffffffffffffffff"]
    ),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=40).map(lambda t: '"' + t.replace('"', "") + '"'),
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hosts.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def test_a_number_of_thousands_of_digits_is_one_clear_error(tmp_path: Path) -> None:
    """tomllib raises a bare ValueError (Python's 4300-digit limit for int()), not a TOMLDecodeError."""
    path = write(tmp_path, HOST + "tp = " + "9" * 5000 + "\n")
    with pytest.raises(ConfigError, match="a number too long"):
        config_hosts.load(path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(place=st.sampled_from(PLACES), value=HOSTILE)
@example(place=PLACES[2], value="9" * 4400)
def test_a_hostile_value_anywhere_is_a_config_error_or_a_config(
    tmp_path: Path, place: tuple[str, str], value: str
) -> None:
    table, key = place
    body = HOST.replace("[hosts.ct129.profiles.final]\n", "") + f"{table}\n{key} = {value}\n"
    if not table.startswith("[hosts.ct129.profiles"):
        body += '[hosts.ct129.profiles.final]\nmodel = "m"\n'
    path = write(tmp_path, body)
    try:
        config_hosts.load(path)
    except ConfigError as exc:
        assert str(exc).startswith(str(path))


def test_a_hosts_file_that_is_a_link_to_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "hosts.toml"
    link.symlink_to(fifo)
    with pytest.raises(ConfigError, match="found a FIFO, socket or device"):
        config_hosts.load(link)
