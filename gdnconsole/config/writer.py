"""Writing the hosts file: the commented example, and saving an edited profile back in place.

Saving goes through ``tomlkit`` so that the user's comments, key order and formatting survive; only the
values that changed are touched, and the result is validated before it replaces the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from gdnconsole import safefile
from gdnconsole.config import hosts as config_hosts
from gdnconsole.config.hosts import Config, ConfigError, Host, Profile, Speculative, Verify

EXAMPLE = """\
# gdnconsole hosts file. One [hosts.NAME] table per GPU box; `gdnconsole NAME` opens it.
#
# A host is reached over SSH (ssh = "user@host[:port]", or an alias from ~/.ssh/config) or runs on this
# machine (local = true). `python` is the interpreter on the host that runs gdnconsole's small agent
# (standard library only, nothing is installed there); `log` is the SGLang server log, relative to
# `workdir` unless absolute. Each [hosts.NAME.profiles.PROFILE] table is one way to launch SGLang.

# The console's own settings. `theme` picks the colours: "gdn-dark" (the default), "gdn-light",
# "gdn-high-contrast" (for projectors and recordings), or NAME for a NAME.toml of yours in the `themes`
# folder next to this file. `--theme NAME` on the command line wins over it. `bell = true` rings the
# terminal bell when a server crashes, fails or loses VERIFIED, a link drops, or a slow startup is ready.
# `readonly = true` opens every dashboard as `--readonly` does: no launch, relaunch or stop.
# [console]
# theme = "gdn-light"
# bell = true
# readonly = true

# Keys of your own: binding id = keys (`?` in the console lists every id). A key is one character ("P"),
# a name ("f5", "pageup", "space") or modifiers and a key ("ctrl+f"); "ctrl+r,f5" binds both. Two actions
# of one screen cannot share a key.
# [keys]
# "dash.prompt" = "P"
# "log.filter" = "ctrl+f"

[hosts.ct129]
ssh = "root@ct129"
python = "python3"
workdir = "/root"
log = "/root/sglang_serve.log"
default_profile = "qwen36-mtp"

# Qwen3.6-27B (hybrid Gated DeltaNet) on 2x RTX A6000 with MTP through NEXTN, as it finally ran.
[hosts.ct129.profiles.qwen36-mtp]
model = "Qwen/Qwen3.6-27B"
tp = 2
port = 30000
host = "127.0.0.1"
# mem_fraction = 0.85          # --mem-fraction-static; SGLang picks one when absent
args = ["--mamba-scheduler-strategy", "extra_buffer"]
# Once the log says ready, one short prompt proves the model answers (VERIFIED); an `--api-key` in
# `args` is sent as a bearer token and never shown. Change it with a table:
# verify = { prompt = "Say hello in one short sentence.", max_tokens = 16, timeout = 60 }

[hosts.ct129.profiles.qwen36-mtp.speculative]
algorithm = "NEXTN"
num_steps = 1
eagle_topk = 1
num_draft_tokens = 2
# draft_model = "…"            # NEXTN uses the model's own MTP heads

[hosts.ct129.profiles.qwen36-mtp.env]
SGLANG_ENABLE_SPEC_V2 = "1"

# A simulated GPU box on this machine, shaped like ct129: no GPU needed. `speed` scales its timeline
# (1.0: a full startup takes about 20 s); `scenario` picks a failure to rehearse: "ok", "crash-serving",
# "oom-graph", "nccl-error", "hang-graph", "health-fail" or "port-in-use"; `chat_fault` makes the chat
# endpoint misbehave: "hang", "drop", "bad-sse" or "bad-json". `tokens_per_s` is its decode rate.
[hosts.demo]
local = true
log = "sglang_serve.log"

[hosts.demo.simulate]
gpus = 2
gpu_name = "NVIDIA RTX A6000"
gpu_mib = 49140
sglang = "0.5.11"
speed = 1.0
ffmpeg = false       # no FFmpeg on the box: SGLang warns about libavutil and carries on
scenario = "ok"

[hosts.demo.profiles.qwen36-mtp]
model = "Qwen/Qwen3.6-27B"
tp = 2
port = 30000
args = ["--mamba-scheduler-strategy", "extra_buffer"]
speculative = { algorithm = "NEXTN", num_steps = 1, eagle_topk = 1, num_draft_tokens = 2 }
env = { SGLANG_ENABLE_SPEC_V2 = "1" }
"""


def example_config() -> Config:
    """The example file, parsed: the built-in demo host comes from here."""
    return config_hosts.loads(EXAMPLE, Path("<built-in example>"))


def demo_host(cfg: Config) -> Host:
    """The user's `demo` host when it is simulated, else the built-in one from the example file."""
    host = cfg.host("demo")
    if host is not None and host.simulate is not None:
        return host
    return example_config().hosts["demo"]


def resolve_host(cfg: Config, name: str) -> Host:
    """A host by name: configured, the built-in demo, or an ssh target / ~/.ssh/config alias."""
    if name == "demo" and cfg.host(name) is None:
        return demo_host(cfg)
    return cfg.host_or_alias(name)


def write_example(path: Path, *, force: bool = False) -> Path | None:
    """Write the example to ``path``; an existing file is kept as ``.bak`` only when ``force``.

    Returns the backup's path, if one was made.
    """
    backup: Path | None = None
    if path.exists():
        if not force:
            raise FileExistsError(path)
        backup = path.with_name(path.name + ".bak")
        os.replace(path, backup)
    _write_atomically(path, EXAMPLE)
    return backup


def profile_values(profile: Profile) -> dict[str, Any]:
    """The TOML values of a profile; ``None`` marks a key that should be absent."""
    spec = {f.name: getattr(profile.speculative, f.name) for f in fields(Speculative)}
    default = Verify()
    verify = {f.name: getattr(profile.verify, f.name) for f in fields(Verify)}
    changed = {k: v for k, v in verify.items() if v != getattr(default, k)}
    # A default verification is left as the file has it (absent, or spelled out).
    extra: dict[str, Any] = {"verify": changed} if changed else {}
    return {
        "model": profile.model,
        "tp": profile.tp,
        "port": profile.port,
        "host": profile.host,
        "mem_fraction": profile.mem_fraction,
        "args": list(profile.args) or None,
        "speculative": spec if any(v is not None for v in spec.values()) else None,
        "env": dict(profile.env) or None,
        **extra,
    }


# Values equal to these are not written into a profile that does not already spell them out.
_PROFILE_DEFAULTS: dict[str, Any] = {"tp": 1, "port": 30000, "host": "127.0.0.1"}


def save_profile(path: Path, host: str, profile: Profile) -> Config:
    """Write ``profile`` into host ``host`` of the file at ``path``, creating or updating it in place.

    Comments and key order are kept; a new profile is appended after the host's last one. The edited text
    is validated before it replaces the file, so a save never leaves a file that does not load.
    """
    import tomlkit  # only here: every command (and the dashboard's first frame) reads this module
    from tomlkit.container import Container
    from tomlkit.items import Table

    text = path.read_text(encoding="utf-8")
    doc = tomlkit.parse(text)
    hosts = doc.get("hosts")
    if not isinstance(hosts, Table | Container) or host not in hosts:
        raise ConfigError(path, None, f"hosts.{host}", "no such host in the file")
    host_table = hosts[host]
    profiles = host_table.get("profiles")
    if profiles is None:
        profiles = tomlkit.table(is_super_table=True)
        host_table["profiles"] = profiles
    target = profiles.get(profile.name)
    if target is None:
        # The comments that close the last profile introduce whatever follows it: keep them there.
        trailing = _pop_trailing(_last_table(profiles))
        target = tomlkit.table()
        profiles[profile.name] = target
        _update(target, profile_values(profile), defaults=_PROFILE_DEFAULTS)
        _last_table(target).value.body.extend(trailing)
    else:
        _update(target, profile_values(profile), defaults=_PROFILE_DEFAULTS)
    new_text = tomlkit.dumps(doc)
    saved = config_hosts.loads(new_text, path)
    _write_atomically(path, new_text)
    return saved


def _update(table: Any, values: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None) -> None:
    """Set the values that changed, drop the ones now absent, leave everything else as written."""
    for key, value in values.items():
        present = key in table
        if value is None:
            if present:
                del table[key]
        elif isinstance(value, dict):
            if not present:
                _add_key(table, key, _new_subtable(table))
            _update(table[key], value)
            for old in [k for k in table[key] if k not in value]:
                del table[key][old]
        elif not present:
            if defaults is None or defaults.get(key, object()) != value:
                _add_key(table, key, value)
        elif _plain(table[key]) != value:
            table[key] = value


def _add_key(table: Any, key: str, value: Any) -> None:
    """Add after the table's last key, not after the comments and blank lines that end it.

    Those trailing lines usually introduce the next table; a key appended below them would read as if
    it belonged to that next section.
    """
    trailing = _pop_trailing(table)
    table[key] = value
    if trailing:
        table.value.body.extend(trailing)


def _pop_trailing(table: Any) -> list[Any]:
    """Remove and return the comments and blank lines after a table's last key."""
    from tomlkit.items import Table

    body = table.value.body if isinstance(table, Table) else []
    trailing: list[Any] = []
    while body and body[-1][0] is None:
        trailing.insert(0, body.pop())
    return trailing


def _last_table(table: Any) -> Any:
    """The table written last inside ``table`` (itself when it holds no sub-table at its end)."""
    from tomlkit.items import Table

    if not isinstance(table, Table):
        return table
    for key, item in reversed(table.value.body):
        if key is not None:
            return _last_table(item) if isinstance(item, Table) else table
    return table


def _new_subtable(parent: Any) -> Any:
    """A table inside an inline table must be inline too; elsewhere it gets its own [header]."""
    import tomlkit
    from tomlkit.items import InlineTable

    return tomlkit.inline_table() if isinstance(parent, InlineTable) else tomlkit.table()


def _plain(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


def _write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` without a moment where a reader sees half a file; keep its permissions."""
    try:
        mode = path.lstat().st_mode & 0o777 if path.is_file() and not path.is_symlink() else 0o600
    except OSError:
        mode = 0o600
    safefile.write_text(path, text, mode=mode)  # a random name at that mode from its first byte, renamed
