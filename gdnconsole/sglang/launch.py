"""A launch profile as the exact argv and environment SGLang will receive.

Each value becomes exactly one argv element: nothing here is ever joined into a shell string.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from gdnconsole.config.hosts import Profile
from gdnconsole.sglang.profileargv import PROFILE_FLAGS, SPECULATIVE_FLAGS

SERVER_MODULE = "sglang.launch_server"


@dataclass(frozen=True)
class LaunchSpec:
    """The interpreter and SGLang's flags, kept apart: the rules read ``args``, the host runs ``argv``."""

    python: str
    args: tuple[str, ...]  # SGLang's flags, what follows ``python -m sglang.launch_server``
    env: dict[str, str] = field(default_factory=dict)
    port: int = 30000

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.python, "-m", SERVER_MODULE, *self.args)


def server_args(profile: Profile) -> list[str]:
    """The SGLang flags of a profile, in the order an operator would type them (profileargv's tables;
    its ``profile_from_argv`` reads them back)."""
    flags = PROFILE_FLAGS
    args = [flags["model"], profile.model, flags["tp"], str(profile.tp)]
    args += [flags["host"], profile.host, flags["port"], str(profile.port)]
    if profile.mem_fraction is not None:
        args += [flags["mem_fraction"], _number(profile.mem_fraction)]
    for name, flag in SPECULATIVE_FLAGS.items():
        value = getattr(profile.speculative, name)
        if value is not None:
            args += [flag, str(value)]
    args += list(profile.args)
    return args


def flag_value(argv: Sequence[str], names: Sequence[str]) -> str | None:
    """The value of the flag ``names`` (``--tp 2`` or ``--tp=2``) in a command line; the last one wins,
    as with argparse. None when it is absent."""
    value: str | None = None
    for i, word in enumerate(argv):
        name, eq, rest = word.partition("=")
        if name in names:
            value = rest if eq else (argv[i + 1] if i + 1 < len(argv) else None)
    return value


def launch_spec(profile: Profile, python: str = "python3") -> LaunchSpec:
    return LaunchSpec(python, tuple(server_args(profile)), env=dict(profile.env), port=profile.port)


def _number(value: float) -> str:
    """0.85 stays "0.85", not "0.8500000000000001"."""
    return repr(float(value)).rstrip("0").rstrip(".") if "e" not in repr(value) else repr(value)


# -- secrets ---------------------------------------------------------------------------------------

# The flags whose value is a credential (SGLang's own, `sglang serve --help`).
SECRET_FLAGS = ("--api-key", "--admin-api-key", "--ssl-keyfile-password")
_REDACTED = re.compile(r"<redacted:[0-9a-f]{6}>\Z")
MASK_PREFIX = "<redacted"


def is_masked(value: str) -> bool:
    """Whether ``value`` is a mask, or what is left of one after an edit (``<redacted:1ec1``): never a
    real value, so never a value to save or run."""
    return MASK_PREFIX in value


def _mask(value: str) -> str:
    """A stand-in that hides the value but still shows when it changed (6 hex digits of its hash)."""
    return f"<redacted:{hashlib.sha256(value.encode()).hexdigest()[:6]}>"


# Flags that are a prefix of a secret flag but are flags of their own (argparse takes an exact name first).
_NOT_SECRET = frozenset({"--ssl-keyfile"})
_ENV_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def is_secret_flag(name: str) -> bool:
    """A secret flag, or a prefix of one: SGLang's argparse takes ``--api-k KEY`` for ``--api-key``
    (allow_abbrev, FACTS §4), so an abbreviation carries the key just the same."""
    return name in SECRET_FLAGS or (
        len(name) >= 4 and name not in _NOT_SECRET and any(f.startswith(name) for f in SECRET_FLAGS)
    )


def _secret_word(name: str) -> bool:
    """The part before ``=`` of a word whose value is a secret: a secret flag, or an environment
    assignment such as ``HF_TOKEN=…`` in a command line started through ``env``."""
    return is_secret_flag(name) or (_ENV_WORD.match(name) is not None and is_secret_env(name))


def redact(argv: Sequence[str]) -> list[str]:
    """``argv`` with the values of secret flags (the API keys) masked, for anything shown or stored."""
    out: list[str] = []
    secret_next = False
    for word in argv:
        name, eq, value = word.partition("=")
        if secret_next:
            out.append(word if _REDACTED.match(word) else _mask(word))
        elif eq and _secret_word(name) and not _REDACTED.match(value):
            out.append(f"{name}={_mask(value)}")
        else:
            out.append(word)
        secret_next = is_secret_flag(word)
    return out


# Environment variables whose values are credentials (HF_TOKEN, OPENAI_API_KEY, *_SECRET…): masked as the
# API-key flags are, wherever an environment is shown or stored.
SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASS|CREDENTIAL", re.I)


def is_secret_env(name: str) -> bool:
    return SECRET_ENV.search(name) is not None


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with the values of secret-looking names masked (``HF_TOKEN=<redacted:…>``)."""
    return {
        name: (value if not is_secret_env(name) or _REDACTED.match(value) else _mask(value))
        for name, value in env.items()
    }


def secret_values(argv: Sequence[str], env: Mapping[str, str]) -> tuple[str, ...]:
    """The real values that ``redact`` and ``redact_env`` mask in this command line and environment: what
    a screen showing them masked needs to put them back."""
    pairs = [(real, masked) for real, masked in zip(argv, redact(argv), strict=True) if real != masked]
    values = [real if masked.startswith(MASK_PREFIX) else real.partition("=")[2] for real, masked in pairs]
    return (*values, *(value for name, value in env.items() if is_secret_env(name)))


def profile_secrets(profiles: Iterable[Profile]) -> tuple[str, ...]:
    """Every secret value the profiles hold: what free text about their host (a launcher's error, an
    alert) is masked with."""
    return tuple(value for p in profiles for value in secret_values(server_args(p), p.env))


def mask_known(text: str, real: Sequence[str]) -> str:
    """``text`` (a host's or SGLang's own words, which may echo an argument) with each of the secret
    values ``real`` masked wherever it occurs; values under 4 characters are too common to look for."""
    for value in sorted({v for v in real if len(v) >= 4}, key=len, reverse=True):
        text = text.replace(value, _mask(value))
    return text


def unmask(value: str, real: Sequence[str]) -> str:
    """The one of ``real`` whose mask ``value`` is; ``value`` itself when it is none of theirs."""
    return next((candidate for candidate in real if _mask(candidate) == value), value)


def restore_env(env: Mapping[str, str], source: Mapping[str, str]) -> dict[str, str]:
    """Put back the masked values that ``source`` (an environment with the real values) has."""
    real = {_mask(value): value for value in source.values()}
    return {name: real.get(value, value) for name, value in env.items()}


def restore_secrets(argv: Sequence[str], source: Sequence[str]) -> list[str]:
    """Put back the masked values that ``source`` (a command line with the real keys) has."""
    real = {_mask(word): word for word in source} | {
        _mask(word.partition("=")[2]): word.partition("=")[2] for word in source if "=" in word
    }
    out: list[str] = []
    for word in argv:
        name, eq, value = word.partition("=")
        if _REDACTED.match(word):
            out.append(real.get(word, word))
        elif eq and _REDACTED.match(value):
            out.append(f"{name}={real.get(value, value)}")
        else:
            out.append(word)
    return out
