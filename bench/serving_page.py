"""Render a full SGLang 0.5.23 /metrics page of a DP-attention server (tp 4, dp 4) from the wheel itself.

    python bench/serving_page.py --wheel build/sgw/u0.5.23 --out bench/data/metrics-0.5.23-dp4.txt

Uses the stubs of tests/tools/sglang_metrics_agreement.py to import the wheel's own collectors on CPU, in
SGLang's multiprocess mode (one process per scheduler writing one PROMETHEUS_MULTIPROC_DIR). Each of the
four schedulers (tp_rank = dp_rank = 0..3, attention TP size 1: the layout of ``--tp 4 --dp 4
--enable-dp-attention``, where only attn_tp_rank 0 logs, metrics_collector.py 0523:1361-1367) logs
realistic stats (LoRA and HiCache on, so their families exist too), then every family its collector
defines that is still empty gets a value, so the page holds all the families of the scheduler, tokenizer
and radix-cache collectors (0523: SchedulerMetricsCollector :334, TokenizerMetricsCollector :1822,
RadixCacheMetricsCollector :2435) with their real bucket lists. Left out, as a plain server has none:
disaggregation, streaming sessions, EPLB, the encoder and storage collectors. Run in a process of its
own: prometheus_client picks its multiprocess values at import.
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing
import os
import random
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DP = 4
MODEL = "qwen3.6-27b"
# Label values for the labels beyond a collector's own (the inventory's "base+..." columns).
EXTRA = {
    "is_streaming": "True",
    "cache_source": "device",
    "mode": "normal",
    "outcome": "success",
    "kind": "decode",
    "rank_state": "active",
    "category": "decode",
    "num_prefill_ranks": "1",
    "forward_mode": "decode",
    "forward_overlap": "True",
    "phase": "decode",
    "stage": "forward",
    "source": "scheduler",
    "pool": "full",
    "reason": "evict",
    "priority": "",
}


def agreement_tool() -> types.ModuleType:
    path = ROOT / "tests/tools/sglang_metrics_agreement.py"
    spec = importlib.util.spec_from_file_location("sglang_metrics_agreement", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fill_empty(collector: Any, rng: random.Random) -> None:
    """Give a value to every labelled family of ``collector`` that has no series yet."""
    from prometheus_client.metrics import MetricWrapperBase

    base = {k: str(v) for k, v in collector.labels.items()}
    for metric in list(vars(collector).values()):
        if not isinstance(metric, MetricWrapperBase) or not metric._labelnames:
            continue
        if getattr(metric, "_metrics", None) != {}:  # a bound child, or a family with series already
            continue
        child: Any = metric.labels(**{n: base.get(n, EXTRA.get(n, "0")) for n in metric._labelnames})
        kind = metric._type
        if kind == "counter":
            child.inc(rng.randint(1, 5000))
        elif kind == "gauge":
            child.set(round(rng.uniform(0, 100), 3))
        else:  # histogram, summary: observations spread over the bucket range
            top = max((b for b in getattr(metric, "_upper_bounds", [1.0]) if b != float("inf")), default=1.0)
            for _ in range(rng.randint(5, 60)):
                child.observe(rng.uniform(0, top) * rng.random())


def scheduler(wheel: Path, dp: int) -> None:
    tool = agreement_tool()
    parallel = tool._Anything(
        tp_rank=dp, pp_rank=0, moe_ep_rank=0, dp_rank=dp, attn_tp_rank=0, attn_cp_rank=0, attn_dp_rank=dp
    )
    mc = tool.install_stubs(wheel, parallel)
    rng = random.Random(dp)
    collector = mc.SchedulerMetricsCollector.init_new(
        server_args=tool._Anything(**tool.SERVER_ARGS), enable_priority_scheduling=False, enable_lora=True,
        enable_hierarchical_cache=True,
    ).collector  # fmt: skip
    collector.labels["model_name"] = MODEL
    running = rng.randint(8, 48)
    stats = mc.SchedulerStats(
        num_running_reqs=mc.QueueCount(total=running),
        num_queue_reqs=mc.QueueCount(total=rng.randint(0, 6)),
        num_used_tokens=running * 2300,
        gen_throughput=round(running * rng.uniform(22, 31), 2),
        cache_hit_rate=round(rng.uniform(0.2, 0.7), 4),
        token_usage=round(rng.uniform(0.3, 0.8), 4),
        full_token_usage=round(rng.uniform(0.3, 0.8), 4),
        mamba_usage=round(rng.uniform(0.1, 0.5), 4),
        spec_accept_length=round(rng.uniform(2.2, 3.4), 3),
    )
    collector.log_stats(stats)
    for _ in range(400):
        collector.observe_queue_time(rng.expovariate(20.0))
    collector.increment_retracted_reqs(rng.randint(0, 5), 1000, 100)
    fill_empty(collector, rng)
    labels = mc.radix_cache_metric_labels("radix", parallel, True)
    fill_empty(mc.RadixCacheMetricsCollector(labels=labels), rng)


def tokenizer(wheel: Path) -> None:
    tool = agreement_tool()
    mc = tool.install_stubs(wheel, tool._Anything(tp_rank=0, pp_rank=0, dp_rank=None))
    labels = {**mc.tokenizer_metric_labels(), "model_name": MODEL}
    collector = mc.TokenizerMetricsCollector(server_args=tool._Anything(**tool.SERVER_ARGS), labels=labels)
    rng = random.Random(99)
    for _ in range(2000):
        stream = rng.random() < 0.8
        collector.observe_time_to_first_token(labels, rng.lognormvariate(-1.2, 0.8), stream=stream)
        tokens = rng.randint(1, 4)
        collector.observe_inter_token_latency(labels, rng.uniform(0.02, 0.05) * tokens, tokens)
        collector.observe_one_finished_request(
            labels, prompt_tokens=rng.randint(200, 8000), generation_tokens=rng.randint(50, 2000),
            cached_tokens=rng.randint(0, 4000), e2e_latency=rng.lognormvariate(2.0, 0.7),
            has_grammar=False, is_streaming=stream,
        )  # fmt: skip
    for _ in range(7):
        collector.observe_one_aborted_request(labels)
    fill_empty(collector, rng)


def run(target: Any, *args: Any) -> None:
    process = multiprocessing.get_context("fork").Process(target=target, args=args)
    process.start()
    process.join()
    if process.exitcode != 0:
        raise RuntimeError(f"{target.__name__}{args[1:]} exited {process.exitcode}")


def render(wheel: Path) -> str:
    with tempfile.TemporaryDirectory(prefix="sglang-metrics-") as folder:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder  # before prometheus_client is imported
        for dp in range(DP):
            run(scheduler, wheel, dp)
        run(tokenizer, wheel)
        from prometheus_client import CollectorRegistry, generate_latest, multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry).decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wheel", required=True, type=Path, help="a folder holding the wheel's sglang/")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    if "prometheus_client" in sys.modules:
        raise SystemExit("prometheus_client is imported already: run this in a process of its own")
    args.out.write_text(render(args.wheel.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
