"""SGLang's argument parser, read as data: what `sglang serve` would make of an argv, per version.

The tables come from the wheels (``flagtables``); the parsing follows Python's argparse as SGLang uses
it (``allow_abbrev`` on), so an unambiguous prefix (``--speculative-num-step 3``) is accepted, an ambiguous
one is refused the way argparse refuses it, and a flag the version does not have is "unrecognized". Versions
between the two wheels are mapped per FACTS §2.3. Pure: no I/O.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING

from gdnconsole.sglang.findings import Finding

if TYPE_CHECKING:
    from gdnconsole.sglang import flagtables

Version = tuple[int, int, int]
ARGPARSE_SOURCE = "argparse (allow_abbrev) in srt/server_args.py prepare_server_args"
SPEC_CHOICES_0_5_11 = ("DFLASH", "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")  # 511 server_args.py:5365
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def parse_version(text: str) -> Version:
    """``"0.5.11"`` → ``(0, 5, 11)``; suffixes such as ``.post1`` or ``rc2`` are ignored."""
    parts = [int(p) for p in re.findall(r"\d+", text)] + [0, 0, 0]
    return parts[0], parts[1], parts[2]


def dialect(sglang: str) -> str:
    """Which rule table applies: validation moved to ``resolve_once()`` in 0.5.22 (FACTS §0, §5)."""
    return "0.5.23" if parse_version(sglang) >= (0, 5, 22) else "0.5.11"


@dataclass(frozen=True)
class Flag:
    options: tuple[str, ...]
    dest: str
    kind: str  # "store", "flag" (no value) or "bool" (BooleanOptionalAction)
    type: str | None = None
    nargs: str | None = None
    choices: tuple[str, ...] | None = None
    required: bool = False
    alias_of: str | None = None  # a deprecated spelling: the flag an operator should write instead

    @property
    def name(self) -> str:
        """How argparse names it in its messages: ``--model-path/--model``."""
        return "/".join(self.options)


@dataclass(frozen=True)
class FlagTable:
    sglang: str
    flags: tuple[Flag, ...]
    by_option: dict[str, Flag] = field(repr=False)  # in the parser's registration order


# Choices SGLang fills from its parser registries when the parser is built, which the generated tables
# could not read (flagtables.py). 0.5.11: ReasoningParser.DetectorMap (srt/parser/reasoning_parser.py:542-561)
# and FunctionCallParser.ToolCallParserEnum (srt/function_call/function_call_parser.py:54-80). 0.5.23:
# "auto" and the name lists (srt/server_args.py:70-87, 367-385; srt/parser/reasoning_parser_names.py;
# srt/function_call/parser_names.py). Read through SGLang's own argparse from the wheels (issue 26).
REGISTRY_CHOICES_0_5_11: dict[str, tuple[str, ...]] = {
    "reasoning_parser": (
        "deepseek-r1",
        "deepseek-v3",
        "glm45",
        "hunyuan",
        "gpt-oss",
        "kimi",
        "kimi_k2",
        "mimo",
        "qwen3",
        "qwen3-thinking",
        "minimax",
        "minimax-append-think",
        "step3",
        "step3p5",
        "mistral",
        "nemotron_3",
        "interns1",
        "gemma4",
    ),
    "tool_call_parser": (
        "deepseekv3",
        "deepseekv31",
        "deepseekv32",
        "glm",
        "glm45",
        "glm47",
        "gpt-oss",
        "kimi_k2",
        "lfm2",
        "llama3",
        "mimo",
        "mistral",
        "pythonic",
        "qwen",
        "qwen25",
        "qwen3_coder",
        "step3",
        "step3p5",
        "minimax-m2",
        "trinity",
        "interns1",
        "hermes",
        "hunyuan",
        "gigachat3",
        "gemma4",
    ),
}
REGISTRY_CHOICES_0_5_23: dict[str, tuple[str, ...]] = {
    "reasoning_parser": (
        "auto",
        "apertus2509",
        "beam",
        "deepseek-r1",
        "deepseek-v3",
        "deepseek-v4",
        "deepseek-v41",
        "dots",
        "glm45",
        "ling3",
        "hunyuan",
        "gpt-oss",
        "k2_horizon",
        "kimi",
        "kimi_k2",
        "kimi_k3",
        "mimo",
        "muse",
        "poolside_v1",
        "qwen3",
        "qwen3-thinking",
        "minimax",
        "minimax-append-think",
        "minimax-m3",
        "nanbeige",
        "step3",
        "step3p5",
        "mistral",
        "nemotron_3",
        "granite_thinking_parser",
        "interns1",
        "gemma4",
        "inkling",
        "iquest_q1",
        "cohere_command4",
        "gigachat35",
        "response_template",
    ),
    "tool_call_parser": (
        "auto",
        "apertus2509",
        "beam",
        "cohere_command4",
        "deepseekv3",
        "deepseekv31",
        "deepseekv32",
        "deepseekv4",
        "deepseekv41",
        "dots",
        "glm",
        "glm45",
        "glm47",
        "gpt-oss",
        "k2_horizon",
        "kimi_k2",
        "kimi_k3",
        "lfm2",
        "ling3",
        "llama3",
        "mimo",
        "minicpm5",
        "mistral",
        "muse",
        "poolside_v1",
        "pythonic",
        "qwen",
        "qwen25",
        "qwen3_coder",
        "spark25",
        "step3",
        "step3p5",
        "minimax-m2",
        "minimax-m3",
        "nanbeige",
        "trinity",
        "interns1",
        "hermes",
        "hunyuan",
        "gigachat3",
        "gigachat35",
        "gemma4",
        "inkling",
        "iquest_q1",
        "response_template",
    ),
}


# Flags SGLang reads with ``human_readable_int`` (``32k``, ``1Mi``; 511 server_args.py:4267-4272, 4505,
# 4531; 523 arg_groups/fields/model.py:110-117, schedule.py:39-81, exec_.py:648-660). The generated tables
# name their type str (0.5.11) or int (0.5.23): both wrong for ``32k`` (issue 26).
HUMAN_INT_DESTS = frozenset(
    {"context_length", "max_total_tokens", "max_prefill_tokens", "cuda_graph_prefill_max_context"}
)
_SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def human_readable_int(text: str) -> int:
    """SGLang's ``human_readable_int`` (511 srt/utils/common.py:2328-2363): ValueError for what it refuses."""
    value = text.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if match:
        number, suffix = match.groups()
        if suffix in _IEC:
            if "." in number:
                raise ValueError(f"Decimals are not allowed with IEC suffixes like '{suffix}'.")
            return int(number) * _IEC[suffix]
        return int(Decimal(number) * _SI[suffix])
    return int(value)


def _what_it_takes(type_: str | None) -> str:
    if type_ == "human_readable_int":
        return "an integer, optionally with a suffix: 32k, 1M, 128Ki"
    return "an integer" if type_ == "int" else f"a {type_}"


def _rows(version: Version) -> tuple[flagtables.Row, ...]:
    # Imported here: the session and the dashboard import this module for parse_version alone, and the
    # 4,000 lines of tables load when a table is first built (tests/test_import_hygiene.py).
    from gdnconsole.sglang import flagtables

    return flagtables.FLAGS_0_5_23 if version >= (0, 5, 14) else flagtables.FLAGS_0_5_11


def _flag(row: flagtables.Row, version: Version) -> Flag:
    options, dest, kind, type_, nargs, choices, required = row
    if dest == "speculative_algorithm" and version >= (0, 5, 12):
        choices = None  # free-form from 0.5.12 (FACTS §2.3)
    registry = REGISTRY_CHOICES_0_5_23 if version >= (0, 5, 14) else REGISTRY_CHOICES_0_5_11
    choices = registry.get(dest, choices)
    if dest in HUMAN_INT_DESTS:
        type_ = "human_readable_int"
    return Flag(options, dest, kind, type_, nargs, choices, required)


def _deprecated_aliases(version: Version) -> list[Flag]:
    """0.5.14-0.5.19 still accept the old names as aliases of the new flags (FACTS §2.3)."""
    if not (0, 5, 14) <= version < (0, 5, 20):
        return []
    return [
        Flag(
            ("--mamba-scheduler-strategy",),
            "mamba_radix_cache_strategy",
            "store",
            "str",
            choices=("auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"),
            alias_of="--mamba-radix-cache-strategy",
        ),
        Flag(
            ("--cuda-graph-max-bs",),
            "cuda_graph_max_bs_decode",
            "store",
            "int",
            alias_of="--cuda-graph-max-bs-decode",
        ),
    ]


@cache
def flag_table(sglang: str) -> FlagTable:
    version = parse_version(sglang)
    flags = tuple(_flag(row, version) for row in _rows(version)) + tuple(_deprecated_aliases(version))
    by_option: dict[str, Flag] = {}
    for flag in flags:
        for option in flag.options:
            by_option[option] = flag
    return FlagTable(sglang=sglang, flags=flags, by_option=by_option)


@dataclass
class ParsedArgv:
    values: dict[str, object] = field(default_factory=dict)  # dest → value, only what the argv set
    given: dict[str, str] = field(default_factory=dict)  # dest → the flag as typed
    errors: list[Finding] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # deprecated spelling typed → the new flag
    unknown: list[str] = field(default_factory=list)  # every unrecognized option, in argv order

    @property
    def complete(self) -> bool:
        """Every known flag was read: argparse refuses unknown or missing ones only after reading all
        the others, so the rules can still run on ``values``."""
        return all(e.id in ("argv.unrecognized", "argv.required") for e in self.errors)


class ArgvError(Exception):
    """What argparse would print after ``error:`` (it then exits with status 2)."""

    def __init__(self, kind: str, message: str, flag: str | None, hint: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.flag = flag
        self.hint = hint


# Flags that moved between versions: what to write instead (FACTS §2.3).
RENAMED = {
    "--mamba-scheduler-strategy": ("--mamba-radix-cache-strategy", (0, 5, 14)),
    "--cuda-graph-max-bs": ("--cuda-graph-max-bs-decode", (0, 5, 14)),
    "--mamba-radix-cache-strategy": ("--mamba-scheduler-strategy", None),
    "--cuda-graph-max-bs-decode": ("--cuda-graph-max-bs", None),
}


def _looks_like_option(token: str) -> bool:
    """argparse's test: a leading '-' that is not a negative number and holds no space."""
    return token.startswith("-") and token != "-" and not _NEGATIVE_NUMBER.match(token) and " " not in token


class _Parser:
    def __init__(self, table: FlagTable, version: Version) -> None:
        self.table = table
        self.version = version

    def resolve(self, token: str) -> tuple[Flag | None, str | None, str]:
        """The flag a token names (exact, then by unambiguous prefix), its ``=value`` if any, the
        option as typed."""
        if token in self.table.by_option:
            return self.table.by_option[token], None, token
        name, eq, explicit = token.partition("=")
        if eq and name in self.table.by_option:
            return self.table.by_option[name], explicit, name
        if not token.startswith("--"):
            return None, None, token
        matches = [option for option in self.table.by_option if option.startswith(name)]
        if len(matches) > 1:
            raise ArgvError(
                "ambiguous",
                f"ambiguous option: {token} could match {', '.join(matches)}",
                name,
                f"write the whole flag name; {name} is the start of {len(matches)} flags",
            )
        if matches:
            return self.table.by_option[matches[0]], (explicit if eq else None), name
        return None, None, name

    def convert(self, flag: Flag, text: str) -> object:
        converters: dict[str | None, Callable[[str], object]] = {
            "int": int,
            "float": float,
            "loads": json.loads,
            "human_readable_int": human_readable_int,
        }
        converter = converters.get(flag.type, str)
        try:
            value = converter(text)
        except ValueError:
            raise ArgvError(
                "invalid_value",
                f"argument {flag.name}: invalid {flag.type} value: {text!r}",
                flag.options[0],
                f"{flag.options[0]} takes {_what_it_takes(flag.type)}",
            ) from None
        if flag.choices is not None and str(value) not in flag.choices:
            # argparse shows each choice's repr; the table keeps integer choices as text
            shown = ", ".join(c if flag.type == "int" else repr(c) for c in flag.choices)
            near = closest(str(value), flag.choices)
            raise ArgvError(
                "invalid_choice",
                f"argument {flag.name}: invalid choice: {value!r} (choose from {shown})",
                flag.options[0],
                (f"did you mean {near}? " if near else "")
                + f"{flag.options[0]} takes one of {', '.join(flag.choices)} on SGLang {self.table.sglang}",
            )
        return value


def closest(word: str, candidates: Sequence[str]) -> str | None:
    """The candidate ``word`` was most likely meant to be (a typo, a letter swapped), else None."""
    found = difflib.get_close_matches(word, list(candidates), cutoff=0.75)  # the best first
    return found[0] if found else None


def _unknown_hint(option: str, table: FlagTable, version: Version) -> str:
    renamed = RENAMED.get(option)
    if renamed is not None:
        new, since = renamed
        if since is None or version >= since:
            return f"SGLang {table.sglang} has no {option}: write {new} instead"
    near = closest(option, tuple(table.by_option))
    if near is not None:
        return f"SGLang {table.sglang} has no {option}: did you mean {near}?"
    return (
        f"SGLang {table.sglang} has no such flag: remove it, or check its spelling in `sglang serve --help`"
    )


def parse_argv(argv: Sequence[str], sglang: str) -> ParsedArgv:
    """Parse SGLang server flags as that version's argparse parser would; errors as Findings."""
    version = parse_version(sglang)
    parser = _Parser(flag_table(sglang), version)
    result = ParsedArgv()
    try:
        _consume(parser, list(argv), result)
    except ArgvError as exc:
        result.errors.append(argv_finding(exc))
        if exc.kind in ("unrecognized", "required"):
            result.errors += _more_unknown(parser, result.unknown[1 if exc.kind == "unrecognized" else 0 :])
    return result


def _more_unknown(parser: _Parser, options: list[str]) -> list[Finding]:
    """argparse names every unknown flag in one message; each after the first gets its own finding, so
    the form marks it and the hint names the flag it was probably meant to be."""
    return [
        Finding(
            id="argv.unrecognized",
            flag=option,
            message=_sentence(_unknown_hint(option, parser.table, parser.version)),
            source=ARGPARSE_SOURCE,
            severity="error",
            raises="SystemExit",
            sglang_text=f"unrecognized arguments: {option}",
        )
        for option in options
    ]


def _scan(parser: _Parser, tokens: list[str]) -> list[tuple[Flag | None, str | None, str] | None]:
    """argparse classifies every token first, so an ambiguous prefix is refused before anything else. A
    bare ``--`` ends the flags: it ends the value before it, it is left over, and every token after it is
    a value that no flag reads (left over too, and not named as an unknown flag)."""
    end = tokens.index("--") if "--" in tokens else len(tokens)
    return [
        None if index > end else (None, None, token) if index == end else _classify(parser, token)
        for index, token in enumerate(tokens)
    ]


def _classify(parser: _Parser, token: str) -> tuple[Flag | None, str | None, str] | None:
    """A flag (known or not), or None for a value. argparse looks the flag up before its space test, so
    ``--json-model-override-args={"a": 1}`` names a flag though its value holds a space."""
    entry = parser.resolve(token)
    return entry if entry[0] is not None or _looks_like_option(token) else None


def _consume(parser: _Parser, tokens: list[str], result: ParsedArgv) -> None:
    scanned = _scan(parser, tokens)
    extras: list[str] = []
    unknown: list[str] = []
    index = 0
    while index < len(tokens):
        entry = scanned[index]
        if entry is None:
            extras.append(tokens[index])
            index += 1
            continue
        flag, explicit, typed = entry
        if flag is None:
            extras.append(tokens[index])
            unknown.append(tokens[index].partition("=")[0])
            index += 1
            continue
        index = _take(parser, flag, explicit, typed, tokens, scanned, index, result)
    result.unknown = unknown
    missing = [f.name for f in parser.table.flags if f.required and f.dest not in result.values]
    if missing:
        raise ArgvError(
            "required",
            f"the following arguments are required: {', '.join(missing)}",
            missing[0].split("/")[0],
            f"add {missing[0].split('/')[0]}",
        )
    if extras:
        first = next((t for t in extras if _looks_like_option(t)), extras[0])
        option = first.partition("=")[0]
        raise ArgvError(
            "unrecognized",
            f"unrecognized arguments: {' '.join(extras)}",
            option if _looks_like_option(first) else None,
            _unknown_hint(option, parser.table, parser.version)
            if _looks_like_option(first)
            else f"{first!r} belongs to no flag: quote it as one value or remove it",
        )


def _take(
    parser: _Parser,
    flag: Flag,
    explicit: str | None,
    typed: str,
    tokens: list[str],
    scanned: list[tuple[Flag | None, str | None, str] | None],
    index: int,
    result: ParsedArgv,
) -> int:
    """Store one occurrence of ``flag``; return the index of the next token to read."""
    result.given[flag.dest] = typed
    if flag.alias_of:
        result.aliases[typed] = flag.alias_of
    if flag.kind in ("flag", "bool"):
        if explicit is not None:
            raise ArgvError(
                "invalid_value",
                f"argument {flag.name}: ignored explicit argument {explicit!r}",
                flag.options[0],
                f"{flag.options[0]} takes no value",
            )
        result.values[flag.dest] = not typed.startswith("--no-")
        return index + 1
    if explicit is not None:
        value = parser.convert(flag, explicit)
        result.values[flag.dest] = [value] if flag.nargs in ("+", "*") else value
        return index + 1
    following = []
    cursor = index + 1
    while cursor < len(tokens) and scanned[cursor] is None:
        following.append(tokens[cursor])
        cursor += 1
    if flag.nargs is None:
        if not following:
            raise ArgvError(
                "missing_value",
                f"argument {flag.name}: expected one argument",
                flag.options[0],
                f"give {flag.options[0]} a value",
            )
        result.values[flag.dest] = parser.convert(flag, following[0])
        return index + 2
    if flag.nargs == "?":
        result.values[flag.dest] = parser.convert(flag, following[0]) if following else None
        return index + 1 + min(1, len(following))
    if flag.nargs == "+" and not following:
        raise ArgvError(
            "missing_value",
            f"argument {flag.name}: expected at least one argument",
            flag.options[0],
            f"give {flag.options[0]} one or more values",
        )
    result.values[flag.dest] = [parser.convert(flag, text) for text in following]
    return cursor


def _sentence(text: str) -> str:
    return text if text.endswith(("?", ".")) else text + "."


def argv_finding(exc: ArgvError) -> Finding:
    """An argparse refusal as a finding (SGLang exits with status 2 before any rule runs)."""
    return Finding(
        id=f"argv.{exc.kind}",
        flag=exc.flag,
        message=f"SGLang's argument parser would stop with: error: {exc}. Fix: {_sentence(exc.hint)}",
        source=ARGPARSE_SOURCE,
        severity="error",
        raises="SystemExit",
        sglang_text=str(exc),
    )
