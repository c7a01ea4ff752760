"""A profile and its command line, both ways, over every Profile field: profile → argv → profile gives
the same profile; argv → profile → argv gives a command line SGLang reads the same way (parse_argv, held
equal to argparse by test_flags_parse_argparse). The fields are read off the dataclasses, so a new one
with no flag and no word in NOT_FLAGS fails here."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from gdnconsole.config.hosts import Profile, Speculative, Verify
from gdnconsole.sglang.flags import parse_argv
from gdnconsole.sglang.launch import launch_spec, server_args
from gdnconsole.sglang.profileargv import (
    NOT_FLAGS,
    PROFILE_FLAGS,
    SCALAR_FIELDS,
    SPECULATIVE_FIELDS,
    SPECULATIVE_FLAGS,
    profile_from_argv,
)

VERSIONS = ("0.5.11", "0.5.23")
BARE = Profile("", "")

# Every field, and every speculative setting, away from its default (checked below).
FULL = Profile(
    "mtp",
    "/models/Qwen3.6-27B",
    tp=2,
    port=30123,
    host="0.0.0.0",
    mem_fraction=0.85,
    env={"SGLANG_ENABLE_SPEC_V2": "1", "HF_TOKEN": "hf_secret"},
    speculative=Speculative(
        algorithm="NEXTN", num_steps=3, eagle_topk=1, num_draft_tokens=4, draft_model="/models/draft"
    ),
    args=("--enable-metrics", "--mamba-scheduler-strategy", "extra_buffer", "--served-model-name", "q"),
    verify=Verify(prompt="Say hi.", max_tokens=4, timeout=5.0),
)


def test_every_profile_field_is_a_flag_or_says_where_it_goes_instead() -> None:
    names = {f.name for f in fields(Profile)}
    assert set(PROFILE_FLAGS).isdisjoint(NOT_FLAGS)
    assert set(PROFILE_FLAGS) | set(NOT_FLAGS) == names
    assert set(SPECULATIVE_FLAGS) == {f.name for f in fields(Speculative)}


def test_every_flag_written_is_read_back_into_its_field() -> None:
    assert {SCALAR_FIELDS[flag] for flag in PROFILE_FLAGS.values()} == set(PROFILE_FLAGS)
    assert all(SCALAR_FIELDS[flag] == name for name, flag in PROFILE_FLAGS.items())
    assert all(SPECULATIVE_FIELDS[flag] == name for name, flag in SPECULATIVE_FLAGS.items())


@pytest.mark.parametrize("version", VERSIONS)
def test_every_flag_and_spelling_read_back_is_one_sglang_takes_for_the_same_setting(version: str) -> None:
    dests: dict[str, set[str]] = {}
    for flag, name in (SCALAR_FIELDS | SPECULATIVE_FIELDS).items():
        parsed = parse_argv([flag, "EAGLE" if name == "algorithm" else "1"], version)
        assert not [e for e in parsed.errors if e.id != "argv.required"], flag
        dests.setdefault(name, set()).update(parsed.values)
    assert all(len(d) == 1 for d in dests.values()), dests


def test_the_full_profile_sets_every_field_away_from_its_default() -> None:
    for f in fields(Profile):
        assert getattr(FULL, f.name) != getattr(BARE, f.name), f"give FULL a {f.name} of its own"
    for f in fields(Speculative):
        assert getattr(FULL.speculative, f.name) is not None, f"give FULL a speculative {f.name}"


@pytest.mark.parametrize("with_interpreter", [False, True])
def test_profile_to_argv_to_profile_is_the_identity(with_interpreter: bool) -> None:
    spec = launch_spec(FULL)
    # Only what is no flag comes from the base: the name is given, the env travels beside the argv.
    base = replace(BARE, verify=FULL.verify)
    back = profile_from_argv(FULL.name, spec.argv if with_interpreter else spec.args, spec.env, base)
    for f in fields(Profile):
        assert getattr(back, f.name) == getattr(FULL, f.name), f.name
    assert back == FULL


def test_a_bare_profile_comes_back_with_no_speculative_setting_and_no_memory_fraction() -> None:
    bare = Profile("p", "m")
    back = profile_from_argv("p", server_args(bare), {}, FULL)
    assert back == replace(bare, verify=FULL.verify)


M = ["--model-path", "m"]
ARGVS = {
    "every flag": [
        *M,
        "--tp-size",
        "2",
        "--host",
        "0.0.0.0",
        "--port",
        "31000",
        "--mem-fraction-static",
        "0.7",
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "4",
        "--speculative-draft-model-path",
        "d",
    ],
    "--flag=value": ["--model-path=m", "--tp-size=2", "--port=31000", "--speculative-algorithm=EAGLE"],
    "aliases": ["--model", "m", "--tp", "2", "--speculative-draft-model", "d"],
    "repeated, last wins": [*M, "--tp-size", "2", "--tp", "4", "--port=1", "--port", "2", "--model=n"],
    "abbreviations left in the args": [*M, "--mem-frac", "0.6", "--speculative-algo", "NGRAM", "--tp-s", "2"],
    "an abbreviation after the full flag": [*M, "--tp-size", "2", "--tp-s", "4"],
    "another alias left in the args": [*M, "--tensor-parallel-size", "2"],
    "booleans": [*M, "--enable-metrics", "--port", "31000", "--trust-remote-code"],
    "a boolean before a flag with a field": [
        "--trust-remote-code",
        *M,
        "--disable-overlap-schedule",
        "--tp=2",
    ],
    "a list and a negative number": [*M, "--lora-paths", "a", "b", "--random-seed", "-1", "--tp", "2"],
    "the interpreter first": ["python3", "-m", "sglang.launch_server", *M, "--tp", "2"],
}


def _meaning(argv: list[str], version: str) -> dict[str, object]:
    """What SGLang reads from ``argv``, over the bare profile's flags (what profile_from_argv fills in
    from its base when the argv leaves them out)."""
    words = argv[argv.index(next(w for w in argv if w.startswith("--"))) :]
    parsed = parse_argv(words, version)
    assert not parsed.errors, parsed.errors
    return parse_argv(server_args(Profile("p", "")), version).values | parsed.values


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", ARGVS)
def test_argv_to_profile_to_argv_keeps_what_sglang_reads(case: str, version: str) -> None:
    argv = ARGVS[case]
    env = {"HF_TOKEN": "hf_x", "CUDA_VISIBLE_DEVICES": "0,1"}
    profile = profile_from_argv("p", argv, env, Profile("p", ""))
    spec = launch_spec(profile)
    assert _meaning(list(spec.args), version) == _meaning(argv, version)
    assert spec.env == env
