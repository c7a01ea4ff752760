"""Memory arithmetic of a rank: weights, KV and mamba pools, CUDA graphs, and SGLang's memory defaults.

All sizes are GiB per rank (SGLang prints ``bytes / (1 << 30)`` as "GB"). Weights are bf16.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gdnsim.server.models import GIB, ModelSpec

BF16 = 2
FP32 = 4
REPLICATED_SHARE = 0.0183  # norms, vision tower, … kept whole on every rank (fits 25.64 GB for 27B at tp 2)
MAMBA_FULL_MEMORY_RATIO = 0.9  # mamba state : full-attention KV split of the pool memory
CUDA_CONTEXT_GIB = 0.41  # taken before "Init … begin" measures
NCCL_BUFFERS_GIB = 0.28  # what "Init torch distributed ends … mem usage=" shows at tp > 1


def weights_gib(spec: ModelSpec, tp: int) -> float:
    sharded = spec.params_b * 1e9 * BF16 / GIB / tp
    return sharded + spec.params_b * REPLICATED_SHARE


def draft_weights_gib(spec: ModelSpec, tp: int) -> float:
    """A NEXTN/MTP draft: one decoder layer; embedding and LM head are shared with the target."""
    return spec.params_b * 1e9 / spec.layers * BF16 / GIB / tp


def dist_init_gib(tp: int) -> float:
    return NCCL_BUFFERS_GIB if tp > 1 else 0.03


def kv_bytes_per_token(spec: ModelSpec, tp: int, draft_layers: int, dtype_bytes: int = BF16) -> int:
    """K plus V bytes of one token over every full-attention layer (and the draft's) on one rank."""
    heads = max(1, spec.kv_heads // tp)
    return 2 * (spec.full_attn_layers + draft_layers) * heads * spec.head_dim * dtype_bytes


def ssm_bytes_per_slot(spec: ModelSpec, tp: int) -> int:
    heads = max(1, spec.linear_v_heads // tp)
    return spec.linear_layers * heads * spec.linear_head_dim * spec.linear_head_dim * FP32


def conv_bytes_per_slot(spec: ModelSpec, tp: int) -> int:
    conv_dim = (2 * spec.linear_k_heads + spec.linear_v_heads) * spec.linear_head_dim // tp
    return spec.linear_layers * conv_dim * (spec.conv_kernel - 1) * BF16


@dataclass(frozen=True)
class Pools:
    """What "Mamba Cache is allocated" and "KV Cache is allocated" report, and their total."""

    kv_tokens: int
    k_gib: float
    v_gib: float
    mamba_slots: int = 0
    conv_gib: float = 0.0
    ssm_gib: float = 0.0
    inter_ssm_gib: float = 0.0
    inter_conv_gib: float = 0.0

    @property
    def total_gib(self) -> float:
        mamba = self.conv_gib + self.ssm_gib + self.inter_ssm_gib + self.inter_conv_gib
        return self.k_gib + self.v_gib + mamba


def plan_pools(rest_gib: float, spec: ModelSpec, tp: int, draft_tokens: int, page_size: int) -> Pools:
    """Split ``rest_gib`` (SGLang's ``rest_memory``) into mamba state slots and KV tokens.

    ``draft_tokens`` is 0 without speculative decoding; with it, the draft layer adds KV and each mamba
    slot carries intermediate states for every draft token.
    """
    per_token = kv_bytes_per_token(spec, tp, 1 if draft_tokens else 0)
    if not spec.hybrid_gdn:
        return _kv_pool(rest_gib * GIB, per_token, page_size)
    ssm, conv = ssm_bytes_per_slot(spec, tp), conv_bytes_per_slot(spec, tp)
    per_slot = (ssm + conv) * (1 + draft_tokens)
    mamba_budget = rest_gib * GIB * MAMBA_FULL_MEMORY_RATIO / (1 + MAMBA_FULL_MEMORY_RATIO)
    slots = max(1, int(mamba_budget // per_slot))
    kv = _kv_pool(rest_gib * GIB - slots * per_slot, per_token, page_size)
    return Pools(
        kv_tokens=kv.kv_tokens,
        k_gib=kv.k_gib,
        v_gib=kv.v_gib,
        mamba_slots=slots,
        conv_gib=slots * conv / GIB,
        ssm_gib=slots * ssm / GIB,
        inter_ssm_gib=slots * ssm * draft_tokens / GIB,
        inter_conv_gib=slots * conv * draft_tokens / GIB,
    )


def _kv_pool(budget_bytes: float, per_token: int, page_size: int) -> Pools:
    tokens = int(budget_bytes // per_token) // page_size * page_size
    half = tokens * per_token / 2 / GIB
    return Pools(kv_tokens=tokens, k_gib=half, v_gib=half)


def graph_gib(max_bs: int, draft: bool) -> float:
    """Memory a CUDA graph capture keeps (private pool and workspace)."""
    return (0.08 + 0.001 * max_bs) if draft else (0.30 + 0.006 * max_bs)


# --- SGLang's defaults that depend on the GPU (511 server_args.py `_handle_gpu_memory_settings`) -----


def default_chunked_prefill_size(gpu_gib: float) -> int:
    if gpu_gib < 20:
        return 2048
    return 4096 if gpu_gib < 60 else 8192 if gpu_gib < 100 else 16384


def default_cuda_graph_max_bs(gpu_gib: float, tp: int, speculative: bool) -> int:
    if speculative:
        return 48 if gpu_gib < 60 else 64
    return (24 if tp < 4 else 80) if gpu_gib < 60 else 256


def default_mem_fraction_static(
    gpu_gib: float, chunked: int, graph_bs: int, speculative: bool, hybrid: bool
) -> float:
    """SGLang reserves memory for activations, graphs and spec state and keeps the rest static."""
    reserved_gib = 1.0 + chunked * 1.5 / 1024 + graph_bs * 0.05
    if speculative:
        reserved_gib += 3.0  # draft activations and verify buffers
    if hybrid:
        reserved_gib += 4.3  # linear-attention scratch (chunked GDN prefill)
    return round((gpu_gib - reserved_gib) / gpu_gib, 3)


def cuda_graph_bs_list(max_bs: int) -> list[int]:
    """Captured batch sizes: 1, 2, 4, 8, 12, then steps of 8 (16 past 160) up to ``max_bs``."""
    sizes = [1, 2, 4, 8, 12, *range(16, 161, 8), *range(176, 1025, 16)]
    return [bs for bs in sizes if bs <= max_bs] or [1]


def safetensors_shards(spec: ModelSpec) -> int:
    return max(1, math.ceil(spec.params_b * BF16 / 5.0))  # ~5 GB per shard
