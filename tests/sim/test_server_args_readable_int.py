"""The simulated SGLang reads token counts as SGLang's ``human_readable_int`` does (511
srt/utils/common.py:2328-2363, the type of --context-length, --max-total-tokens and --max-prefill-tokens;
523 arg_groups/fields/model.py:110-116, schedule.py:40-80): ``41k`` is 41000, IEC suffixes take no
decimals (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_server_args_beyond import VERSIONS, last_line, model
from test_server_harness import run_args


@pytest.mark.parametrize("sim", VERSIONS, ids=["0.5.11", "0.5.23"])
def test_a_context_length_of_41k_is_41000_tokens(sim_host, tmp_path: Path, sim):
    result = run_args(sim_host, "--model-path", model(tmp_path), "--context-length", "41k", sim=sim)
    assert result.returncode == 1  # parsed, then above the checkpoint's 40960
    assert "User-specified context_length (41000) is greater than" in last_line(result.stderr)


@pytest.mark.parametrize("flag", ["--max-total-tokens", "--max-prefill-tokens", "--context-length"])
def test_an_iec_suffix_with_decimals_is_argparses_refusal(sim_host, flag):
    result = run_args(sim_host, "--model-path", "Qwen/Qwen3-8B", flag, "1.5Ki")
    assert result.returncode == 2
    assert last_line(result.stderr).endswith(
        f"error: argument {flag}: Decimals are not allowed with IEC suffixes like 'Ki'. Use an integer IEC "
        "value such as '1Ki', or an SI value such as '1.5K'."  # SGLang's own K
    )


def test_a_lower_case_m_is_no_suffix(sim_host):
    result = run_args(sim_host, "--model-path", "Qwen/Qwen3-8B", "--max-total-tokens", "1m")
    assert result.returncode == 2
    assert last_line(result.stderr).endswith(
        "error: argument --max-total-tokens: Invalid integer value: '1m'. Use a plain integer, SI suffixes "
        "(1k, 1M), or IEC suffixes (1Ki, 1Mi). Suffixes are case-sensitive."
    )
