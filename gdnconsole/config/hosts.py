"""Hosts and launch profiles: the TOML hosts file, validated with errors that name file, line and key.

The file is ``$GDNCONSOLE_CONFIG`` or ``<user config dir>/gdnconsole/hosts.toml``. A host is reached over
SSH (``ssh = "user@host[:port]"`` or an alias from ``~/.ssh/config``) or runs here (``local = true``), and
may be a simulated GPU host (``simulate = {…}``). Each host carries any number of launch profiles. A
``[console]`` table holds the console's own settings (``theme``, ``bell``, ``readonly``), and a ``[keys]``
table remaps keys (binding id → keys; only its shape is checked here: ``ui/keymap.py`` knows the bindings,
and the CLI checks the table against them before a screen opens, with the lines kept here).

Whether a profile's SGLang flags make sense together is not checked here: that is the flag checker's
job, which knows the host's SGLang version.
"""

from __future__ import annotations

import difflib
import errno
import math
import os
import re
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from gdnconsole import readback
from gdnconsole.config import tomlpos
from gdnconsole.config.tomlpos import KeyPath
from gdnconsole.errors import ConsoleError

CONFIG_ENV = "GDNCONSOLE_CONFIG"
APP_NAME = "gdnconsole"

SIM_SCENARIOS = (
    "ok",
    "crash-serving",
    "oom-graph",
    "nccl-error",
    "hang-graph",
    "health-fail",
    "port-in-use",
)
SIM_CHAT_FAULTS = ("none", "hang", "drop", "bad-sse", "bad-json")  # how /v1/chat/completions misbehaves

_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
NAME_MAX = 64  # a host's or profile's name: it heads a tab, a status bar and a journal line
_THEME_NAME = _HOST_NAME
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SSH_TARGET = re.compile(
    r"(?:(?P<user>[^@\s:/]+)@)?(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<host>[^@\s:/\[\]]+))(?::(?P<port>[^:]*))?\Z"
)


class ConfigError(ConsoleError):
    """A problem in the hosts file, located precisely enough to fix without reading code."""

    def __init__(self, path: Path, line: int | None, key: str, problem: str, hint: str | None = None) -> None:
        self.path = path
        self.line = line
        self.key = key
        self.problem = problem
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        key = f" {self.key}:" if self.key else ""
        hint = f" ({self.hint})" if self.hint else ""
        # Keys and values come from the file: an ESC, a newline or a bidi override in them is shown,
        # never obeyed (the config layer's own copy of logs/textsafe's rule: it sits below it).
        return _UNPRINTABLE.sub(_escaped, f"{where}:{key} {self.problem}{hint}")


_UNPRINTABLE = re.compile(r"[^\t -~]")  # beyond printable ASCII: each one is looked at


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    if char.isprintable():
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


@dataclass(frozen=True)
class Verify:
    """The prompt that proves a ready server answers (issue 6): short, with a small answer."""

    prompt: str = "Say hello in one short sentence."
    max_tokens: int = 16
    timeout: float = 60.0  # the whole wait for the answer, in seconds, before it counts as failed


@dataclass(frozen=True)
class Speculative:
    algorithm: str | None = None
    num_steps: int | None = None
    eagle_topk: int | None = None
    num_draft_tokens: int | None = None
    draft_model: str | None = None


@dataclass(frozen=True)
class Profile:
    name: str
    model: str
    tp: int = 1
    port: int = 30000
    host: str = "127.0.0.1"
    mem_fraction: float | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    speculative: Speculative = field(default_factory=Speculative)
    args: tuple[str, ...] = ()
    verify: Verify = field(default_factory=lambda: Verify())


@dataclass(frozen=True)
class Simulate:
    """A simulated GPU host; ``table`` is what the simulator receives (the user's table, verbatim)."""

    gpus: int
    gpu_name: str
    gpu_mib: int
    sglang: str
    speed: float
    ffmpeg: bool
    scenario: str
    table: Mapping[str, Any]


@dataclass(frozen=True)
class SshTarget:
    alias: str  # what the user wrote: "root@ct129:2222" or an ~/.ssh/config alias
    user: str | None
    hostname: str
    port: int | None


@dataclass(frozen=True)
class Host:
    name: str
    ssh: SshTarget | None
    local: bool
    python: str = "python3"
    workdir: str | None = None
    log: str = "sglang_serve.log"
    default_profile: str | None = None
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    simulate: Simulate | None = None
    line: int | None = None

    @property
    def profile(self) -> Profile | None:
        """The profile a launch uses unless told otherwise."""
        if self.default_profile:
            return self.profiles[self.default_profile]
        return next(iter(self.profiles.values()), None)


@dataclass(frozen=True)
class Console:
    """The ``[console]`` and ``[keys]`` tables: settings of the console itself, not of a host."""

    theme: str | None = None  # a theme's name (a file in a `themes` folder); None: the default
    theme_line: int | None = None  # where the file sets it, for messages
    bell: bool = False  # ring the terminal bell on a crash, a lost link, VERIFY FAILED / LOST, a slow ready
    readonly: bool = False  # the dashboard never launches, relaunches or stops (as with --readonly)
    keys: Mapping[str, str] = field(default_factory=dict)  # binding id → keys, as the file says
    key_lines: Mapping[str, int | None] = field(default_factory=dict)  # binding id → its line

    def key_error(self, path: Path, binding_id: str, problem: str, hint: str | None = None) -> ConfigError:
        """An error about the ``[keys]`` entry of ``binding_id``, at its line."""
        return ConfigError(path, self.key_lines.get(binding_id), keys_key(binding_id), problem, hint)


def keys_key(binding_id: str) -> str:
    """How a message names a ``[keys]`` entry: ``keys."dash.prompt"`` (ids hold dots)."""
    return f'keys."{binding_id}"'


@dataclass(frozen=True)
class Config:
    path: Path
    hosts: Mapping[str, Host]
    exists: bool = True
    console: Console = field(default_factory=Console)

    def host(self, name: str) -> Host | None:
        return self.hosts.get(name)

    def host_or_alias(self, name: str) -> Host:
        """The configured host, else an SSH host of that name (an ~/.ssh/config alias or a hostname)."""
        host = self.hosts.get(name)
        if host is not None:
            return host
        m = _SSH_TARGET.match(name)
        if not m or (m["port"] is not None and not m["port"].isdigit()):
            problem = f'"{name}" is not a configured host or an ssh target'
            raise ConfigError(self.path, None, "", problem)
        target = SshTarget(
            alias=name,
            user=m["user"],
            hostname=m["ipv6"] or m["host"],
            port=int(m["port"]) if m["port"] else None,
        )
        return Host(name=name, ssh=target, local=False)


def config_path() -> Path:
    """Where the hosts file lives: ``$GDNCONSOLE_CONFIG`` or the user config dir."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME)) / "hosts.toml"


MAX_RANKS = 1024  # more tensor-parallel ranks than any box has: a typo (tp = 10**12), not a plan
MAX_FILE_BYTES = 1 << 20  # a hosts file is a few KiB; more is not one (and is not read further)


def load(path: Path | None = None, *, reserved: Collection[str] = ()) -> Config:
    """Read and validate the hosts file; a missing file is an empty configuration. ``reserved``: names
    a host may not take, because `gdnconsole NAME` runs a command (the CLI derives them from its own
    commands; this layer cannot know them)."""
    path = path or config_path()
    try:
        data = _read_regular(path)
    except FileNotFoundError:
        return Config(path=path, hosts={}, exists=False)
    except IsADirectoryError:
        raise ConfigError(path, None, "", "expected a TOML file, found a directory") from None
    except OSError as exc:
        raise ConfigError(path, None, "", f"cannot read the file: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(path, line, "", "expected UTF-8 text, found invalid bytes") from None
    return loads(text, path, reserved=reserved)


def _read_regular(path: Path) -> bytes:
    """The file's bytes, when it is a regular file of a hosts file's size. Checked on the open file
    (readback): opening a FIFO must not block, a link to /dev/zero must not fill the memory, and a file
    swapped between a look and the open is what gets checked."""
    try:
        return readback.read_regular(path, MAX_FILE_BYTES)
    except (FileNotFoundError, IsADirectoryError):
        raise
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            over = f"the file is over {MAX_FILE_BYTES // 1024} KiB: not a hosts file"
            raise ConfigError(path, None, "", over) from None
        if exc.errno == errno.EINVAL:
            raise ConfigError(
                path, None, "", "expected a TOML file, found a FIFO, socket or device"
            ) from None
        raise


def loads(text: str, path: Path, *, reserved: Collection[str] = ()) -> Config:
    """Validate TOML text as a hosts file (``path`` is only used in messages; ``reserved`` as for load)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(path, text, exc) from None
    except RecursionError:  # tomllib recurses per nested array: thousands deep exhaust the stack
        raise ConfigError(path, None, "", "arrays or tables nested too deeply to be a hosts file") from None
    except ValueError:  # not a TOMLDecodeError: int() of over 4300 digits (Python's own limit)
        raise ConfigError(
            path, None, "", "a number too long to be a hosts file's (over 4300 digits)"
        ) from None
    return _Validator(path, tomlpos.scan(text), reserved).config(raw)


# -- TOML syntax errors ----------------------------------------------------------------------------

_TOML_AT = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)$")
_TOML_AT_EOF = re.compile(r"^(?P<msg>.*?)\s*\(at end of document\)$")
_DECLARED_TWICE = re.compile(r"Cannot declare \((?P<path>.*)\) twice")
_OVERWRITE = "Cannot overwrite a value"


def _syntax_error(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> ConfigError:
    message = str(exc)
    m = _TOML_AT.match(message)
    line: int | None = int(m["line"]) if m else None
    what = m["msg"] if m else message
    if not m and (eof := _TOML_AT_EOF.match(message)):
        line = text.count("\n") + 1
        what = eof["msg"]
    twice = _DECLARED_TWICE.search(what)
    if twice:
        keys = re.findall(r"'((?:[^'\\]|\\.)*)'", twice["path"])
        if len(keys) == 2 and keys[0] == "hosts":
            return ConfigError(path, line, f"hosts.{keys[1]}", "duplicate host: this name is defined twice")
        return ConfigError(path, line, ".".join(keys), "duplicate table: this table is defined twice")
    if what.startswith(_OVERWRITE):
        key = _key_on_line(text, line)
        return ConfigError(path, line, key, "duplicate key: it is already set above in the same table")
    return ConfigError(path, line, "", f"invalid TOML: {what[0].lower() + what[1:] if what else what}")


def _key_on_line(text: str, line: int | None) -> str:
    lines = text.splitlines()
    if line is None or not 0 < line <= len(lines):
        return ""
    m = re.match(r"\s*([^=\[]+?)\s*=", lines[line - 1])
    return m.group(1) if m else ""


# -- validation ------------------------------------------------------------------------------------

Checker = Callable[[Any], bool]


@dataclass(frozen=True)
class _Field:
    expected: str  # "an integer from 1 to 65535": said to the user when the check fails
    check: Checker
    required: bool = False


def _is_int(lo: int, hi: int | None = None) -> Checker:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= lo and (hi is None or v <= hi)


# The interpreter reaches a remote command as env's operand: a leading "-" would read as an option, an
# "=" as an assignment, a control character as the end of the line.
_INTERPRETER = re.compile(r"[^\s=\x00-\x1f\x7f-][^=\x00-\x1f\x7f]*\Z")


# What a value may not hold, and what an error message shows escaped: NUL ends a C string (an argv element,
# a path) early; a newline or another C0/C1 control character breaks the command line, the log or the
# terminal it reaches. Tab is fine.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _is_str(v: Any) -> bool:
    return isinstance(v, str) and v != "" and not _CONTROL.search(v)


def _is_text(v: Any) -> bool:
    """A string with something in it besides spaces (a model id), and no control character."""
    return _is_str(v) and bool(v.strip())


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_fraction(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and 0 < v <= 1


def _is_positive(v: Any) -> bool:
    """A finite number > 0 (TOML's inf would make a timeout never end, a speed divide to nothing)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < math.inf


def _is_non_negative(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < math.inf


def _is_str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and not _CONTROL.search(x) for x in v)


def _is_table(v: Any) -> bool:
    return isinstance(v, dict)


TOP_LEVEL_KEYS = ["hosts", "console", "keys"]

_PORT = _Field("an integer port from 1 to 65535", _is_int(1, 65535))

CONSOLE_FIELDS: dict[str, _Field] = {
    "theme": _Field(
        'a theme name, e.g. "gdn-light" (a shipped theme or a NAME.toml in the themes folder)',
        lambda v: isinstance(v, str) and _THEME_NAME.match(v) is not None,
    ),
    "bell": _Field("true or false (ring the terminal bell on alerts)", _is_bool),
    "readonly": _Field("true or false (never launch, relaunch or stop from the dashboard)", _is_bool),
}
KEY_VALUE = 'a string of keys, e.g. "ctrl+f" or "P" (several: "ctrl+r,f5")'

HOST_FIELDS: dict[str, _Field] = {
    "ssh": _Field('a string "user@host[:port]" or an alias from ~/.ssh/config', _is_str),
    "local": _Field("true or false", _is_bool),
    "python": _Field(
        'a path or a command name of the interpreter on the host, e.g. "python3" or "/opt/venv/bin/python" '
        '(not starting with "-", without "=" or control characters)',
        lambda v: _is_str(v) and _INTERPRETER.match(v) is not None,
    ),
    "workdir": _Field("a string path on the host", _is_str),
    "log": _Field("a string path on the host (relative paths are under workdir)", _is_str),
    "default_profile": _Field("the name of one of this host's profiles", _is_str),
    "profiles": _Field("a table of launch profiles", _is_table),
    "simulate": _Field("a table describing the simulated GPU host", _is_table),
}
PROFILE_FIELDS: dict[str, _Field] = {
    "model": _Field(
        "a string: the model path or Hugging Face id (not blank, no control characters)",
        _is_text,
        required=True,
    ),
    "tp": _Field("an integer ≥ 1 (tensor-parallel ranks, at most 1024)", _is_int(1, MAX_RANKS)),
    "port": _PORT,
    "host": _Field('a string bind address, e.g. "127.0.0.1"', _is_str),
    "mem_fraction": _Field("a number in (0, 1]", _is_fraction),
    "env": _Field("a table of environment variables", _is_table),
    "speculative": _Field("a table of speculative-decoding settings", _is_table),
    "args": _Field(
        'a list of strings without control characters, e.g. ["--disable-radix-cache"]', _is_str_list
    ),
    "verify": _Field("a table describing the verification prompt", _is_table),
}
VERIFY_FIELDS: dict[str, _Field] = {
    "prompt": _Field("a non-empty string", lambda v: isinstance(v, str) and bool(v.strip())),
    "max_tokens": _Field("an integer from 1 to 4096", _is_int(1, 4096)),
    "timeout": _Field("a number of seconds > 0", _is_positive),
}
SPECULATIVE_FIELDS: dict[str, _Field] = {
    "algorithm": _Field('a string, e.g. "NEXTN" or "EAGLE3"', _is_str),
    "num_steps": _Field("an integer ≥ 1", _is_int(1)),
    "eagle_topk": _Field("an integer ≥ 1", _is_int(1)),
    "num_draft_tokens": _Field("an integer ≥ 1", _is_int(1)),
    "draft_model": _Field("a string: the draft model path", _is_str),
}
SIMULATE_FIELDS: dict[str, _Field] = {
    "gpus": _Field("an integer from 1 to 16", _is_int(1, 16)),
    "gpu_name": _Field('a string, e.g. "NVIDIA RTX A6000"', _is_str),
    "gpu_mib": _Field("an integer ≥ 1024 (MiB per GPU)", _is_int(1024)),
    "compute_capability": _Field(
        'a string "MAJOR.MINOR", e.g. "8.6"',
        lambda v: isinstance(v, str) and re.fullmatch(r"\d+\.\d+", v) is not None,
    ),
    "sglang": _Field(
        'a version string, e.g. "0.5.11"',
        lambda v: isinstance(v, str) and re.fullmatch(r"\d+(\.\d+){1,3}\S*", v) is not None,
    ),
    "speed": _Field("a number > 0 (10 runs the timeline ten times faster)", _is_positive),
    "ffmpeg": _Field("true or false", _is_bool),
    "scenario": _Field("one of " + ", ".join(f'"{s}"' for s in SIM_SCENARIOS), lambda v: v in SIM_SCENARIOS),
    "chat_fault": _Field(
        "one of " + ", ".join(f'"{s}"' for s in SIM_CHAT_FAULTS), lambda v: v in SIM_CHAT_FAULTS
    ),
    "tokens_per_s": _Field("a number > 0", _is_positive),
    "release_lag_s": _Field("a number ≥ 0", _is_non_negative),
    "ready_log_lag_s": _Field("a number ≥ 0", _is_non_negative),
    "nvml": _Field('one of "ok", "no-driver", "absent"', lambda v: v in ("ok", "no-driver", "absent")),
    "nvidia_smi": _Field("true or false", _is_bool),
    "home": _Field("a string path for the simulated host's files", _is_str),
}
SIMULATE_DEFAULTS: dict[str, Any] = {
    "gpus": 2,
    "gpu_name": "NVIDIA RTX A6000",
    "gpu_mib": 49140,
    "sglang": "0.5.11",
    "speed": 1.0,
    "ffmpeg": True,
    "scenario": "ok",
}


def _shown(value: Any) -> str:
    """A value as the user would recognise it in their file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    return repr(value)


class _Validator:
    def __init__(self, path: Path, positions: tomlpos.Positions, reserved: Collection[str] = ()) -> None:
        self.path = path
        self.positions = positions
        self.reserved = frozenset(name.lower() for name in reserved)

    def error(self, key: KeyPath, problem: str, hint: str | None = None) -> ConfigError:
        return ConfigError(self.path, self.positions.line_of(key), ".".join(key), problem, hint)

    def fields(self, key: KeyPath, table: Mapping[str, Any], spec: Mapping[str, _Field]) -> None:
        """Unknown keys, wrong types and missing required keys of one table."""
        for name, value in table.items():
            if name not in spec:
                close = difflib.get_close_matches(name, list(spec), n=1, cutoff=0.6)
                hint = f"did you mean '{close[0]}'?" if close else "known keys: " + ", ".join(spec)
                raise self.error((*key, name), "unknown key", hint)
            fld = spec[name]
            if not fld.check(value):
                raise self.error((*key, name), f"expected {fld.expected}, found {_shown(value)}")
        for name, fld in spec.items():
            if fld.required and name not in table:
                raise self.error(key, f"missing required key '{name}' ({fld.expected})")

    def config(self, raw: Mapping[str, Any]) -> Config:
        for name in raw:
            if name not in TOP_LEVEL_KEYS:
                close = difflib.get_close_matches(name, TOP_LEVEL_KEYS, n=1, cutoff=0.6)
                hint = (
                    f"did you mean '{close[0]}'?"
                    if close
                    else "hosts are tables named [hosts.NAME]; settings go in [console], keys in [keys]"
                )
                raise self.error((name,), "unknown top-level key", hint)
        console = self.console(raw.get("console", {}), raw.get("keys", {}))
        hosts_raw = raw.get("hosts", {})
        if not isinstance(hosts_raw, dict):
            raise self.error(("hosts",), f"expected a table of hosts, found {_shown(hosts_raw)}")
        hosts: dict[str, Host] = {}
        seen: dict[str, str] = {}
        for name, table in hosts_raw.items():
            key = ("hosts", name)
            if not isinstance(table, dict):
                raise self.error(key, f"expected a table describing the host, found {_shown(table)}")
            self.host_name(key, name, seen)
            hosts[name] = self.host(key, name, table)
        return Config(path=self.path, hosts=hosts, console=console)

    def console(self, table: Any, keys: Any) -> Console:
        key = ("console",)
        if not isinstance(table, dict):
            raise self.error(key, f"expected a table of console settings, found {_shown(table)}")
        self.fields(key, table, CONSOLE_FIELDS)
        theme = table.get("theme")
        key_map, key_lines = self.keys(keys)
        return Console(
            theme=theme,
            theme_line=self.positions.line_of((*key, "theme")) if theme else None,
            bell=table.get("bell", False),
            readonly=table.get("readonly", False),
            keys=key_map,
            key_lines=key_lines,
        )

    def keys(self, table: Any) -> tuple[dict[str, str], dict[str, int | None]]:
        """The ``[keys]`` table's shape: binding id → a non-empty string, and each entry's line. An id
        written without quotes (``dash.prompt = "P"``) is a dotted key in TOML: read as the same id. The
        ids themselves are checked by the CLI against the screens' bindings (ui/keymap.py)."""
        if not isinstance(table, dict):
            raise self.error(("keys",), f"expected a table of binding id = keys, found {_shown(table)}")
        keys: dict[str, str] = {}
        lines: dict[str, int | None] = {}

        def walk(path: KeyPath, node: Mapping[str, Any]) -> None:
            for name, value in node.items():
                if isinstance(value, dict):
                    walk((*path, name), value)
                    continue
                binding_id = ".".join((*path, name))
                line = self.positions.line_of(("keys", *path, name))
                if not isinstance(value, str) or not value.strip():
                    problem = f"expected {KEY_VALUE}, found {_shown(value)}"
                    raise ConfigError(self.path, line, keys_key(binding_id), problem)
                keys[binding_id], lines[binding_id] = value, line

        walk((), table)
        return keys, lines

    def name_length(self, key: KeyPath, name: str, what: str) -> None:
        """A name longer than NAME_MAX is refused, and shown cut (in the key too): a 5000-character name
        would fill the terminal with its error."""
        if len(name) > NAME_MAX:
            cut = name[:24] + "…"
            shown_key = ".".join((*key[:-1], cut))
            problem = f"expected a {what} name of at most {NAME_MAX} characters, found {len(name)}"
            raise ConfigError(self.path, self.positions.line_of(key), shown_key, problem)

    def host_name(self, key: KeyPath, name: str, seen: dict[str, str]) -> None:
        self.name_length(key, name, "host")
        if not _HOST_NAME.match(name):
            raise self.error(
                key, f"expected a host name of letters, digits, '.', '_' or '-', found \"{name}\""
            )
        if name.lower() in self.reserved:
            raise self.error(
                key,
                f"'{name}' is a gdnconsole command and cannot name a host",
                f"rename the host: `gdnconsole {name.lower()}` runs the command",
            )
        first = seen.setdefault(name.lower(), name)
        if first != name:
            raise self.error(key, f"duplicate host: '{name}' and '{first}' differ only in case")

    def host(self, key: KeyPath, name: str, table: Mapping[str, Any]) -> Host:
        self.fields(key, table, HOST_FIELDS)
        simulate = self.simulate((*key, "simulate"), table["simulate"]) if "simulate" in table else None
        ssh = self.ssh((*key, "ssh"), table["ssh"]) if "ssh" in table else None
        local = bool(table.get("local", False))
        if ssh and local:
            raise self.error(
                (*key, "local"),
                "a host is reached either over ssh or locally, not both",
                "remove 'local' or 'ssh'",
            )
        if not ssh and not local and simulate is None:
            raise self.error(
                key,
                "missing how to reach the host",
                'add ssh = "user@host[:port]" (or an ~/.ssh/config alias) or local = true',
            )
        profiles = {
            pname: self.profile((*key, "profiles", pname), pname, ptable)
            for pname, ptable in table.get("profiles", {}).items()
        }
        default = table.get("default_profile")
        if default is not None and default not in profiles:
            close = difflib.get_close_matches(default, list(profiles), n=1)
            hint = f"did you mean '{close[0]}'?" if close else "profiles: " + (", ".join(profiles) or "none")
            raise self.error((*key, "default_profile"), f'no profile named "{default}" on this host', hint)
        return Host(
            name=name,
            ssh=ssh,
            local=local or (ssh is None),
            python=table.get("python", "python3"),
            workdir=table.get("workdir"),
            log=table.get("log", "sglang_serve.log"),
            default_profile=default,
            profiles=profiles,
            simulate=simulate,
            line=self.positions.line_of(key),
        )

    def ssh(self, key: KeyPath, value: str) -> SshTarget:
        m = _SSH_TARGET.match(value)
        if not m:
            raise self.error(key, f'expected "user@host[:port]" or an ~/.ssh/config alias, found "{value}"')
        port: int | None = None
        if m["port"] is not None:
            if not m["port"].isdigit() or not 1 <= int(m["port"]) <= 65535:
                raise self.error(key, f'expected a port from 1 to 65535 after ":", found "{m["port"]}"')
            port = int(m["port"])
        return SshTarget(alias=value, user=m["user"], hostname=m["ipv6"] or m["host"], port=port)

    def profile_name(self, key: KeyPath, name: str) -> None:
        """Any printable characters: no control, no bidi override or zero-width character (Unicode's
        format characters), no separator but the space, so that a name shows as what it is and two names
        that look alike are alike."""
        self.name_length(key, name, "profile")
        if not name.strip() or not name.isprintable():
            raise self.error(
                key,
                f'expected a profile name of printable characters, found "{name}"',
                "no control, format (bidi, zero-width) or separator character but the space",
            )

    def profile(self, key: KeyPath, name: str, table: Any) -> Profile:
        self.profile_name(key, name)
        if not isinstance(table, dict):
            raise self.error(key, f"expected a table describing the launch profile, found {_shown(table)}")
        self.fields(key, table, PROFILE_FIELDS)
        spec_table = table.get("speculative", {})
        self.fields((*key, "speculative"), spec_table, SPECULATIVE_FIELDS)
        verify_table = table.get("verify", {})
        self.fields((*key, "verify"), verify_table, VERIFY_FIELDS)
        return Profile(
            name=name,
            model=table["model"],
            tp=table.get("tp", 1),
            port=table.get("port", 30000),
            host=table.get("host", "127.0.0.1"),
            mem_fraction=table.get("mem_fraction"),
            env=self.env((*key, "env"), table.get("env", {})),
            speculative=Speculative(**spec_table),
            args=tuple(table.get("args", ())),
            verify=self.verify(verify_table),
        )

    @staticmethod
    def verify(table: Mapping[str, Any]) -> Verify:
        default = Verify()
        return Verify(
            prompt=table.get("prompt", default.prompt),
            max_tokens=table.get("max_tokens", default.max_tokens),
            timeout=float(table.get("timeout", default.timeout)),
        )

    def env(self, key: KeyPath, table: Mapping[str, Any]) -> dict[str, str]:
        env: dict[str, str] = {}
        for name, value in table.items():
            if isinstance(value, str) and _CONTROL.search(value):
                raise self.error((*key, name), "expected a string without control characters (NUL, newline…)")
            if not _ENV_NAME.match(name):
                raise self.error((*key, name), f'expected an environment variable name, found "{name}"')
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise self.error(
                    (*key, name),
                    f"expected a string value, found {_shown(value)}",
                    f'quote it: {name} = "1"' if isinstance(value, bool) else None,
                )
            env[name] = str(value)
        return env

    def simulate(self, key: KeyPath, table: Mapping[str, Any]) -> Simulate:
        self.fields(key, table, SIMULATE_FIELDS)
        merged = {**SIMULATE_DEFAULTS, **table}
        return Simulate(
            gpus=merged["gpus"],
            gpu_name=merged["gpu_name"],
            gpu_mib=merged["gpu_mib"],
            sglang=merged["sglang"],
            speed=float(merged["speed"]),
            ffmpeg=merged["ffmpeg"],
            scenario=merged["scenario"],
            table=dict(table),
        )
