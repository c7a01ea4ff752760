"""The flag form's model, with no Textual: what the user typed (kept verbatim, even when it is invalid),
the Profile it makes, and the errors that keep it from making one.

The form never resets a field: an invalid number stays on screen, marked, until the user fixes it. So the
typed text is the state, and a Profile is derived from it on every change.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace

from gdnconsole.config.hosts import Profile, Speculative
from gdnconsole.logs.textsafe import shell_line
from gdnconsole.sglang.launch import (
    LaunchSpec,
    is_masked,
    redact,
    redact_env,
    restore_secrets,
    secret_values,
    unmask,
)
from gdnconsole.sglang.profileargv import SCALAR_FIELDS, SPECULATIVE_FIELDS
from gdnconsole.sglang.rulekit import mamba_option

ALGORITHMS = ("NEXTN", "EAGLE", "EAGLE3", "STANDALONE", "NGRAM", "DFLASH")
MAMBA_CHOICES = ("auto", "no_buffer", "extra_buffer")
OLD_MAMBA_FLAG = "--mamba-scheduler-strategy"  # 0.5.11 … 0.5.20 (a deprecated alias from 0.5.14)
NEW_MAMBA_FLAG = "--mamba-radix-cache-strategy"  # 0.5.14 and later
MAMBA_FLAGS = (OLD_MAMBA_FLAG, NEW_MAMBA_FLAG)

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Which form field an SGLang flag is edited in (the profile's own tables, less ``--host``, which the form
# takes from the profile unedited, plus the mamba strategy); a flag not listed here lives in the extra args.
FLAG_FIELDS: dict[str, str] = {
    **{flag: name for flag, name in SCALAR_FIELDS.items() if name != "host"},
    **SPECULATIVE_FIELDS,
    OLD_MAMBA_FLAG: "mamba",
    NEW_MAMBA_FLAG: "mamba",
}


def mamba_flag(sglang: str | None) -> str:
    """The mamba strategy flag this SGLang version has, as the rule tables spell it (the new name from
    0.5.14, where the old one became a deprecated alias; gone by 0.5.22). An unknown version gets the
    older name, which the reference deployment (0.5.11) has."""
    return mamba_option(sglang) if sglang else OLD_MAMBA_FLAG


def field_of(flag: str | None) -> str:
    """The form field a rule's flag concerns: "" for no flag (the whole form), "args" for any other."""
    if flag is None:
        return ""
    return FLAG_FIELDS.get(flag.split("=", 1)[0], "args")


@dataclass(frozen=True)
class FormValues:
    """The text of every field, as typed. ``algorithm`` and ``mamba`` are "" when not given."""

    model: str = ""
    tp: str = "1"
    port: str = "30000"
    mem_fraction: str = ""
    algorithm: str = ""
    num_steps: str = ""
    eagle_topk: str = ""
    num_draft_tokens: str = ""
    draft_model: str = ""
    mamba: str = ""
    env: str = ""
    args: str = ""

    def with_field(self, name: str, text: str) -> FormValues:
        return replace(self, **{name: text})


FIELD_NAMES = tuple(f.name for f in fields(FormValues))


@dataclass(frozen=True)
class Parsed:
    """The profile the values make (None while any field is invalid), and each invalid field's reason."""

    profile: Profile | None
    errors: dict[str, str]
    args: tuple[str, ...]  # the extra args as parsed, shown so there is no doubt what reaches SGLang


# -- profile → text --------------------------------------------------------------------------------


def values_of(profile: Profile, *, secrets: bool = False) -> FormValues:
    """The text of each field; API keys and tokens masked unless ``secrets`` (the operator revealed them)."""
    spec = profile.speculative
    mamba, extra = split_mamba(profile.args)
    return FormValues(
        model=profile.model,
        tp=str(profile.tp),
        port=str(profile.port),
        mem_fraction="" if profile.mem_fraction is None else _number(profile.mem_fraction),
        algorithm=spec.algorithm or "",
        num_steps=_opt(spec.num_steps),
        eagle_topk=_opt(spec.eagle_topk),
        num_draft_tokens=_opt(spec.num_draft_tokens),
        draft_model=spec.draft_model or "",
        mamba=mamba,
        env=env_text(profile.env, secrets=secrets),
        args=args_text(extra if secrets else tuple(redact(extra))),
    )


def env_text(env: Mapping[str, str], *, secrets: bool = False) -> str:
    """One ``NAME=VALUE`` line each; credential-looking values masked unless ``secrets``."""
    return "\n".join(f"{k}={v}" for k, v in (env if secrets else redact_env(env)).items())


def split_mamba(args: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The mamba strategy (either spelling, ``--flag v`` or ``--flag=v``) and the remaining args."""
    rest: list[str] = []
    value = ""
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if name in MAMBA_FLAGS and eq:
            value = inline
        elif arg in MAMBA_FLAGS and i + 1 < len(args):
            value = args[i + 1]
            i += 1
        else:
            rest.append(arg)
        i += 1
    return value, tuple(rest)


def args_text(args: tuple[str, ...]) -> str:
    """One line per flag with its value (``--flag value``), each part shell-quoted when it needs it."""
    lines: list[list[str]] = []
    for arg in args:
        if lines and lines[-1][0].startswith("-") and len(lines[-1]) == 1 and not arg.startswith("-"):
            lines[-1].append(arg)
        else:
            lines.append([arg])
    return "\n".join(shlex.join(line) for line in lines)


def _opt(value: int | None) -> str:
    return "" if value is None else str(value)


def _number(value: float) -> str:
    return f"{value:g}"


# -- text → profile --------------------------------------------------------------------------------


def parse(values: FormValues, base: Profile, mamba: str, known: Sequence[str] = ()) -> Parsed:
    """The profile ``values`` describe (name, bind host from ``base``); ``mamba``: the flag to write. A
    masked value becomes the real one it stands for, from ``base`` or ``known`` (values typed while
    revealed); a mask that stands for none of them is an error, so no mask is ever saved or run."""
    errors: dict[str, str] = {}
    real = (*secret_values(base.args, base.env), *known)

    def integer(name: str, lo: int, hi: int | None = None, *, optional: bool = False) -> int | None:
        text = getattr(values, name).strip()
        if not text and optional:
            return None
        if not re.fullmatch(r"[+]?\d+", text) or int(text) < lo or (hi is not None and int(text) > hi):
            upto = f" to {hi}" if hi is not None else " or more"
            errors[name] = f"expected a whole number from {lo}{upto}" + (", or empty" if optional else "")
            return None
        return int(text)

    tp = integer("tp", 1)
    port = integer("port", 1, 65535)
    steps = integer("num_steps", 1, optional=True)
    topk = integer("eagle_topk", 1, optional=True)
    draft = integer("num_draft_tokens", 1, optional=True)
    fraction = _fraction(values.mem_fraction, errors)
    if not values.model.strip():
        errors["model"] = "the model path or Hugging Face id is required"
    env = unmask_env(parse_env(values.env, errors), real, errors)
    extra = unmask_args(parse_args(values.args, errors), real, errors)
    if errors or tp is None or port is None:
        return Parsed(None, errors, extra)
    speculative = Speculative(
        algorithm=values.algorithm or None,
        num_steps=steps,
        eagle_topk=topk,
        num_draft_tokens=draft,
        draft_model=values.draft_model.strip() or None,
    )
    mamba_args = (mamba, values.mamba) if values.mamba else ()
    profile = replace(
        base,
        model=values.model.strip(),
        tp=tp,
        port=port,
        mem_fraction=fraction,
        env=env,
        speculative=speculative,
        args=(*mamba_args, *extra),
    )
    return Parsed(profile, {}, extra)


def _fraction(text: str, errors: dict[str, str]) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        errors["mem_fraction"] = "expected a number in (0, 1], e.g. 0.85, or empty for SGLang's choice"
        return None
    return value


def parse_env(text: str, errors: dict[str, str]) -> dict[str, str]:
    """``KEY=VALUE`` lines; blank lines and ``#`` comments are skipped; the value is kept verbatim."""
    env: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, eq, value = line.partition("=")
        if not eq or not _ENV_NAME.match(key.strip()):
            errors["env"] = f"line {number}: expected NAME=VALUE, e.g. SGLANG_ENABLE_SPEC_V2=1"
            continue
        env[key.strip()] = value
    return env


UNKNOWN_MASK = "holds a masked value (<redacted:…>) that stands for no key the form knows: type the real one"


def unmask_env(env: dict[str, str], real: Sequence[str], errors: dict[str, str]) -> dict[str, str]:
    out = {name: unmask(value, real) for name, value in env.items()}
    left = [name for name, value in out.items() if is_masked(value)]
    if left:
        errors["env"] = f"{left[0]} {UNKNOWN_MASK}"
    return out


def unmask_args(args: tuple[str, ...], real: Sequence[str], errors: dict[str, str]) -> tuple[str, ...]:
    out = tuple(restore_secrets(args, real))
    at = next((i for i, word in enumerate(out) if is_masked(word)), None)
    if at is not None:
        flag, eq, _value = out[at].partition("=")
        owner = flag if eq and flag.startswith("-") else out[at - 1] if at else "the first argument"
        errors["args"] = f"{owner} {UNKNOWN_MASK}"
    return out


def parse_args(text: str, errors: dict[str, str]) -> tuple[str, ...]:
    """Each line split like a shell would (quotes group, nothing is expanded or executed)."""
    out: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            out += shlex.split(line, comments=False, posix=True)
        except ValueError as exc:
            errors["args"] = f"line {number}: {exc} (close the quote, or put the argument on its own line)"
    return tuple(out)


# -- what will run ---------------------------------------------------------------------------------


def command_text(spec: LaunchSpec, *, secrets: bool = False) -> str:
    """The exact command, pasteable into a shell: ``env K=V … python3 -m sglang.launch_server …``. API
    keys and tokens are masked unless ``secrets`` (the user copies the command to run it). A word with a
    control or format character is written in bash's ANSI-C quoting: exact, and never sent raw."""
    env_values = spec.env if secrets else redact_env(spec.env)
    argv = list(spec.argv) if secrets else redact(spec.argv)
    env = [f"{k}={v}" for k, v in env_values.items()]
    return shell_line(["env", *env, *argv] if env else argv)
