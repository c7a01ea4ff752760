"""The simulated SGLang applies the checks beyond speculation that real SGLang makes while processing its
arguments (issue 26): the checkpoint's context length and quantization (ModelConfig, 511
configs/model_config.py:452-480, 1006-1119; 523 :1295-1316, 2000-2148), the parser names its registries
hold, and the log level (511 server_args.py:7292-7298). Messages as the wheels raise them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_server_harness import run_args

VERSIONS = [{}, {"sglang": "0.5.23"}]


def model(tmp_path: Path, **config: object) -> str:
    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    base = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "max_position_embeddings": 40960}
    (folder / "config.json").write_text(json.dumps({**base, **config}))
    return str(folder)


def last_line(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


@pytest.mark.parametrize("sim", VERSIONS, ids=["0.5.11", "0.5.23"])
def test_a_context_length_above_the_models_stops_argument_processing(sim_host, tmp_path, sim):
    path = model(tmp_path)
    result = run_args(sim_host, "--model-path", path, "--context-length", "40961", sim=sim)
    assert result.returncode == 1
    assert last_line(result.stderr).startswith(
        "ValueError: Warning: User-specified context_length (40961) is greater than the derived "
        "context_length (40960)."
    )


@pytest.mark.parametrize("sim", VERSIONS, ids=["0.5.11", "0.5.23"])
def test_another_quantization_than_the_checkpoints_stops_it(sim_host, tmp_path, sim):
    path = model(tmp_path, quantization_config={"quant_method": "fp8"})
    result = run_args(sim_host, "--model-path", path, "--quantization", "awq", sim=sim)
    assert result.returncode == 1
    assert last_line(result.stderr) == (
        "ValueError: Quantization method specified in the model config (fp8) does not match the quantization "
        "method specified in the `quantization` argument (awq)."
    )


@pytest.mark.parametrize("sim", VERSIONS, ids=["0.5.11", "0.5.23"])
def test_a_parser_name_no_registry_holds_is_argparses_refusal(sim_host, sim):
    result = run_args(sim_host, "--model-path", "Qwen/Qwen3-8B", "--tool-call-parser", "json", sim=sim)
    assert result.returncode == 2
    assert "error: argument --tool-call-parser: invalid choice: 'json' (choose from " in result.stderr
