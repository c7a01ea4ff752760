"""``--set KEY=VALUE``: change one field of a launch profile from the command line.

Keys address the profile as the hosts file writes it: ``tp=2``, ``mem_fraction=0.8``, ``model=…``,
``speculative.eagle_topk=1``, ``env.SGLANG_ENABLE_SPEC_V2=1``, ``args+=--disable-radix-cache`` (one more
argument, exactly as given) and ``args=`` (no extra arguments). An empty value unsets an optional field.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from typing import Any

from gdnconsole.config.hosts import Profile
from gdnconsole.errors import ConsoleError

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class SetError(ConsoleError, ValueError):
    """A ``--set`` that names no field, or a value the field cannot take."""


def _int(lo: int, hi: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise SetError(f"expected an integer, found {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            raise SetError(
                f"expected an integer from {lo}" + (f" to {hi}" if hi else " up") + f", found {value}"
            )
        return value

    return parse


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SetError(f"expected a number in (0, 1], found {text!r}") from None
    if not 0 < value <= 1:
        raise SetError(f"expected a number in (0, 1], found {value}")
    return value


def _text(text: str) -> str:
    if not text:
        raise SetError("expected a non-empty value")
    return text


PROFILE_KEYS: dict[str, Callable[[str], Any]] = {
    "model": _text,
    "tp": _int(1),
    "port": _int(1, 65535),
    "host": _text,
    "mem_fraction": _fraction,
}
OPTIONAL = frozenset({"mem_fraction"})
SPECULATIVE_KEYS: dict[str, Callable[[str], Any]] = {
    "algorithm": _text,
    "num_steps": _int(1),
    "eagle_topk": _int(1),
    "num_draft_tokens": _int(1),
    "draft_model": _text,
}
KNOWN = ", ".join(
    [*PROFILE_KEYS, *(f"speculative.{k}" for k in SPECULATIVE_KEYS), "env.NAME", "args+", "args"]
)


def apply_sets(profile: Profile, assignments: Iterable[str]) -> Profile:
    for assignment in assignments:
        profile = apply_set(profile, assignment)
    return profile


def apply_set(profile: Profile, assignment: str) -> Profile:
    key, eq, value = assignment.partition("=")
    if not eq:
        raise SetError(f"--set {assignment!r}: expected KEY=VALUE (keys: {KNOWN})")
    try:
        return _apply(profile, key.strip(), value)
    except SetError as exc:
        raise SetError(f"--set {assignment!r}: {exc}") from None


def _apply(profile: Profile, key: str, value: str) -> Profile:
    if key == "args+":
        return dataclasses.replace(profile, args=(*profile.args, value))  # one argument, as given
    if key == "args":
        if value:
            raise SetError("args= only clears the extra arguments; add one with args+=VALUE")
        return dataclasses.replace(profile, args=())
    if key.startswith("env."):
        return _apply_env(profile, key[4:], value)
    if key.startswith("speculative."):
        name = key[len("speculative.") :]
        if name not in SPECULATIVE_KEYS:
            raise SetError(f"unknown key (keys: {KNOWN})")
        parsed = SPECULATIVE_KEYS[name](value) if value else None
        return dataclasses.replace(
            profile, speculative=dataclasses.replace(profile.speculative, **{name: parsed})
        )
    if key not in PROFILE_KEYS:
        raise SetError(f"unknown key (keys: {KNOWN})")
    changes: dict[str, Any] = {key: None if not value and key in OPTIONAL else PROFILE_KEYS[key](value)}
    return dataclasses.replace(profile, **changes)


def _apply_env(profile: Profile, name: str, value: str) -> Profile:
    if not _ENV_NAME.match(name):
        raise SetError(f"{name!r} is not an environment variable name")
    env = dict(profile.env)
    if value:
        env[name] = value
    else:
        env.pop(name, None)
    return dataclasses.replace(profile, env=env)
