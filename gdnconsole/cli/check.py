"""`gdnconsole check [--host HOST | --sglang VERSION ...] [--json] -- SGLANG_ARGV...`: our rule tables on
an argv, nothing launched. Exit 0 when SGLang would accept it, 1 when a rule fails, 2 for a usage error
(a version that is not one included). Every error is listed, the one SGLang stops at first marked; the
header names the rule set applied, and a version outside the rule sets' range is warned about."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from gdnconsole import readback
from gdnconsole.cli.common import fail, host_named
from gdnconsole.config.hosts import Host
from gdnconsole.host import modelconfig
from gdnconsole.host.link import LinkState
from gdnconsole.host.modelconfig import ModelConfig
from gdnconsole.logs.textsafe import visible_lines
from gdnconsole.sglang import flags as flagmod
from gdnconsole.sglang.models import architecture_of, hf_cache_dir
from gdnconsole.sglang.rules import CheckResult, check
from gdnconsole.sglang.versions import VersionError, validate, validate_capability


def _model_of(argv: Sequence[str], sglang: str) -> str:
    return str(flagmod.parse_argv(argv, sglang).values.get("model_path") or "")


def local_model_config(model: str) -> ModelConfig:
    """config.json of a local model directory, else from this machine's Hugging Face cache; read as
    untrusted (a FIFO is not waited on, a damaged file is no config and one warning)."""
    candidates = [Path(model).expanduser() / "config.json"]
    cache = hf_cache_dir(model)
    if cache:  # where huggingface_hub keeps it: HF_HUB_CACHE, else HF_HOME/hub
        home = os.environ.get("HF_HOME") or "~/.cache/huggingface"
        hub = Path(os.environ.get("HF_HUB_CACHE") or Path(home) / "hub").expanduser() / cache / "snapshots"
        candidates += sorted(hub.glob("*/config.json"))
    for path in candidates:
        try:
            data = readback.read_regular(path, modelconfig.LIMIT)
        except OSError as exc:
            if exc.errno == errno.EFBIG:
                return modelconfig.too_large(model)
            continue
        return modelconfig.parse(data.decode("utf-8", "replace"), model)
    return ModelConfig()


def local_config_json(model: str) -> dict[str, Any] | None:
    return local_model_config(model).config


async def host_facts(host: Host, timeout: float) -> tuple[str, str | None, int | None, float | None]:
    """(SGLang version, compute capability, GPU count, first GPU's memory in MiB) from the host's agent:
    the session's facts, as the flag form and the launcher read them."""
    from gdnconsole.cli.status import look

    session = await look(host, timeout=timeout)
    if session.link is not LinkState.CONNECTED or not session.hello:
        fail(f"cannot reach {host.name}: {session.link_message or session.link.value}")
    facts = session.facts
    if not facts.sglang:
        fail(f"{host.name} has no SGLang installed")
    return facts.sglang, facts.compute_capability, facts.gpus, facts.gpu_memory_mb


async def host_model_config(host: Host, model: str, timeout: float) -> ModelConfig:
    """The model's config.json as the host holds it (remembered for ``config check``)."""
    return await modelconfig.fetch(host, model, timeout=timeout)


def _valid_version(text: str, what: str) -> str:
    try:
        return validate(text)
    except VersionError as exc:
        fail(f"{what}: {exc}")


def _valid_capability(text: str | None) -> str | None:
    try:
        return validate_capability(text) if text is not None else None
    except VersionError as exc:
        fail(f"--compute-capability: {exc}")


def render(result: CheckResult) -> str:
    count = len(result.errors)
    verdict = "ok" if result.ok else f"would fail ({count} error{'s' if count != 1 else ''})"
    lines = [f"SGLang {result.sglang} (rule set {result.rule_set}): {verdict}"]
    lines += [f"warning: {w}" for w in result.warnings]
    for finding in result.errors:
        where = "SGLang stops here first" if finding.sglang_first else "also, once that is fixed"
        lines.append(f"error [{finding.id}] {finding.flag or ''}".rstrip() + f" ({where})")
        lines.append(f"  {finding.message}")
        lines.append(f"  source: {finding.source}")
    for finding in result.notices:
        lines.append(f"notice [{finding.id}] {finding.message}")
    return "\n".join(lines)


@click.command("check", context_settings={"ignore_unknown_options": True})
@click.option("--host", "host_name", metavar="HOST", help="Read SGLang version and GPUs from this host.")
@click.option("--sglang", "version", metavar="VERSION", help="The SGLang version to check against.")
@click.option("--compute-capability", metavar="X.Y", help="The GPU's compute capability (e.g. 8.6).")
@click.option("--gpus", type=click.IntRange(min=0), help="How many GPUs the host has.")
@click.option(
    "--gpu-memory",
    type=click.FloatRange(min=1),
    metavar="GIB",
    help="One GPU's memory in GiB (SGLang picks its chunked prefill size from it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option("--timeout", type=click.FloatRange(min=1), default=30.0, show_default=True)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, metavar="-- SGLANG_ARGV...")
def check_cmd(
    host_name: str | None,
    version: str | None,
    compute_capability: str | None,
    gpus: int | None,
    gpu_memory: float | None,
    as_json: bool,
    timeout: float,
    argv: tuple[str, ...],
) -> None:
    """Check SGLang server flags against the rules of that SGLang version, without launching anything."""
    if (host_name is None) == (version is None):
        fail("give exactly one of --host HOST or --sglang VERSION")
    if host_name is not None and (compute_capability or gpus is not None or gpu_memory is not None):
        fail(
            "--compute-capability, --gpus and --gpu-memory go with --sglang; with --host they come from "
            "the host"
        )
    if not argv:
        fail("no SGLang flags to check: put them after --")
    args = list(argv)
    memory_mb = gpu_memory * 1024 if gpu_memory is not None else None
    if host_name is not None:
        host = host_named(host_name)
        version, compute_capability, gpus, memory_mb = asyncio.run(host_facts(host, timeout))
        version = _valid_version(version, f"{host.name} reports SGLang")
        model = _model_of(args, version)
        read = asyncio.run(host_model_config(host, model, timeout))
    else:
        assert version is not None
        version = _valid_version(version, "--sglang")
        compute_capability = _valid_capability(compute_capability)
        model = _model_of(args, version)
        read = local_model_config(model) if model else ModelConfig()
    if read.warning:  # on stderr: --json prints exactly one object
        click.echo(visible_lines(f"warning: {read.warning}"), err=True)
    result = check(
        args,
        sglang=version,
        compute_capability=compute_capability,
        gpus=gpus,
        architecture=architecture_of(model, read.config) if model else None,
        gpu_memory_mb=memory_mb,
        model_config=read.config,
    )
    click.echo(json.dumps(result.to_json()) if as_json else visible_lines(render(result)))
    sys.exit(0 if result.ok else 1)
