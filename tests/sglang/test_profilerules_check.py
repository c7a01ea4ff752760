"""The flag checker on a launch profile (profilerules.check_profile): the argv the launcher would send, the
profile's environment and the architecture of the model SGLang would load, with the host's facts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gdnconsole.config.hosts import Profile, Speculative
from gdnconsole.sglang.hostfacts import HostFacts
from gdnconsole.sglang.launch import server_args
from gdnconsole.sglang.profilerules import check_profile
from gdnconsole.sglang.rules import CheckResult, check

EAGLE1 = Speculative(algorithm="EAGLE", num_steps=3, eagle_topk=1)


def checked(profile: Profile, facts: HostFacts, model_config: Mapping[str, Any] | None = None) -> CheckResult:
    result = check_profile(profile, facts, model_config)
    assert result is not None  # the version is known
    return result


def test_the_profile_is_checked_as_the_launcher_would_send_it() -> None:
    profile = Profile(name="p", model="Qwen/Qwen3-8B", tp=2, speculative=EAGLE1, args=("--page-size", "16"))
    result = checked(profile, HostFacts("0.5.23", "9.0", 2))
    assert result.argv == server_args(profile)
    assert result.ok and result.sglang == "0.5.23"
    assert (result.values["tp_size"], result.values["page_size"]) == (2, 16)
    assert result == check(server_args(profile), sglang="0.5.23", compute_capability="9.0", gpus=2)


def test_the_architecture_comes_from_the_profiles_model() -> None:
    nextn = Speculative(algorithm="NEXTN")
    hybrid = checked(
        Profile(name="p", model="Qwen/Qwen3.6-27B", speculative=nextn), HostFacts("0.5.11", "9.0", 1)
    )
    assert [e.id for e in hybrid.errors] == ["mamba.speculative_needs_extra_buffer"]
    assert "Qwen3_5ForConditionalGeneration (hybrid GDN)" in hybrid.errors[0].message
    dense = Profile(name="p", model="Qwen/Qwen3-8B", speculative=nextn)
    assert checked(dense, HostFacts("0.5.11", "9.0", 1)).ok


def test_the_profiles_environment_reaches_the_rules() -> None:
    on = Profile(name="p", model="Qwen/Qwen3-8B", speculative=EAGLE1)
    off = Profile(name="p", model="Qwen/Qwen3-8B", speculative=EAGLE1, env={"SGLANG_ENABLE_SPEC_V2": "0"})
    on_ids = [n.id for n in checked(on, HostFacts("0.5.11", "8.6", 1)).notices]
    off_ids = [n.id for n in checked(off, HostFacts("0.5.11", "8.6", 1)).notices]
    assert "spec.v2" in on_ids and "spec.v1" not in on_ids
    assert "spec.v1" in off_ids and "spec.v2" not in off_ids


def test_the_gpus_capability_and_memory_reach_the_rules() -> None:
    profile = Profile(name="p", model="Qwen/Qwen3-8B", args=("--page-size", "48"))
    known = checked(profile, HostFacts("0.5.11", "8.6", 1, 49140))
    assert "4096, which SGLang picks from the GPU's memory" in known.errors[0].message
    unknown = checked(profile, HostFacts("0.5.11", "8.6", 1))
    assert "2048 or 4096 or 8192 or 16384" in unknown.errors[0].message
    blackwell = checked(Profile(name="p", model="Qwen/Qwen3-8B"), HostFacts("0.5.23", "10.0", 1))
    assert blackwell.values["attention_backend"] == "trtllm_mha"


def test_a_model_path_in_the_profiles_args_is_the_model_checked() -> None:
    # The launcher sends args after --model-path PROFILE.MODEL; SGLang's argparse keeps the last one,
    # so that is the model it loads and whose architecture its rules read.
    nextn = Speculative(algorithm="NEXTN")
    hybrid_in_args = Profile(
        name="p", model="Qwen/Qwen3-8B", speculative=nextn, args=("--model-path", "Qwen/Qwen3.6-27B")
    )
    result = checked(hybrid_in_args, HostFacts("0.5.11", "9.0", 1))
    assert [e.id for e in result.errors] == ["mamba.speculative_needs_extra_buffer"]
    assert result.values["model_path"] == "Qwen/Qwen3.6-27B"
    dense_in_args = Profile(
        name="p", model="Qwen/Qwen3.6-27B", speculative=nextn, args=("--model-path", "Qwen/Qwen3-8B")
    )
    assert checked(dense_in_args, HostFacts("0.5.11", "9.0", 1)).ok


def test_a_host_whose_sglang_is_not_known_has_no_verdict() -> None:
    profile = Profile(name="p", model="Qwen/Qwen3-8B")
    assert check_profile(profile, HostFacts()) is None
    assert check_profile(profile, HostFacts("", "9.0", 1)) is None
