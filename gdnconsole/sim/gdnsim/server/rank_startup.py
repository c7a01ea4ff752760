"""The startup of one scheduler rank (FACTS §2.1 stages 3-8): distributed init, weights, draft weights,
memory pools, attention backends, CUDA graphs, then the ready line. GPU memory is reported to the
accounting as it grows, and every "avail mem" is read back from it, so other holders really shrink it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import gdnsim.config as config
import gdnsim.gpustate as gpustate
from gdnsim.server import graphs, sizing, timeline, tracebacks, version
from gdnsim.server.failures import SchedulerFailed
from gdnsim.server.logwriter import LogWriter
from gdnsim.server.models import ModelSpec, describe
from gdnsim.server.tqdm_bar import Bar, loader_text


@dataclass
class RankContext:
    args: dict[str, Any]  # resolved ServerArgs fields
    tp_rank: int
    gpu: int | None  # physical GPU, None when the ordinal is not visible
    log: LogWriter
    cfg: config.SimConfig = field(default_factory=config.load)
    held_gib: float = 0.0
    started: float = field(default_factory=time.monotonic)

    @property
    def rank0(self) -> bool:
        return self.tp_rank == 0

    @property
    def tp(self) -> int:
        return int(self.args["tp_size"])

    @property
    def spec(self) -> ModelSpec:
        return describe(self.args["model_path"])

    @property
    def speculative(self) -> bool:
        return self.args.get("speculative_algorithm") is not None

    @property
    def draft_tokens(self) -> int:
        return int(self.args.get("speculative_num_draft_tokens") or 0) if self.speculative else 0

    def hold(self, gib: float, util: int = 0) -> None:
        """Add ``gib`` to what this rank holds and tell the accounting."""
        self.held_gib += gib
        assert self.gpu is not None
        gpustate.report(self.gpu, round(self.held_gib * 1024), util)

    def avail(self) -> float:
        assert self.gpu is not None
        return gpustate.free_mib(self.gpu) / 1024

    def sim_seconds(self, since: float) -> float:
        """Elapsed time on the simulated timeline (wall time × speed), as the log reports it."""
        return (time.monotonic() - since) * max(self.cfg.speed, 1e-9)


@dataclass
class Ready:
    """What the rank tells the main process once it is ready (main serves /server_info from it)."""

    max_total_num_tokens: int
    max_running_requests: int
    context_len: int
    mamba_slots: int
    weight_gib: float
    kv_gib: float
    graph_gib: float
    avail_gib: float
    load_s: float
    pool_s: float
    graph_s: float
    graph_bs: list[int]  # the decode batch sizes captured as graphs (empty without graphs)


def run(ctx: RankContext) -> Ready:
    timeline.pause("spawn")
    total = init_distributed(ctx)
    load_start = time.monotonic()
    weights = load_weights(ctx, draft=False)
    if ctx.speculative:
        load_weights(ctx, draft=True)
    load_s = ctx.sim_seconds(load_start)
    pool_start = time.monotonic()
    pools = init_memory_pool(ctx, total)
    pool_s = ctx.sim_seconds(pool_start)
    init_attention_backends(ctx)
    mrr = max_running_requests(ctx, pools)
    graph_start = time.monotonic()
    graph, graph_bs = capture_graphs(ctx, mrr)
    spans = (load_s, pool_s, ctx.sim_seconds(graph_start))
    return scheduler_ready(ctx, pools, mrr, weights, graph, spans, graph_bs)


def init_distributed(ctx: RankContext) -> float:
    """Returns SGLang's ``total_gpu_memory``: what is free once the communicators exist."""
    if ctx.gpu is None:
        raise SchedulerFailed(tracebacks.invalid_device())
    ctx.hold(sizing.CUDA_CONTEXT_GIB)
    before, start = ctx.avail(), time.monotonic()
    ctx.log.info("Init parallel begin." if version.init_parallel() else "Init torch distributed begin.")
    timeline.pause("dist_init")
    if ctx.cfg.scenario == "nccl-error":
        raise SchedulerFailed(tracebacks.nccl_error())
    if ctx.tp > 1 and ctx.rank0:
        ctx.log.info("sglang is using nccl==2.27.5")
    ctx.hold(sizing.dist_init_gib(ctx.tp))
    after = ctx.avail()
    if version.init_parallel():
        ctx.log.info(f"Init parallel ends. elapsed={ctx.sim_seconds(start):.2f} s")
        ctx.log.info(f"Memory baseline taken. mem usage={before - after:.2f} GB")
    else:
        ctx.log.info(
            f"Init torch distributed ends. elapsed={ctx.sim_seconds(start):.2f} s, "
            f"mem usage={before - after:.2f} GB"
        )
    return after


def draft_class(ctx: RankContext) -> str:
    arch = ctx.spec.arch
    if ctx.args.get("speculative_algorithm") == "EAGLE3":
        return "LlamaForCausalLMEagle3"
    if ctx.spec.hybrid_gdn:
        return arch.replace("ForConditionalGeneration", "ForCausalLM") + "MTP"
    return "LlamaForCausalLMEagle" if arch == "LlamaForCausalLM" else f"{arch}NextN"


def load_weights(ctx: RankContext, draft: bool) -> float:
    spec = ctx.spec
    gib = sizing.draft_weights_gib(spec, ctx.tp) if draft else sizing.weights_gib(spec, ctx.tp)
    start = time.monotonic()
    before = ctx.avail()
    ctx.log.info(f"Load weight begin. avail mem={before:.2f} GB")
    shards = 1 if draft else sizing.safetensors_shards(spec)
    span = timeline.span("draft_weights") if draft else timeline.span("weights_per_gib", gib)
    _load_shards(ctx, shards, span, gib)
    after = ctx.avail()
    cls = draft_class(ctx) if draft else spec.arch
    quant = f"quant={ctx.args['quantization']}, " if ctx.args.get("quantization") else ""
    ctx.log.info(
        f"Load weight end. elapsed={ctx.sim_seconds(start):.2f} s, type={cls}, {quant}"
        f"avail mem={after:.2f} GB, mem usage={before - after:.2f} GB."
    )
    return before - after


def _load_shards(ctx: RankContext, shards: int, span: float, gib: float) -> None:
    """Weights arrive shard by shard; rank 0 draws the loader's tqdm bar."""
    bar = Bar(shards) if ctx.rank0 else None
    start = time.monotonic()
    if bar:
        bar.draw(loader_text(0, shards, 0.0))
    for n in range(1, shards + 1):
        time.sleep(span / shards)
        ctx.hold(gib / shards, util=30)
        if bar:
            bar.draw(loader_text(n, shards, ctx.sim_seconds(start)))
    if bar:
        bar.close()


def init_memory_pool(ctx: RankContext, total: float) -> sizing.Pools:
    """SGLang's rule: the pools take ``avail - total * (1 - mem_fraction_static)``."""
    mfs = float(ctx.args["mem_fraction_static"])
    rest = ctx.avail() - total * (1 - mfs)
    if rest <= 0:
        raise SchedulerFailed(tracebacks.not_enough_memory())
    page_size = int(ctx.args.get("page_size") or 1)
    pools = sizing.plan_pools(rest, ctx.spec, ctx.tp, ctx.draft_tokens, page_size)
    if pools.kv_tokens <= 0:
        raise SchedulerFailed(tracebacks.not_enough_memory())
    timeline.pause("pools")
    dtype = (
        "torch.bfloat16"
        if ctx.args.get("kv_cache_dtype", "auto") in ("auto", "bf16", "bfloat16")
        else "torch.float8_e4m3fn"
    )
    if ctx.rank0:
        ctx.log.info(f"Using KV cache dtype: {dtype}")
    if ctx.spec.hybrid_gdn:
        ctx.log.info(_mamba_line(pools, ctx.speculative))
    ctx.hold(pools.total_gib)
    dtype_part = f"dtype: {dtype}, " if version.kv_line_has_dtype() else ""
    ctx.log.info(
        f"KV Cache is allocated. {dtype_part}#tokens: {pools.kv_tokens}, K size: {pools.k_gib:.2f} GB, "
        f"V size: {pools.v_gib:.2f} GB"
    )
    ctx.log.info(f"Memory pool end. avail mem={ctx.avail():.2f} GB")
    return pools


def _mamba_line(pools: sizing.Pools, speculative: bool) -> str:
    line = (
        f"Mamba Cache is allocated. max_mamba_cache_size: {pools.mamba_slots}, "
        f"conv_state size: {pools.conv_gib:.2f}GB, ssm_state size: {pools.ssm_gib:.2f}GB "
    )
    if speculative:  # trailing space, as SGLang prints it
        line += (
            f"intermediate_ssm_state_cache size: {pools.inter_ssm_gib:.2f}GB "
            f"intermediate_conv_window_cache size: {pools.inter_conv_gib:.2f}GB "
        )
    return line


def init_attention_backends(ctx: RankContext) -> None:
    timeline.pause("attention")
    if not ctx.spec.hybrid_gdn:
        return
    if ctx.rank0:
        verify = ", verify=triton" if version.at_least("0.5.22") else ""
        ctx.log.info(f"Linear attention kernel backend: decode=triton, prefill=triton{verify}")
    ctx.log.info("Using hybrid linear attention backend for hybrid GDN models.")
    if ctx.rank0:
        ctx.log.info(
            "GDN kernel dispatcher: decode=TritonGDNKernel, extend=TritonGDNKernel, verify=TritonGDNKernel "
            "packed_decode=True"
        )


def max_running_requests(ctx: RankContext, pools: sizing.Pools) -> int:
    mrr = ctx.args.get("max_running_requests") or min(4096, max(1, pools.kv_tokens // 2))
    if pools.mamba_slots:
        mrr = min(mrr, pools.mamba_slots)  # each running request holds one mamba state slot
    return int(mrr)


def capture_graphs(ctx: RankContext, mrr: int) -> tuple[float, list[int]]:
    """Capture the target graphs (and the draft's with speculative decoding); returns GiB kept and the
    batch sizes captured."""
    if ctx.args.get("disable_cuda_graph"):
        return 0.0, []
    max_bs = min(int(ctx.args.get("cuda_graph_max_bs") or 8), mrr)
    bs_list = ctx.args.get("cuda_graph_bs") or sizing.cuda_graph_bs_list(max_bs)
    kept = graphs.capture_target(ctx, bs_list)
    if ctx.speculative:
        kept += graphs.capture_draft(ctx, bs_list)
    return kept, [int(bs) for bs in bs_list]


def scheduler_ready(
    ctx: RankContext,
    pools: sizing.Pools,
    mrr: int,
    weights: float,
    graph: float,
    spans: tuple[float, float, float],
    graph_bs: list[int],
) -> Ready:
    timeline.pause("ready")
    context_len = int(ctx.args.get("context_length") or ctx.spec.context_len)
    chunked = ctx.args.get("chunked_prefill_size")
    avail = ctx.avail()
    if ctx.rank0:
        ctx.log.info(
            f"max_total_num_tokens={pools.kv_tokens}, chunked_prefill_size={chunked}, "
            f"max_prefill_tokens={ctx.args.get('max_prefill_tokens')}, max_running_requests={mrr}, "
            f"context_len={context_len}, available_gpu_mem={avail:.2f} GB"
        )
    return Ready(
        pools.kv_tokens,
        mrr,
        context_len,
        pools.mamba_slots,
        weights,
        pools.total_gib,
        graph,
        avail,
        *spans,
        graph_bs,
    )
