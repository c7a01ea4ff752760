"""The pure parts of launching: flag diffs, the journal file, --set, GPU memory arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from gdnconsole.config.hosts import Profile
from gdnconsole.config.profileset import SetError, apply_sets
from gdnconsole.host import gpumem
from gdnconsole.host.journal import Journal, env_diff, flag_diff
from gdnconsole.host.state import Gpu, parse_gpus
from gdnconsole.sglang.launch import restore_env

BASE = [
    "python3",
    "-m",
    "sglang.launch_server",
    "--tp-size",
    "1",
    "--speculative-eagle-topk",
    "1",
    "--enable-x",
]


def test_flag_diff_adds_removes_and_changes() -> None:
    new = ["python3", "-m", "sglang.launch_server", "--tp-size=2", "--speculative-num-steps", "1"]
    assert flag_diff(BASE, new) == [
        "~ --tp-size 1 → 2",
        "+ --speculative-num-steps 1",
        "- --speculative-eagle-topk 1",
        "- --enable-x",
    ]
    assert flag_diff(BASE, BASE) == []
    assert flag_diff(["python3", "-m", "a"], ["python", "-m", "a"]) == ["~ python3 -m a → python -m a"]


def test_env_diff() -> None:
    assert env_diff({"A": "1", "B": "2"}, {"A": "3", "C": "4"}) == ["+ env C=4", "~ env A 1 → 3", "- env B=2"]


def test_the_journal_keeps_the_last_state_of_each_attempt_and_skips_torn_lines(tmp_path: Path) -> None:
    journal = Journal("ct129", tmp_path / "j" / "ct129.jsonl")
    first = journal.begin("p", BASE, {})
    journal.record(first)
    first.outcome = "ready"
    journal.update(first)
    with journal.path.open("a") as fh:
        fh.write('{"number": 9, "time"')  # a console that died mid-line
    second = journal.begin("p", [*BASE, "--x", "`rm -rf /` | y"], {"E": "1"})
    journal.record(second)
    attempts = journal.attempts()
    assert [(a.number, a.outcome) for a in attempts] == [(1, "ready"), (2, "starting")]  # begun: journaled
    assert attempts[1].diff == ["+ --x `rm -rf /` | y", "+ env E=1"]
    markdown = journal.to_markdown()
    assert "\\|" in markdown and "`` " in markdown  # pipes escaped in the table, backticks fenced


def test_set_addresses_profile_fields() -> None:
    profile = Profile(name="p", model="m")
    changed = apply_sets(
        profile,
        ["tp=2", "mem_fraction=0.8", "speculative.eagle_topk=1", "env.SGLANG_ENABLE_SPEC_V2=1",
         "args+=--disable-radix-cache", "args+=a b; $(c)"],
    )  # fmt: skip
    assert (changed.tp, changed.mem_fraction, changed.speculative.eagle_topk) == (2, 0.8, 1)
    assert changed.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert changed.args == ("--disable-radix-cache", "a b; $(c)")
    assert apply_sets(changed, ["mem_fraction=", "env.SGLANG_ENABLE_SPEC_V2=", "args="]).args == ()
    for bad in ("port=0", "speculative.x=1", "env.1A=2", "args=x"):
        with pytest.raises(SetError):
            apply_sets(profile, [bad])


def gpu(index: int, used: int, *procs: tuple[int, str | None, int]) -> Gpu:
    raw = {
        "index": index,
        "total_mib": 49140,
        "used_mib": used,
        "processes": [{"pid": p, "name": n, "used_mib": m} for p, n, m in procs],
    }
    return Gpu.parse(raw, index)


def test_rank_gpus_follow_base_step_and_visible_devices() -> None:
    argv = ["--tp", "2", "--base-gpu-id", "1"]
    assert gpumem.rank_gpus(argv, {}) == [1, 2]
    assert gpumem.rank_gpus(argv, {"CUDA_VISIBLE_DEVICES": "4,5,6"}) == [5, 6]


def test_group_pids_are_the_live_gpu_processes_of_a_group() -> None:
    sample = parse_gpus(
        [
            {
                "index": 0,
                "processes": [{"pid": 10, "pgid": 10}, {"pid": 11, "pgid": 10}, {"pid": 12, "pgid": 7}],
            },
            {"index": 1, "processes": [{"pid": 13, "pgid": 10}, {"pid": 14, "pgid": None}, {"pid": 15}]},
        ]
    )
    assert gpumem.group_pids(sample, 10) == {10, 11, 13}
    assert gpumem.group_pids(sample, 99) == set()


def test_release_and_shortfall() -> None:
    dying = [gpu(0, 30000, (10, None, 29996))]  # its process is gone, the memory not yet released
    assert gpumem.unreleased_mib(dying, [0]) == {0: 30000}
    leftover = [gpu(0, 20004, (11, "python3", 20000))]
    assert gpumem.unreleased_mib(leftover, [0]) == {}
    [problem] = gpumem.shortfalls(leftover, [0], None, ours=set())
    assert "pid 11 (python3) holds 20000 MiB on GPU 0" in problem
    assert gpumem.shortfalls(leftover, [0], None, ours={11}) == []
    assert gpumem.shortfalls([gpu(0, 14, (12, "sglang::scheduler_TP0", 10))], [0], 0.9, ours=set()) == []


def test_the_journal_keeps_no_token_from_the_environment(tmp_path: Path) -> None:
    journal = Journal("ct129", tmp_path / "j" / "ct129.jsonl")
    env = {"HF_TOKEN": "hf_secret", "SGLANG_ENABLE_SPEC_V2": "1"}
    attempt = journal.begin("p", ["python3", "-m", "sglang.launch_server", "--api-key", "sk-1"], env)
    journal.record(attempt)
    text = journal.path.read_text()
    assert "hf_secret" not in text and "sk-1" not in text
    [kept] = journal.attempts()
    assert kept.env["SGLANG_ENABLE_SPEC_V2"] == "1" and kept.env["HF_TOKEN"].startswith("<redacted:")
    assert restore_env(kept.env, env) == env  # a re-run from the journal gets the real values back


def test_a_rejection_names_the_first_error_and_counts_the_others() -> None:
    """The launch stops at the error SGLang stops at, and says how many come after it (the flag form and
    `gdnconsole check` list them), so that a refused launch is not fixed one error per try."""
    from types import SimpleNamespace

    from gdnconsole.host.launcher import check_rules
    from gdnconsole.host.state import HostFacts
    from gdnconsole.sglang.launch import LaunchSpec

    session = SimpleNamespace(
        facts=HostFacts("0.5.11", "8.6", 2, 49140), host=SimpleNamespace(python="python3")
    )
    args = (
        "--model-path", "Qwen/Qwen3.6-27B", "--tp-size", "3", "--dp-size", "2", "--enable-dp-attention",
        "--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "4",
    )  # fmt: skip
    rule = check_rules(session, LaunchSpec(python=("python3",), args=args, env={}))  # type: ignore[arg-type]
    assert rule is not None and " more once that is fixed: " in rule.message
