"""Which SGLang flag each Profile field is, both ways: the tables ``launch.server_args`` writes a profile's
flags from, and the way back, from a command line (a journal's attempt) to the profile it came from.

The flag names are SGLang's own (flagtables.py, read from 0.5.11 and 0.5.23 srt/server_args.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from gdnconsole.config.hosts import Profile, Speculative

# The flag each scalar Profile field becomes, in the order ``server_args`` writes them.
PROFILE_FLAGS: dict[str, str] = {
    "model": "--model-path",
    "tp": "--tp-size",
    "host": "--host",
    "port": "--port",
    "mem_fraction": "--mem-fraction-static",
}

# The flag each speculative setting becomes (`sglang serve --help`, FACTS §4.1).
SPECULATIVE_FLAGS: dict[str, str] = {
    "algorithm": "--speculative-algorithm",
    "num_steps": "--speculative-num-steps",
    "eagle_topk": "--speculative-eagle-topk",
    "num_draft_tokens": "--speculative-num-draft-tokens",
    "draft_model": "--speculative-draft-model-path",
}

# Other spellings of those flags read back into their field: SGLang's aliases (``--model``,
# ``--speculative-draft-model``) and ``--tp``, an abbreviation of ``--tp-size`` argparse takes
# (allow_abbrev). Any other spelling stays in the extra args, where SGLang still reads it.
_SCALAR_SPELLINGS = {"--model": "model", "--tp": "tp"}
_SPECULATIVE_SPELLINGS = {"--speculative-draft-model": "draft_model"}

# The flag, in any spelling read back, → the field it sets.
SCALAR_FIELDS: dict[str, str] = {flag: name for name, flag in PROFILE_FLAGS.items()} | _SCALAR_SPELLINGS
SPECULATIVE_FIELDS: dict[str, str] = {
    flag: name for name, flag in SPECULATIVE_FLAGS.items()
} | _SPECULATIVE_SPELLINGS

# The Profile fields that are no flag of their own, and where each goes instead.
NOT_FLAGS: dict[str, str] = {
    "name": "the profile's own name, given beside the command line",
    "env": "the server's environment, beside the command line",
    "speculative": "one flag per setting, SPECULATIVE_FLAGS",
    "args": "the flags no field holds, verbatim and in order, after the others",
    "verify": "gdnconsole's check once the server is up; SGLang never sees it",
}


def profile_from_argv(name: str, argv: Sequence[str], env: Mapping[str, str], base: Profile) -> Profile:
    """The profile whose command line is ``argv`` (the interpreter and module before the first flag are
    dropped). Flags the form has no field for stay, in order, in the extra args; ``base`` fills the
    rest (an absent model, tp, port or host, and ``verify``). The last of a repeated flag wins, as
    with argparse."""
    words = list(argv)
    start = next((i for i, w in enumerate(words) if w.startswith("--")), len(words))
    scalars: dict[str, str] = {}
    spec: dict[str, str] = {}
    rest: list[str] = []
    i = start
    while i < len(words):
        flag, eq, inline = words[i].partition("=")
        target = scalars if flag in SCALAR_FIELDS else spec if flag in SPECULATIVE_FIELDS else None
        has_value = bool(eq) or (i + 1 < len(words) and not words[i + 1].startswith("--"))
        if target is None or not has_value:
            rest.append(words[i])
            i += 1
            continue
        value = inline if eq else words[i + 1]
        target[(SCALAR_FIELDS | SPECULATIVE_FIELDS)[flag]] = value
        i += 1 if eq else 2
    return _assemble(name, base, scalars, spec, tuple(rest), env)


def _assemble(
    name: str,
    base: Profile,
    scalars: Mapping[str, str],
    spec: Mapping[str, str],
    rest: tuple[str, ...],
    env: Mapping[str, str],
) -> Profile:
    def number(key: str, source: Mapping[str, str], kind: type[int] | type[float]) -> int | float | None:
        text = source.get(key)
        try:
            return kind(text) if text is not None else None
        except ValueError:
            return None

    ints = {k: number(k, spec, int) for k in ("num_steps", "eagle_topk", "num_draft_tokens")}
    speculative = Speculative(
        algorithm=spec.get("algorithm"),
        num_steps=_as_int(ints["num_steps"]),
        eagle_topk=_as_int(ints["eagle_topk"]),
        num_draft_tokens=_as_int(ints["num_draft_tokens"]),
        draft_model=spec.get("draft_model"),
    )
    tp, port = number("tp", scalars, int), number("port", scalars, int)
    fraction = number("mem_fraction", scalars, float)
    return replace(
        base,
        name=name,
        model=scalars.get("model", base.model),
        tp=_as_int(tp) or base.tp,
        port=_as_int(port) or base.port,
        host=scalars.get("host", base.host),
        mem_fraction=float(fraction) if fraction is not None else None,
        env=dict(env),
        speculative=speculative,
        args=rest,
    )


def _as_int(value: int | float | None) -> int | None:
    return int(value) if isinstance(value, int) else None
