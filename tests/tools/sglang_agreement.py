"""How often `gdnconsole check` agrees with SGLang's own argument processing, measured (issue 17).

SGLang's argument processing runs on a CPU box when its imports are satisfied and its questions about the
GPU are answered (FACTS §0). This script runs it from an unpacked wheel, in a Python that has torch and
SGLang's light dependencies, on a generated set of command lines, and compares each verdict with ours.

    python tests/tools/sglang_agreement.py --sglang 0.5.11 --wheel /tmp/wheels/u511 \\
        --python /tmp/sglvenv/bin/python [--extra-path DIR] [--count 400] [--seed 1] [--json OUT]

It prints the agreement (same verdict), the false accepts (we say ok, SGLang stops), the false rejects, and
for argvs both reject, whether our first error is the exception SGLang raised; then every disagreement with
SGLang's own words. Exit 0 always (it measures; the tests decide what is acceptable). How to prepare the
Python, and how to add the next SGLang version, is in tests/tools/README-agreement.md.

The same file is the worker (``--worker``): it runs inside that Python, never imports gdnconsole, and answers
one JSON line per argv on stdin. GPU-only packages are stubbed there and only there.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

# The GPUs an argv is checked on: (name, compute capability, memory MiB, count).
PERSONAS: dict[str, tuple[str, str, int, int]] = {
    "a6000": ("NVIDIA RTX A6000", "8.6", 49140, 2),
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", 81559, 8),
    "b200": ("NVIDIA B200", "10.0", 183359, 8),
}
# Packages that need a GPU (or its toolchain) to import: stubbed in the worker only.
GPU_MODULES = ("sgl_kernel", "flashinfer", "tvm_ffi")

# Minimal config.json per model kind: enough for SGLang to read the architecture and its attention shape.
MODELS: dict[str, dict[str, Any]] = {
    "llama": {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
        "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
        "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "torch_dtype": "bfloat16", "head_dim": 128,
    },
    "qwen3": {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096,
        "intermediate_size": 12288, "num_attention_heads": 32, "num_hidden_layers": 36,
        "num_key_value_heads": 8, "vocab_size": 151936, "max_position_embeddings": 40960, "head_dim": 128,
        "torch_dtype": "bfloat16",
    },
    "qwen3.6": {
        "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "vision_config": {},
        "text_config": {
            "model_type": "qwen3_5_text", "hidden_size": 5120, "num_hidden_layers": 64,
            "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 248320,
            "full_attention_interval": 4, "linear_num_key_heads": 16, "linear_num_value_heads": 48,
            "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
            "intermediate_size": 17408, "max_position_embeddings": 262144, "mtp_num_hidden_layers": 1,
        },
        "torch_dtype": "bfloat16",
    },
}  # fmt: skip
# MoE and MLA models, drawn only with --wide (the plain set stays as it was measured).
WIDE_MODELS: dict[str, dict[str, Any]] = {
    "qwen3-moe": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
        "intermediate_size": 6144, "moe_intermediate_size": 768, "num_attention_heads": 32,
        "num_hidden_layers": 48, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
        "num_experts_per_tok": 8, "vocab_size": 151936, "max_position_embeddings": 40960,
        "torch_dtype": "bfloat16", "decoder_sparse_step": 1, "norm_topk_prob": True,
    },
    "deepseek-v3": {
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
        "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_attention_heads": 128,
        "num_hidden_layers": 61, "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1,
        "num_experts_per_tok": 8, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "first_k_dense_replace": 3, "moe_layer_freq": 1,
        "n_group": 8, "topk_group": 4, "routed_scaling_factor": 2.5, "vocab_size": 129280,
        "max_position_embeddings": 163840, "torch_dtype": "bfloat16", "rope_theta": 10000,
    },
}  # fmt: skip
# Checkpoints an operator serves beyond speculation (--beyond): quantized dense, MoE and MLA models with
# their own quantization_config, and a GPT-OSS-like MoE (attention sinks, MXFP4 experts).
BEYOND_MODELS: dict[str, dict[str, Any]] = {
    "qwen3-fp8": {
        **MODELS["qwen3"], "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic",
                                                   "weight_block_size": [128, 128]},
    },
    "llama-awq": {
        **MODELS["llama"], "max_position_embeddings": 8192, "torch_dtype": "float16",
        "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True,
                                "version": "gemm"},
    },
    "deepseek-v3-fp8": {
        **WIDE_MODELS["deepseek-v3"], "quantization_config": {
            "quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3", "weight_block_size": [128, 128]},
    },
    "gpt-oss": {
        "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
        "intermediate_size": 2880, "num_attention_heads": 64, "num_hidden_layers": 24,
        "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 32, "experts_per_token": 4,
        "num_experts_per_tok": 4, "vocab_size": 201088, "max_position_embeddings": 131072,
        "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"] * 12,
        "rope_theta": 150000, "torch_dtype": "bfloat16",
        "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                         "original_max_position_embeddings": 4096, "truncate": False},
        "quantization_config": {"quant_method": "mxfp4",
                                "modules_to_not_convert": ["model.layers.*.self_attn", "model.embed_tokens",
                                                           "lm_head", "model.layers.*.mlp.router"]},
    },
}  # fmt: skip
ALL_MODELS = {**MODELS, **WIDE_MODELS, **BEYOND_MODELS}


# -- generating command lines ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    persona: str
    model: str  # a key of MODELS
    flags: tuple[str, ...]  # after --model-path

    def argv(self, models_dir: Path) -> list[str]:
        """``@models/NAME`` in a flag's value is the written model folder NAME."""
        flags = [f.replace("@models", str(models_dir)) for f in self.flags]
        return ["--model-path", str(models_dir / self.model), *flags]


def _maybe(rng: random.Random, p: float, *tokens: str) -> list[str]:
    return list(tokens) if rng.random() < p else []


def generate(
    sglang: str, count: int, seed: int, *, wide: bool = False, moe: bool = False, beyond: bool = False
) -> list[Case]:
    """``count`` command lines an operator might try: parallelism, pages and chunks, backends, memory and
    scheduling, speculative decoding and mamba options, with some typos. Deterministic for a seed.
    ``wide`` adds draft models, DFLASH/EAGLE3, CUDA graph, compile, quantization and kernel flags;
    ``moe`` adds expert parallelism (EP size, all-to-all and MoE runner backends, EPLB) on MoE models
    and memory and scheduling flags (with out-of-range values) on every model; ``beyond`` draws what an
    operator types beyond speculation instead (``_beyond``), on dense, MoE, MLA and GPT-OSS-like models."""
    if beyond:
        return _beyond_cases(sglang, count, seed)
    rng = random.Random(seed)
    new = tuple(int(p) for p in sglang.split(".")[:3]) >= (0, 5, 14)
    mamba = "--mamba-radix-cache-strategy" if new else "--mamba-scheduler-strategy"
    cases = [_one(rng, new, mamba) for _ in range(count)]
    if wide:
        more = random.Random(seed + 1_000_003)
        cases = [Case(c.persona, _wide_model(more, c.model), (*c.flags, *_wide(more, new))) for c in cases]
    if moe:
        extra = random.Random(seed + 2_000_003)
        cases = [_moe_case(extra, c, new) for c in cases]
    return cases


MOE_MODELS = ("qwen3-moe", "deepseek-v3")


def _moe_case(rng: random.Random, case: Case, new: bool) -> Case:
    """Half the lines move to a MoE model and get expert-parallel flags; all get memory/scheduling ones."""
    model, flags = case.model, list(case.flags)
    if rng.random() < 0.5:
        model = rng.choice(MOE_MODELS)
        flags += _moe(rng, new)
    return Case(case.persona, model, (*flags, *_memory(rng, new)))


def _moe(rng: random.Random, new: bool) -> list[str]:
    out: list[str] = []
    ep = rng.choice(["--ep-size", "--expert-parallel-size", "--ep"])
    out += _maybe(rng, 0.6, ep, str(rng.choice([1, 2, 4, 8])))
    # 0.5.23's deepep_v2, megamoe and pplx are left out: their checks are per-rank token budgets from
    # environment variables and per-architecture tables that the checker does not model (README-agreement.md).
    a2a = ["none", "deepep", "mooncake", "flashinfer", "mori"] + (["pplx"] if new else [])
    out += _maybe(rng, 0.35, "--moe-a2a-backend", rng.choice(a2a))
    runners = ["auto", "triton", "deep_gemm", "cutlass", "flashinfer_cutlass", "flashinfer_trtllm",
               "flashinfer_trtllm_routed", "flashinfer_cutedsl", "triton_kernel"]  # fmt: skip
    out += _maybe(rng, 0.35, "--moe-runner-backend", rng.choice(runners))
    out += _maybe(rng, 0.15, "--deepep-mode", rng.choice(["auto", "normal", "low_latency"]))
    out += _maybe(rng, 0.15, "--enable-eplb")
    out += _maybe(rng, 0.2, "--quantization", rng.choice(["fp8", "modelopt_fp4", "mxfp8", "awq"]))
    out += _maybe(rng, 0.1, "--moe-dense-tp-size", str(rng.choice([1, 2])))
    out += _maybe(rng, 0.1, "--enable-dp-lm-head")
    out += _maybe(rng, 0.05, "--disable-shared-experts-fusion")
    return out


def _memory(rng: random.Random, new: bool) -> list[str]:
    out: list[str] = []
    out += _maybe(rng, 0.15, "--mem-fraction-static", str(rng.choice([0.5, 0.88, 0.95, 1.2, 0, -0.1])))
    out += _maybe(rng, 0.12, "--max-running-requests", str(rng.choice([1, 16, 0, -1])))
    out += _maybe(rng, 0.12, "--max-total-tokens", str(rng.choice([4096, 100000, 0, -1])))
    out += _maybe(rng, 0.12, "--chunked-prefill-size", str(rng.choice([-1, 0, 512, 1000, 16384])))
    out += _maybe(rng, 0.1, "--max-prefill-tokens", str(rng.choice([1024, 16384, 0])))
    policies = ["fcfs", "lpm", "random", "dfs-weight", "lof", "priority"]
    out += _maybe(rng, 0.12, "--schedule-policy", rng.choice(policies))
    out += _maybe(rng, 0.08, "--enable-priority-scheduling")
    out += _maybe(rng, 0.1, "--schedule-conservativeness", str(rng.choice([0.3, 1.5, 0, -0.5])))
    bs = "--cuda-graph-bs" + ("-decode" if new else "")
    out += _maybe(rng, 0.08, bs, *rng.choice([["1", "2", "4"], ["8", "16"], ["0", "4"]]))
    graph_max = "--cuda-graph-max-bs" + ("-decode" if new and rng.random() < 0.7 else "")
    out += _maybe(rng, 0.08, graph_max, str(rng.choice([8, 64, 0])))
    out += _maybe(rng, 0.1, "--disable-radix-cache")
    out += _maybe(rng, 0.08, "--enable-mixed-chunk")
    out += _maybe(rng, 0.05, "--disable-chunked-prefix-cache")
    return out


BEYOND_DRAW = ("llama", "qwen3", "qwen3-moe", "deepseek-v3", *BEYOND_MODELS)


def _beyond_cases(sglang: str, count: int, seed: int) -> list[Case]:
    rng = random.Random(seed + 3_000_017)
    new = tuple(int(p) for p in sglang.split(".")[:3]) >= (0, 5, 14)
    return [
        Case(rng.choice(list(PERSONAS)), rng.choice(BEYOND_DRAW), tuple(_beyond(rng, new)))
        for _ in range(count)
    ]


def _beyond(rng: random.Random, new: bool) -> list[str]:
    """Parallelism, memory, backends, quantization, LoRA, disaggregation, parsers, logging and
    determinism, as operators type them (typos and out-of-range values included)."""
    out: list[str] = []
    out += _maybe(rng, 0.6, "--tp", str(rng.choice([1, 2, 4, 8])))
    if rng.random() < 0.3:  # data parallelism, with or without attention data parallelism
        out += ["--dp", str(rng.choice([2, 4]))]
        out += _maybe(rng, 0.5, "--enable-dp-attention")
        out += _maybe(rng, 0.3 if new else 0, "--attn-dp-size", str(rng.choice([2, 4])))
    elif new and rng.random() < 0.1:
        out += ["--attn-dp-size", str(rng.choice([2, 4]))]
    out += _maybe(rng, 0.12, "--enable-dp-lm-head")
    out += _maybe(rng, 0.1, "--enable-two-batch-overlap")
    out += _maybe(rng, 0.08, "--moe-a2a-backend", rng.choice(["deepep", "none"]))
    out += _maybe(rng, 0.08, "--pp-size", "2")
    out += _maybe(rng, 0.08, "--ep-size", str(rng.choice([2, 8])))
    out += _maybe(rng, 0.2, "--context-length", str(rng.choice([4096, 32768, 65536, 200000, 1048576])))
    out += _maybe(rng, 0.12, "--mem-fraction-static", str(rng.choice([0.7, 0.85, 0.92])))
    out += _maybe(rng, 0.1, "--max-running-requests", str(rng.choice([32, 256])))
    out += _maybe(rng, 0.08, "--max-total-tokens", str(rng.choice([65536, 400000])))
    out += _maybe(rng, 0.1, "--kv-cache-dtype", rng.choice(["auto", "fp8_e4m3", "fp8_e5m2", "bf16"]))
    backends = ["flashinfer", "triton", "fa3", "fa4", "trtllm_mha", "flashmla", "trtllm_mla", "cutlass_mla",
                "torch_native", "flex_attention"]  # fmt: skip
    out += _maybe(rng, 0.3, "--attention-backend", rng.choice(backends))
    out += _maybe(rng, 0.06, "--sampling-backend", rng.choice(["flashinfer", "pytorch"]))
    out += _maybe(rng, 0.06, "--grammar-backend", rng.choice(["xgrammar", "outlines", "llguidance", "none"]))
    quants = ["fp8", "awq", "gptq", "mxfp4", "modelopt_fp4", "w8a8_int8", "awq_marlin", "bitsandbytes"]
    out += _maybe(rng, 0.2, "--quantization", rng.choice(quants))
    if rng.random() < 0.15:
        out += _maybe(rng, 0.7, "--enable-lora")
        out += _maybe(rng, 0.5, "--lora-paths", "adapter=@models/llama")
        out += _maybe(rng, 0.4, "--max-lora-rank", str(rng.choice([8, 64])))
        out += _maybe(rng, 0.3, "--lora-target-modules", rng.choice(["all", "q_proj", "v_proj"]))
        out += _maybe(rng, 0.3, "--max-loras-per-batch", str(rng.choice([0, 1, 4, 8])))
        out += _maybe(rng, 0.25, "--max-loaded-loras", str(rng.choice([1, 2, 8, 32])))
        out += _maybe(rng, 0.25, "--lora-backend", rng.choice(["triton", "csgmv", "torch_native"]))
        out += _maybe(rng, 0.15, "--enable-lora-overlap-loading")
    if rng.random() < 0.15:
        out += ["--disaggregation-mode", rng.choice(["prefill", "decode", "null"])]
        out += _maybe(rng, 0.4, "--disaggregation-transfer-backend", rng.choice(["mooncake", "nixl"]))
    out += _maybe(rng, 0.15, "--enable-hierarchical-cache")
    out += _maybe(rng, 0.08, "--disable-radix-cache")
    out += _maybe(rng, 0.05, "--hicache-ratio", str(rng.choice([0.5, 2])))
    tool = ["qwen", "qwen25", "llama3", "gpt-oss", "hermes", "deepseekv3", "kimi_k2", "auto", "qwen3", "json"]
    out += _maybe(rng, 0.15, "--tool-call-parser", rng.choice(tool))
    reasoning = ["qwen3", "deepseek-r1", "gpt-oss", "auto", "kimi", "deepseek", "qwen3-thinking"]
    out += _maybe(rng, 0.12, "--reasoning-parser", rng.choice(reasoning))
    levels = ["info", "debug", "warning", "error", "critical", "WARNING", "warn", "verbose", "trace"]
    out += _maybe(rng, 0.12, "--log-level", rng.choice(levels))
    out += _maybe(rng, 0.05, "--log-level-http", rng.choice(["warning", "debug", "verbose"]))
    out += _maybe(rng, 0.08, "--enable-deterministic-inference")
    out += _maybe(rng, 0.05, "--disable-cuda-graph")
    out += _maybe(rng, 0.05, "--enable-torch-compile")
    out += _maybe(rng, 0.1, "--trust-remote-code")
    return out


def _wide_model(rng: random.Random, model: str) -> str:
    return rng.choice(list(WIDE_MODELS)) if rng.random() < 0.3 else model


def _wide(rng: random.Random, new: bool) -> list[str]:
    out: list[str] = []
    if rng.random() < 0.15:
        algorithm = rng.choice(["DFLASH", "EAGLE3", "EAGLE"])
        out += ["--speculative-algorithm", algorithm]  # the last one given wins, as in argparse
        out += _maybe(rng, 0.6, "--speculative-draft-model-path", "@models/llama")
        out += _maybe(rng, 0.3, "--speculative-num-steps", str(rng.choice([1, 3])))
    out += _maybe(rng, 0.1, "--speculative-draft-model-path", "@models/qwen3")
    out += _maybe(rng, 0.1, "--mamba-track-interval", str(rng.choice([100, 128, 256])))
    out += _maybe(rng, 0.05, "--enable-dp-lm-head")
    out += _maybe(rng, 0.08, "--cuda-graph-max-bs" + ("-decode" if new and rng.random() < 0.7 else ""), "16")
    out += _maybe(rng, 0.05, "--disable-cuda-graph")
    out += _maybe(rng, 0.05, "--enable-torch-compile")
    out += _maybe(rng, 0.05, "--quantization", rng.choice(["fp8", "awq"]))
    out += _maybe(rng, 0.05, "--context-length", "4096")
    out += _maybe(rng, 0.05, "--max-total-tokens", "8192")
    out += _maybe(rng, 0.05, "--schedule-policy", rng.choice(["lpm", "fcfs", "dfs-weight"]))
    out += _maybe(rng, 0.05, "--speculative-moe-runner-backend", rng.choice(["triton", "flashinfer_trtllm"]))
    out += _maybe(rng, 0.05, "--sampling-backend", rng.choice(["pytorch", "flashinfer"]))
    out += _maybe(rng, 0.05, "--grammar-backend", rng.choice(["xgrammar", "outlines", "none"]))
    out += _maybe(rng, 0.08, "--linear-attn-backend", rng.choice(["triton", "flashinfer"]))
    out += _maybe(rng, 0.04, "--mamba-ssm-dtype", rng.choice(["bfloat16", "float32"]))
    return out


def _one(rng: random.Random, new: bool, mamba: str) -> Case:
    out: list[str] = []
    out += _maybe(rng, 0.6, "--tp", str(rng.choice([1, 2, 4, 8])))
    if rng.random() < 0.25:
        size = str(rng.choice([2, 3, 4]))
        out += (
            ["--attn-dp-size", size]
            if new and rng.random() < 0.5
            else ["--dp", size, "--enable-dp-attention"]
        )
    out += _maybe(rng, 0.35, "--page-size", str(rng.choice([1, 16, 32, 48, 64, 128])))
    out += _maybe(rng, 0.2, "--chunked-prefill-size", str(rng.choice([2048, 4096, 3000, 8192])))
    out += _maybe(rng, 0.1, "--pp-size", "2")
    out += _maybe(rng, 0.1, "--ep-size", str(rng.choice([2, 4])))
    out += _maybe(rng, 0.05, "--nnodes", "2", "--node-rank", "0")
    backends = ["flashinfer", "triton", "fa3", "fa4", "trtllm_mha", "flex_attention", "trtllm_mla", "flashmla",
                "cutlass_mla", "torch_native"]  # fmt: skip
    out += _maybe(rng, 0.35, "--attention-backend", rng.choice(backends))
    out += _maybe(rng, 0.1, "--prefill-attention-backend", rng.choice(backends))
    out += _maybe(rng, 0.1, "--decode-attention-backend", rng.choice(backends))
    out += _maybe(rng, 0.1, "--kv-cache-dtype", rng.choice(["auto", "fp8_e4m3", "fp8_e5m2", "bf16"]))
    out += _maybe(rng, 0.15, "--mem-fraction-static", str(rng.choice([0.8, 0.9])))
    out += _maybe(rng, 0.15, "--max-running-requests", str(rng.choice([8, 64])))
    out += _maybe(rng, 0.15, "--disable-radix-cache")
    out += _maybe(rng, 0.1, "--disable-overlap-schedule")
    out += _maybe(rng, 0.1, "--enable-mixed-chunk")
    if rng.random() < 0.6:
        out += ["--speculative-algorithm", rng.choice(["NEXTN", "EAGLE", "NGRAM", "STANDALONE"])]
        out += _maybe(rng, 0.6, "--speculative-num-steps", str(rng.choice([1, 2, 3])))
        out += _maybe(rng, 0.6, "--speculative-eagle-topk", str(rng.choice([1, 2, 4])))
        out += _maybe(rng, 0.5, "--speculative-num-draft-tokens", str(rng.choice([2, 4, 8])))
    out += _maybe(rng, 0.3, mamba, rng.choice(["auto", "no_buffer", "extra_buffer"]))
    out += _maybe(rng, 0.03, "--speculative-num-stpes", "2")  # a typo
    model = rng.choice(list(MODELS))
    return Case(rng.choice(list(PERSONAS)), model, tuple(out))


# -- our verdict ------------------------------------------------------------------------------------------


def ours(case: Case, sglang: str, models_dir: Path) -> dict[str, Any]:
    from gdnconsole.sglang.rules import check

    _, cc, memory, gpus = PERSONAS[case.persona]
    architecture = ALL_MODELS[case.model]["architectures"][0]
    facts: dict[str, Any] = {"compute_capability": cc, "gpus": gpus, "architecture": architecture}
    parameters = inspect.signature(check).parameters
    if "gpu_memory_mb" in parameters:  # a checker from before issue 17 lacks it
        facts["gpu_memory_mb"] = memory
    if "model_config" in parameters:  # the checkpoint's config.json, where the host has it (issue 26)
        facts["model_config"] = ALL_MODELS[case.model]
    result = check(case.argv(models_dir), sglang=sglang, **facts)
    first = result.errors[0] if result.errors else None
    return {
        "ok": result.ok,
        "raises": first.raises if first else None,
        "id": first.id if first else None,
        "message": first.sglang_text if first else None,
    }


# -- SGLang's verdict, through the worker -----------------------------------------------------------------


def theirs(
    cases: Sequence[Case], *, python: str, wheel: str, extra: list[str], models_dir: Path, sglang: str
) -> list[dict[str, Any]]:
    """SGLang's verdict on each case: one worker per GPU persona (SGLang caches what it asks the GPU)."""
    answers: dict[int, dict[str, Any]] = {}
    for persona in PERSONAS:
        indexed = [(i, c) for i, c in enumerate(cases) if c.persona == persona]
        if not indexed:
            continue
        lines = "".join(json.dumps(c.argv(models_dir)) + "\n" for _, c in indexed)
        command = [python, __file__, "--worker", "--sglang", sglang, "--wheel", wheel, "--persona", persona]
        for path in extra:
            command += ["--extra-path", path]
        done = subprocess.run(command, input=lines, capture_output=True, text=True, timeout=3600)
        replies = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        if len(replies) != len(indexed):
            raise SystemExit(f"worker for {persona} failed:\n{done.stderr[-3000:]}")
        answers.update({i: reply for (i, _), reply in zip(indexed, replies, strict=True)})
    return [answers[i] for i in range(len(cases))]


def write_models(directory: Path) -> None:
    for name, config in ALL_MODELS.items():
        (directory / name).mkdir(parents=True, exist_ok=True)
        (directory / name / "config.json").write_text(json.dumps(config))


# -- comparing ----------------------------------------------------------------------------------------------


def compare(
    cases: Sequence[Case], our: Sequence[dict[str, Any]], their: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """Counts and the disagreements. ``harness``: SGLang failed for a reason of this script's making (an
    import it could not satisfy on CPU), not a rule: left out of the agreement."""
    counts: Counter[str] = Counter()
    disagreements = []
    other_first = []  # both reject, but our first error is not the exception or text SGLang raised
    for case, o, t in zip(cases, our, their, strict=True):
        if t.get("harness"):
            counts["harness"] += 1
            continue
        counts["compared"] += 1
        if o["ok"] == t["ok"]:
            counts["agree"] += 1
            if not o["ok"]:
                counts["both_reject"] += 1
                same = o["raises"] == t["exception"]
                counts["same_exception"] += same
                if t["exception"] != "SystemExit":  # argparse's words go to stderr, not the exception
                    counts["raised"] += 1
                    counts["same_text"] += o["message"] == t["message"]
                    same = same and o["message"] == t["message"]
                if not same:
                    other_first.append(
                        {"case": [case.persona, case.model, *case.flags], "ours": o, "sglang": t}
                    )
            continue
        counts["false_accept" if o["ok"] else "false_reject"] += 1
        disagreements.append({"case": [case.persona, case.model, *case.flags], "ours": o, "sglang": t})
    return {"counts": dict(counts), "disagreements": disagreements, "other_first": other_first}


def report(sglang: str, summary: dict[str, Any]) -> str:
    c = Counter(summary["counts"])
    compared = c["compared"] or 1
    lines = [
        f"SGLang {sglang}: {c['compared']} command lines compared ({c['harness']} left out: harness)",
        f"  agree on the verdict: {c['agree']} ({100 * c['agree'] / compared:.1f}%)",
        f"  false accepts (we say ok, SGLang stops): {c['false_accept']}",
        f"  false rejects (we say it fails, SGLang accepts): {c['false_reject']}",
        f"  both reject, same exception first: {c['same_exception']} of {c['both_reject']}",
        f"  both reject, SGLang's exact text (argparse aside): {c['same_text']} of {c['raised']}",
    ]
    for d in [*summary["disagreements"], *summary.get("other_first", [])]:
        lines.append(f"- {' '.join(d['case'])}")
        o = d["ours"]
        lines.append(
            f"    ours: {'ok' if o['ok'] else o['id'] + ': ' + str(o.get('raises')) + ': ' + str(o['message'])[:200]}"
        )
        t = d["sglang"]
        lines.append(
            f"    SGLang: {'ok' if t['ok'] else t['exception'] + ': ' + t['message'][:200]} {t.get('where', '')}"
        )
    return "\n".join(lines)


# -- the worker (runs in SGLang's Python) ---------------------------------------------------------------


def _stub_gpu_modules() -> None:
    import importlib.abc
    import importlib.machinery
    import types

    class Anything:
        def __init__(self, *a: object, **k: object) -> None:
            pass

        def __getattr__(self, name: str) -> Anything:
            if name.startswith("__"):
                raise AttributeError(name)
            return Anything()

        def __call__(self, *a: object, **k: object) -> object:
            return a[0] if len(a) == 1 and callable(a[0]) and not k else Anything()

        def __mro_entries__(self, bases: tuple[object, ...]) -> tuple[type, ...]:
            return (object,)

        def __iter__(self) -> Iterator[object]:
            return iter(())

        def __bool__(self) -> bool:
            return False

    class Module(types.ModuleType):
        __path__: ClassVar[list[str]] = []

        def __getattr__(self, name: str) -> object:
            if name == "__version__":
                return "0.0.0"
            if name.startswith("__"):
                raise AttributeError(name)
            return Anything()

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(
            self, name: str, path: object, target: object = None
        ) -> importlib.machinery.ModuleSpec | None:
            if name.split(".")[0] in GPU_MODULES:
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
            return Module(spec.name)

        def exec_module(self, module: types.ModuleType) -> None:
            pass

    sys.meta_path.insert(0, Finder())


def _pretend_gpu(persona: str) -> None:
    """Answer SGLang's questions about the GPU as the persona's card would (no driver here)."""
    try:
        import torch
    except ImportError:  # a stand-in SGLang (the simulator's, in the tests) asks torch nothing
        return
    name, cc, memory, count = PERSONAS[persona]
    major, minor = (int(p) for p in cc.split("."))
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: count
    torch.cuda.get_device_capability = lambda device=None: (major, minor)
    torch.cuda.get_device_name = lambda device=None: name
    import sglang.srt.utils.common as common

    common.get_nvgpu_memory_capacity = lambda: float(memory)


def _where(exc: BaseException) -> str:
    """The last frame of the traceback inside sglang: file:line, relative to the package."""
    tb, found = exc.__traceback__, ""
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename
        if "/sglang/" in path:
            found = f"{path.split('/sglang/', 1)[1]}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _refusal(exc: BaseException) -> dict[str, Any]:
    """SGLang's refusal, or ``harness`` when an import or attribute the stubs do not satisfy failed. One
    AttributeError is SGLang's own: ``getattr(logging, args.log_level.upper())`` on a level logging
    lacks (511 server_args.py:7293, 523 :704)."""
    own = isinstance(exc, AttributeError) and str(exc).startswith("module 'logging' has no attribute")
    if isinstance(exc, (ImportError, AttributeError)) and not own:
        return {"ok": False, "harness": True, "exception": type(exc).__name__, "message": str(exc)}
    return {"ok": False, "exception": type(exc).__name__, "message": str(exc), "where": _where(exc)}


def worker(sglang: str, persona: str) -> None:
    _stub_gpu_modules()
    _pretend_gpu(persona)
    import logging

    logging.disable(logging.CRITICAL)
    from sglang.srt import server_args as sa

    new = tuple(int(p) for p in sglang.split(".")[:3]) >= (0, 5, 22)
    for line in sys.stdin:
        argv = json.loads(line)
        environ = dict(os.environ)
        try:
            args = sa.prepare_server_args(argv)
            if new:
                args.resolve_once()
            args.check_server_args()
            reply: dict[str, Any] = {"ok": True}
        except BaseException as exc:  # argparse exits; SGLang raises anything
            reply = _refusal(exc)
        finally:
            os.environ.clear()
            os.environ.update(environ)
        sys.__stdout__.write(json.dumps(reply) + "\n")
        sys.__stdout__.flush()


# -- command line ---------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sglang", required=True, help="the wheel's version, e.g. 0.5.11")
    parser.add_argument("--wheel", required=True, help="the unpacked wheel (the folder holding sglang/)")
    parser.add_argument("--python", default=sys.executable, help="a Python with torch and SGLang's deps")
    parser.add_argument(
        "--extra-path", action="append", default=[], help="put first on the worker's sys.path"
    )
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--wide", action="store_true", help="also draft models, graphs, kernels (see generate)"
    )
    parser.add_argument(
        "--moe", action="store_true", help="also expert parallelism and memory/scheduling flags"
    )
    parser.add_argument(
        "--beyond", action="store_true", help="what operators type beyond speculation (see generate)"
    )
    parser.add_argument("--json", help="also write the counts and disagreements here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--persona", choices=list(PERSONAS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        sys.path[:0] = [*args.extra_path, args.wheel]
        worker(args.sglang, args.persona)
        return 0
    cases = generate(args.sglang, args.count, args.seed, wide=args.wide, moe=args.moe, beyond=args.beyond)
    with tempfile.TemporaryDirectory(prefix="gdn-agree-") as tmp:
        models = Path(tmp)
        write_models(models)
        our = [ours(c, args.sglang, models) for c in cases]
        their = theirs(
            cases,
            python=args.python,
            wheel=args.wheel,
            extra=args.extra_path,
            models_dir=models,
            sglang=args.sglang,
        )
        summary = compare(cases, our, their)
    # The temporary model folder's name differs per run: disagreements name the model kind instead.
    print(report(args.sglang, summary))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
