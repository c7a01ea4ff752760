"""check() learns the model's architecture from its config.json when the host has one: a model path that
names no architecture (a local folder) still gets the rules of the model it holds (issue 27)."""

from __future__ import annotations

from gdnconsole.sglang.rules import check

LOCAL = ["--model-path", "/models/m"]  # a folder name that names no architecture
HYBRID = {"architectures": ["Qwen3NextForCausalLM"]}


def test_config_json_names_the_architecture_of_a_path_that_does_not() -> None:
    from_config = check(LOCAL, sglang="0.5.23", compute_capability="9.0", model_config=HYBRID)
    given = check(LOCAL, sglang="0.5.23", compute_capability="9.0", architecture="Qwen3NextForCausalLM")
    unknown = check(LOCAL, sglang="0.5.23", compute_capability="9.0")
    # the hybrid GDN model's mamba strategy resolution runs (SGLang picks extra_buffer for it) ...
    assert [n.id for n in from_config.notices] == ["mamba.auto_strategy"]
    assert from_config.values == given.values
    assert from_config.values["mamba_strategy"] == "extra_buffer"
    # ... which it does not for a model it knows nothing of
    assert unknown.notices == [] and unknown.values["mamba_strategy"] == "auto"


def test_config_json_wins_over_the_name_of_the_path() -> None:
    named_hybrid = ["--model-path", "Qwen/Qwen3-Next-80B-A3B-Instruct"]
    dense = {"architectures": ["LlamaForCausalLM"]}
    by_name = check(named_hybrid, sglang="0.5.23", compute_capability="9.0")
    by_config = check(named_hybrid, sglang="0.5.23", compute_capability="9.0", model_config=dense)
    assert [n.id for n in by_name.notices] == ["mamba.auto_strategy"]
    assert by_config.notices == [] and by_config.values["mamba_strategy"] == "auto"
