"""'Check on host' against the simulated SGLang, and our rule tables compared with it (issue 5 §5).

The simulator implements the FACTS rules independently; for every argv our verdict (ok, or the first
error's exception type and text) must equal what the host's own argument processing says.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gdnconsole.config.hosts import Host, Simulate
from gdnconsole.host.hostcheck import (
    HostVerdict,
    check_many_on_host,
    check_on_host,
    read_model_config,
    shell_command,
)
from gdnconsole.sglang.rules import check

HYBRID = "Qwen/Qwen3.6-27B"
DENSE = "Qwen/Qwen3-8B"
LLAMA = "meta-llama/Llama-3.1-8B"


def sim_host(tmp: Path, sglang: str) -> Host:
    table = {"sglang": sglang, "home": str(tmp / f"sim-{sglang}"), "speed": 50.0}
    sim = Simulate(gpus=2, gpu_name="NVIDIA RTX A6000", gpu_mib=49140, sglang=sglang, speed=50.0, ffmpeg=True,
                   scenario="ok", table=table)  # fmt: skip
    return Host(name=f"sim{sglang}", ssh=None, local=True, python=sys.executable, simulate=sim)


def ours(argv: list[str], sglang: str) -> tuple[bool, str | None, str]:
    result = check(argv, sglang=sglang, compute_capability="8.6", gpus=2)
    if result.ok:
        return True, None, ""
    error = result.errors[0]
    return False, error.raises, error.sglang_text or ""


def theirs(verdict: HostVerdict) -> tuple[bool, str | None, str]:
    return verdict.ok, verdict.exception, verdict.message


def compare(tmp: Path, sglang: str, argvs: list[list[str]]) -> None:
    verdicts = asyncio.run(check_many_on_host(sim_host(tmp, sglang), argvs, timeout=60))
    mismatches = [
        (argv, ours(argv, sglang), theirs(v)) for argv, v in zip(argvs, verdicts, strict=True)
        if not _same(ours(argv, sglang), theirs(v))
    ]  # fmt: skip
    assert not mismatches, "\n".join(f"{a}\n  ours:   {o}\n  theirs: {t}" for a, o, t in mismatches)


def _same(a: tuple[bool, str | None, str], b: tuple[bool, str | None, str]) -> bool:
    """Equal verdicts; argparse texts are compared by kind (the simulator's table is a subset)."""
    if a[1] == b[1] == "SystemExit":
        return a[2].split(":")[0] == b[2].split(":")[0]
    return a == b


def spec(model: str, *rest: str) -> list[str]:
    return ["--model-path", model, "--tp", "2", *rest]


LISTED = [
    spec(
        HYBRID,
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "2",
    ),
    spec(
        HYBRID, "--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "1", "--disable-radix-cache"
    ),
    spec(
        HYBRID,
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-steps",
        "1",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "2",
    ),
    spec(DENSE, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2"),
    spec(
        DENSE,
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-step",
        "3",
        "--speculative-eagle-topk",
        "1",
    ),
    spec(LLAMA, "--speculative-algorithm", "EAGLE", "--page-size", "16", "--attention-backend", "triton"),
    spec(LLAMA, "--speculative-algorithm", "EAGLE", "--attention-backend", "trtllm_mha"),
    spec(DENSE, "--speculative-algorithm", "NGRAM", "--page-size", "4", "--attention-backend", "triton"),
    spec(DENSE, "--speculative-algorithm", "DFLASH"),
    spec(DENSE, "--bogus-flag", "1"),
    spec(DENSE, "--port", "x"),
]
MAMBA_511 = [spec(HYBRID, "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "1", "--speculative-eagle-topk",
                  "1", "--speculative-num-draft-tokens", "2", "--mamba-scheduler-strategy", "extra_buffer"),
             spec(HYBRID, "--mamba-scheduler-strategy", "extra_buffer", "--disable-radix-cache"),
             spec(HYBRID, "--mamba-scheduler-strategy", "extra_buffer", "--page-size", "3")]  # fmt: skip
MAMBA_523 = [spec(HYBRID, "--mamba-radix-cache-strategy", "no_buffer"),
             spec(HYBRID, "--mamba-radix-cache-strategy", "no_buffer", "--disable-overlap-schedule", "--page-size", "16"),
             spec(HYBRID, "--mamba-radix-cache-strategy", "extra_buffer", "--disable-radix-cache"),
             spec(DENSE, "--mamba-radix-cache-strategy", "extra_buffer"),
             spec(HYBRID, "--mamba-scheduler-strategy", "extra_buffer"),
             spec(HYBRID, "--cuda-graph-max-bs", "8")]  # fmt: skip


def test_listed_argvs_agree_with_simulated_0_5_11(tmp_path: Path) -> None:
    compare(tmp_path, "0.5.11", LISTED + MAMBA_511)


def test_listed_argvs_agree_with_simulated_0_5_23(tmp_path: Path) -> None:
    compare(tmp_path, "0.5.23", LISTED + MAMBA_523)


@st.composite
def speculative_argv(draw: st.DrawFn, sglang: str) -> list[str]:
    model = draw(st.sampled_from([HYBRID, DENSE, LLAMA]))
    argv = ["--model-path", model]
    algorithm = draw(st.sampled_from([None, "NEXTN", "EAGLE", "EAGLE3", "STANDALONE", "NGRAM", "DFLASH"]))
    if algorithm:
        argv += ["--speculative-algorithm", algorithm]
    for flag in ("--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens"):
        value = draw(st.sampled_from([None, 1, 2, 4]))
        if value is not None:
            argv += [flag, str(value)]
    strategy = draw(st.sampled_from([None, "auto", "no_buffer", "extra_buffer"]))
    if strategy:
        argv += [
            "--mamba-scheduler-strategy" if sglang == "0.5.11" else "--mamba-radix-cache-strategy",
            strategy,
        ]
    for flag in ("--disable-radix-cache", "--disable-overlap-schedule"):
        if draw(st.booleans()):
            argv.append(flag)
    page = draw(st.sampled_from([None, 1, 16, 3]))
    if page:
        argv += ["--page-size", str(page)]
    backend = draw(st.sampled_from([None, "flashinfer", "triton", "fa3", "trtllm_mha"]))
    if backend:
        argv += ["--attention-backend", backend]
    return argv


@pytest.mark.parametrize("sglang", ["0.5.11", "0.5.23"])
def test_generated_argvs_agree_with_simulated(tmp_path: Path, sglang: str) -> None:
    argvs: list[list[str]] = []

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(speculative_argv(sglang))
    def collect(argv: list[str]) -> None:
        argvs.append(argv)

    collect()
    compare(tmp_path, sglang, argvs)  # one interpreter for them all


def test_check_on_host_single_and_failure(tmp_path: Path) -> None:
    verdict = asyncio.run(
        check_on_host(sim_host(tmp_path, "0.5.23"), spec(DENSE, "--speculative-algorithm", "FOO"))
    )
    assert (
        not verdict.ok
        and verdict.exception == "ValueError"
        and "FOO" in verdict.message
        and verdict.elapsed_s >= 0
    )
    broken = Host(name="nopython", ssh=None, local=True, python=str(tmp_path / "no-python"))
    failed = asyncio.run(check_on_host(broken, spec(DENSE)))
    assert failed.exception == "HostCheckError" and not failed.ok


def test_values_reach_sglang_as_one_argument_each(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payload = f"/models/a b'\"; touch {marker}; $(touch {marker})\nx"
    verdict = asyncio.run(
        check_on_host(sim_host(tmp_path, "0.5.11"), ["--model-path", payload, "--served-model-name", payload])
    )
    assert verdict.exception != "SystemExit" and not marker.exists()
    assert (
        shell_command(["python3", "-c", "a b"], {"K": "v w"}, "/w d")
        == "cd -- '/w d' && exec env -- 'K=v w' python3 -c 'a b'"
    )


def test_read_model_config_local_dir_and_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "my model"
    model.mkdir()
    (model / "config.json").write_text('{"architectures": ["Qwen3NextForCausalLM"]}')
    host = sim_host(tmp_path, "0.5.11")
    assert asyncio.run(read_model_config(host, str(model), None)) == {
        "architectures": ["Qwen3NextForCausalLM"]
    }
    snap = tmp_path / "hf" / "hub" / "models--Org--M" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}')
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert asyncio.run(read_model_config(host, "Org/M", "models--Org--M")) == {
        "architectures": ["LlamaForCausalLM"]
    }
    assert asyncio.run(read_model_config(host, "Org/None", "models--Org--None")) is None
