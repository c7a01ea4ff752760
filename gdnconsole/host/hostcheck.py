"""'Check on host': the host's own SGLang argument processing, run on an argv without launching anything.

One ``python -c SCRIPT`` runs on the host (over a fresh SSH connection, or as a local process): argparse,
``prepare_server_args(argv)``, then ``resolve_once()`` on 0.5.22+ and ``check_server_args()`` (FACTS §0,
§5). It loads no weights. The argvs travel as JSON on stdin, so no value ever meets a shell; the command
line itself is quoted element by element. Several argvs share one interpreter (imports cost seconds).
Also reads a model's ``config.json`` on the host, for the architecture the rules need.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gdnconsole import readback
from gdnconsole.config.hosts import Host
from gdnconsole.errors import ConsoleError
from gdnconsole.host import simulated
from gdnconsole.host.link import LinkError, LinkState, SshTarget
from gdnconsole.host.simhome import sim_environment
from gdnconsole.host.sshlink import SshLink

MARKER = "\x1egdnconsole-check "  # a line of ours on stdout, whatever SGLang prints around it

# Runs on the host with only the standard library and its SGLang. Every argv is processed in turn.
CHECK_SCRIPT = r"""
import contextlib, io, json, sys, time, traceback
from importlib import metadata
argvs = json.load(sys.stdin)
def version():
    try:
        return tuple(int(p) for p in metadata.version("sglang").split(".")[:3] if p.isdigit())
    except Exception:
        return (0, 0, 0)
from sglang.srt.server_args import prepare_server_args
pipeline = version() >= (0, 5, 22)
out = []
for argv in argvs:
    start = time.monotonic()
    err = io.StringIO()
    verdict = {"ok": True, "exception": None, "message": "", "traceback_tail": ""}
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            args = prepare_server_args(list(argv))
            if pipeline:
                args.resolve_once()
            args.check_server_args()
    except SystemExit as exc:
        lines = [l for l in err.getvalue().splitlines() if ": error: " in l]
        message = lines[-1].split(": error: ", 1)[1] if lines else str(exc)
        verdict = {"ok": False, "exception": "SystemExit", "message": message,
                   "traceback_tail": err.getvalue()[-2000:]}
    except Exception as exc:
        tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-4:])
        verdict = {"ok": False, "exception": type(exc).__name__, "message": str(exc),
                   "traceback_tail": tail[-2000:]}
    verdict["elapsed_s"] = round(time.monotonic() - start, 3)
    out.append(verdict)
sys.stdout.write("\n\x1egdnconsole-check " + json.dumps(out) + "\n")
"""

# A helper of ours, not SGLang: the working directory that `-c` puts first on sys.path is dropped before
# anything is imported (a `glob.py` there would run). CHECK_SCRIPT keeps it: it imports SGLang as the
# server's own `python -m sglang.launch_server` in that directory would.
READ_SCRIPT = r"""
import sys; sys.path[:] = [p for p in sys.path if p not in ("", ".")]
import glob, os
path = os.path.expanduser(sys.argv[1])
limit = int(sys.argv[2])
candidates = [os.path.join(path, "config.json")]
if sys.argv[3]:
    home = os.environ.get("HF_HOME") or "~/.cache/huggingface"
    hub = os.path.expanduser(os.environ.get("HF_HUB_CACHE") or os.path.join(home, "hub"))
    repo = os.path.join(hub, sys.argv[3])
    try:  # the revision Hugging Face resolves first: refs/main's snapshot
        with open(os.path.join(repo, "refs", "main"), "rb") as fh:
            main = fh.read(100).decode("ascii", "replace").strip()
        if main and os.sep not in main:
            candidates.append(os.path.join(repo, "snapshots", main, "config.json"))
    except OSError:
        pass
    candidates += sorted(glob.glob(os.path.join(repo, "snapshots", "*", "config.json")))
for candidate in candidates:
    if os.path.isfile(candidate):  # a regular file (through the cache's links), never a FIFO
        with open(candidate, "rb") as fh:
            sys.stdout.write(fh.read(limit + 1).decode("utf-8", "replace"))
        break
"""


@dataclass(frozen=True)
class HostVerdict:
    ok: bool
    exception: str | None  # the exception's type name ("AssertionError", "SystemExit" for argparse)
    message: str
    traceback_tail: str = ""
    elapsed_s: float = 0.0


class HostCheckError(ConsoleError):
    """The check itself could not run (no link, no Python, no SGLang, a timeout)."""


def _environment(host: Host, prepare: bool = True) -> tuple[dict[str, str], str | None]:
    """``prepare``: write the simulated host's settings first (a read of its files must not: a test or
    user that changed them since, for the servers started next, would see them reset)."""
    if host.simulate:
        home = simulated.sim_home(host)
        prepared = (home / "sim.json").is_file()  # a home never prepared is made, whatever ``prepare``
        env = sim_environment(home) if prepared and not prepare else simulated.environment(host)
        return env, str(simulated.workdir(host))
    return {}, host.workdir


def shell_command(argv: Sequence[str], env: Mapping[str, str], workdir: str | None) -> str:
    """One shell command line; every element quoted, and an operand (after ``--``), never an option."""
    parts = [f"cd -- {shlex.quote(workdir)} &&"] if workdir else []
    parts.append("exec env --")
    parts += [shlex.quote(f"{key}={value}") for key, value in env.items()]
    parts += [shlex.quote(arg) for arg in argv]
    return " ".join(parts)


async def run_on_host(
    host: Host,
    argv: Sequence[str],
    stdin: str,
    *,
    timeout: float,
    ssh: SshTarget | None = None,
    prepare: bool = True,
) -> tuple[int | None, str, str]:
    """Run ``argv`` on the host (its Python, its env) and return (exit status, stdout, stderr)."""
    env, workdir = _environment(host, prepare)
    if ssh is None and host.ssh is None:
        return await _run_local(argv, env, workdir, stdin, timeout)
    from gdnconsole.host.session import _target_of

    link = SshLink(ssh or _target_of(host))
    conn = await link.connect()
    try:
        command = shell_command(argv, env, workdir)
        result = await asyncio.wait_for(conn.run(command, input=stdin, check=False), timeout)
        return result.exit_status, str(result.stdout or ""), str(result.stderr or "")
    except TimeoutError:
        raise HostCheckError(f"the check on {host.name} took longer than {timeout:.0f} s") from None
    finally:
        conn.close()


async def _run_local(
    argv: Sequence[str], env: Mapping[str, str], workdir: str | None, stdin: str, timeout: float
) -> tuple[int | None, str, str]:
    cwd = os.path.expanduser(workdir) if workdir else None
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **env},
            cwd=cwd,
        )
    except OSError as exc:
        raise HostCheckError(f"cannot start {argv[0]!r}: {exc}") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode()), timeout)
    except TimeoutError:
        proc.kill()  # our own child, by its handle
        await proc.wait()
        raise HostCheckError(f"the check took longer than {timeout:.0f} s") from None
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def _verdicts(stdout: str, stderr: str, count: int) -> list[HostVerdict]:
    for line in reversed(stdout.split("\n")):
        if line.startswith(MARKER):
            raw = json.loads(line[len(MARKER) :])
            return [HostVerdict(**item) for item in raw]
    last = next((ln for ln in reversed(stderr.splitlines()) if ln.strip()), "no output")
    raise HostCheckError(f"the host's SGLang could not run the check: {last}")


async def check_many_on_host(
    host: Host, argvs: Sequence[Sequence[str]], *, timeout: float = 60.0, ssh: SshTarget | None = None
) -> list[HostVerdict]:
    """Verdicts of the host's SGLang on each argv, in one interpreter (imports are paid once)."""
    payload = json.dumps([list(argv) for argv in argvs])
    try:
        _, out, err = await run_on_host(
            host, [host.python, "-c", CHECK_SCRIPT], payload, timeout=timeout, ssh=ssh
        )
    except LinkError as exc:
        raise HostCheckError(f"cannot reach {host.name}: {exc}") from None
    return _verdicts(out, err, len(argvs))


async def check_on_host(
    host: Host, argv: Sequence[str], *, timeout: float = 60.0, ssh: SshTarget | None = None
) -> HostVerdict:
    """The host's SGLang verdict on one argv; a check that cannot run is a verdict too (never raises)."""
    start = time.monotonic()
    try:
        return (await check_many_on_host(host, [argv], timeout=timeout, ssh=ssh))[0]
    except HostCheckError as exc:
        return HostVerdict(False, "HostCheckError", str(exc), "", round(time.monotonic() - start, 3))


async def read_model_config_text(
    host: Host, model: str, hf_dir: str | None, *, limit: int = 1 << 20, timeout: float = 30.0,
    ssh: SshTarget | None = None,
) -> str | None:  # fmt: skip
    """The text of the model's config.json as the host sees it (a local directory, or the Hugging Face
    cache), up to ``limit`` + 1 bytes (more is too large); "" when it has none, None when unreachable.
    Untrusted: ``modelconfig.parse`` reads it."""
    argv = [host.python, "-c", READ_SCRIPT, model, str(limit), hf_dir or ""]
    try:
        status, out, _ = await run_on_host(host, argv, "", timeout=timeout, ssh=ssh, prepare=False)
    except (HostCheckError, LinkError, OSError):
        return None
    return out if status == 0 else None


async def read_model_config(
    host: Host, model: str, hf_dir: str | None, *, limit: int = 1 << 20, timeout: float = 30.0,
    ssh: SshTarget | None = None,
) -> dict[str, object] | None:  # fmt: skip
    """The model's config.json as the host sees it, parsed as untrusted JSON; None when unknown (the
    checks use ``modelconfig.fetch``, which also says why a file found is not used)."""
    text = await read_model_config_text(host, model, hf_dir, limit=limit, timeout=timeout, ssh=ssh)
    if not text or len(text) > limit:
        return None
    try:
        data = readback.loads_json(text)
    except readback.BadRecord:
        return None
    return data if isinstance(data, dict) else None


__all__ = [
    "HostCheckError",
    "HostVerdict",
    "LinkState",
    "check_many_on_host",
    "check_on_host",
    "read_model_config",
    "read_model_config_text",
    "shell_command",
]
