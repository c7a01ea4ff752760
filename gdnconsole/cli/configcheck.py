"""`config check`, its second half: our SGLang rules on every launch profile of the hosts file (issue 17).

A profile is checked for its host's SGLang version and GPUs as this machine knows them without connecting:
what ``--sglang`` and friends say, what the file configures (a simulated host's ``simulate`` table), or
what the host said of itself the last time a console reached it (host/seenfacts.py). A host whose version
is not known here is named, not guessed. Each error is printed as ``file:line: key:``
of the profile value it concerns, then the rule and its message; every error of every profile, the one
SGLang stops at first marked.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gdnconsole.cli.common import fail
from gdnconsole.config import tomlpos
from gdnconsole.config.hosts import Config, Host, Profile
from gdnconsole.host import seenfacts
from gdnconsole.host.profilecheck import kept_model_config
from gdnconsole.sglang.findings import Finding
from gdnconsole.sglang.hostfacts import HostFacts
from gdnconsole.sglang.launch import server_args
from gdnconsole.sglang.profilerules import check_profile, model_of
from gdnconsole.sglang.rules import CheckResult
from gdnconsole.sglang.versions import VersionError, validate, validate_capability

# The profile key a flag comes from (launch.server_args); any other flag comes from ``args``.
PROFILE_KEYS: dict[str, tuple[str, ...]] = {
    "--model-path": ("model",),
    "--tp-size": ("tp",),
    "--host": ("host",),
    "--port": ("port",),
    "--mem-fraction-static": ("mem_fraction",),
    "--speculative-algorithm": ("speculative", "algorithm"),
    "--speculative-num-steps": ("speculative", "num_steps"),
    "--speculative-eagle-topk": ("speculative", "eagle_topk"),
    "--speculative-num-draft-tokens": ("speculative", "num_draft_tokens"),
    "--speculative-draft-model-path": ("speculative", "draft_model"),
}


@dataclass(frozen=True)
class Facts:
    """What the rules need of a host (its SGLang version known), and where it came from (said in the
    output)."""

    host: HostFacts
    origin: str

    @property
    def sglang(self) -> str:
        return self.host.sglang or ""


def given_facts(
    version: str | None, compute_capability: str | None, gpus: int | None, gpu_memory_gib: float | None
) -> Facts | None:
    """The command's options as facts for every host; a usage error (exit 2) when they do not add up."""
    if version is None:
        if compute_capability or gpus is not None or gpu_memory_gib is not None:
            fail("--compute-capability, --gpus and --gpu-memory go with --sglang")
        return None
    try:
        version = validate(version)
    except VersionError as exc:
        fail(f"--sglang: {exc}")
    try:
        compute_capability = validate_capability(compute_capability) if compute_capability else None
    except VersionError as exc:
        fail(f"--compute-capability: {exc}")
    memory = gpu_memory_gib * 1024 if gpu_memory_gib is not None else None
    return Facts(HostFacts(version, compute_capability, gpus, memory), "given with --sglang")


def facts_for(host: Host, given: Facts | None) -> Facts | None:
    """``given`` (the command's options) first, else a simulated host's configured GPUs, else what the host
    said of itself the last time a console reached it; None: unknown."""
    if given is not None:
        return given
    sim = host.simulate
    if sim is None:
        return last_seen(host)
    capability = sim.table.get("compute_capability", "8.6")  # the simulator's default (gdnsim/config.py)
    facts = HostFacts(sim.sglang, str(capability), sim.gpus, float(sim.gpu_mib))
    return Facts(facts, "configured in simulate")


def last_seen(host: Host) -> Facts | None:
    seen = seenfacts.recall(host.name)
    version = seen.facts.sglang if seen is not None else None
    if seen is None or version is None:
        return None
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(seen.time))
    return Facts(seen.facts, f"as the host said at {when}")


def seen_model_config(host: Host, profile: Profile) -> tuple[dict[str, Any] | None, str]:
    """The model's config.json as the host last showed it (issue 26) and how the header says so; none
    kept, or a kept one that is damaged: (None, "") and its checks are not run."""
    seen = kept_model_config(host.name, model_of(server_args(profile)))  # the model SGLang loads
    if seen is None:
        return None, ""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(seen.time))
    return seen.config, f"; its model's config.json as the host said at {when}"


def key_of(profile: Profile, finding: Finding) -> tuple[str, ...]:
    """The profile key a finding concerns: the field its flag comes from, else ``args``, else the table."""
    if finding.flag in PROFILE_KEYS and finding.flag not in profile.args:
        return PROFILE_KEYS[finding.flag]
    if finding.flag and any(arg.partition("=")[0] == finding.flag for arg in profile.args):
        return ("args",)
    return ()


def error_lines(
    path: Path, positions: tomlpos.Positions, host: Host, profile: Profile, result: CheckResult
) -> Iterable[str]:
    base = ("hosts", host.name, "profiles", profile.name)
    for finding in result.errors:
        key = (*base, *key_of(profile, finding))
        line = positions.line_of(key)
        where = f"{path}:{line}" if line else str(path)
        first = " (SGLang stops here first)" if finding.sglang_first else ""
        yield f"{where}: {'.'.join(key)}: error [{finding.id}]{first} {finding.message}"


def rule_report(cfg: Config, given: Facts | None) -> tuple[list[str], int, int]:
    """(lines to print, profiles checked, profiles SGLang would reject)."""
    text = cfg.path.read_text(encoding="utf-8")
    positions = tomlpos.scan(text)
    lines: list[str] = []
    checked = rejected = 0
    for host in cfg.hosts.values():
        facts = facts_for(host, given)
        if facts is None or not facts.sglang:
            if host.profiles:
                lines.append(
                    f"hosts.{host.name}: rules not run: its SGLang version is not known here (no console "
                    "has reached it yet: open it once, or give --sglang VERSION)"
                )
            continue
        for profile in host.profiles.values():
            model_config, model_origin = seen_model_config(host, profile)
            result = check_profile(profile, facts.host, model_config)
            if result is None:  # not reached: the version is known here
                continue
            checked += 1
            head = f"hosts.{host.name}.profiles.{profile.name}: SGLang {facts.sglang} "
            head += f"({facts.origin}{model_origin}; rule set {result.rule_set}): "
            lines += [f"warning: {w}" for w in result.warnings]
            if result.ok:
                lines.append(head + "ok")
                continue
            rejected += 1
            count = len(result.errors)
            lines.append(head + f"would fail ({count} error{'s' if count != 1 else ''})")
            lines += error_lines(cfg.path, positions, host, profile, result)
    return lines, checked, rejected
