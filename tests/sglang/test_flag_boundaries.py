"""The mamba strategy flag's two spellings, at the exact versions where each starts and stops (FACTS §2.3):
--mamba-scheduler-strategy up to 0.5.13, --mamba-radix-cache-strategy from 0.5.14, the old name kept as
an alias through 0.5.19 and refused from 0.5.20."""

from __future__ import annotations

import pytest

from gdnconsole.sglang.flags import parse_argv

MODEL = ["--model-path", "Qwen/Qwen3.6-27B"]
OLD = [*MODEL, "--mamba-scheduler-strategy", "extra_buffer"]
NEW = [*MODEL, "--mamba-radix-cache-strategy", "extra_buffer"]


def test_up_to_0_5_13_the_old_spelling_is_the_flag_and_the_new_one_unknown() -> None:
    old = parse_argv(OLD, "0.5.13")
    assert not old.errors and not old.aliases and old.values["mamba_scheduler_strategy"] == "extra_buffer"
    [refused] = parse_argv(NEW, "0.5.13").errors
    assert refused.id == "argv.unrecognized" and "write --mamba-scheduler-strategy instead" in refused.message


@pytest.mark.parametrize("sglang", ["0.5.14", "0.5.19"])
def test_from_0_5_14_through_0_5_19_the_old_spelling_is_an_alias(sglang: str) -> None:
    old, new = parse_argv(OLD, sglang), parse_argv(NEW, sglang)
    assert not old.errors and old.aliases == {"--mamba-scheduler-strategy": "--mamba-radix-cache-strategy"}
    assert (
        old.values["mamba_radix_cache_strategy"] == new.values["mamba_radix_cache_strategy"] == "extra_buffer"
    )
    assert not new.errors and not new.aliases


def test_from_0_5_20_the_old_spelling_is_refused() -> None:
    [refused] = parse_argv(OLD, "0.5.20").errors
    assert refused.id == "argv.unrecognized" and refused.flag == "--mamba-scheduler-strategy"
    assert "mamba_scheduler_strategy" not in parse_argv(OLD, "0.5.20").values
