"""Does the console read SGLang's /metrics back exactly? (issue 28)

Imports a wheel's own collectors (``sglang/srt/observability/metrics_collector.py``) on CPU, with stubs
for what they import but do not use here (runtime context, server args, GPU-side modules, msgspec), feeds
them known values in SGLang's multiprocess mode (one process per scheduler, as SGLang runs them, all
writing one PROMETHEUS_MULTIPROC_DIR: utils/common.py 0511:1401, 0523:2832), renders the page as SGLang
does (a MultiProcessCollector and generate_latest: utils/common.py 0511:1414-1417, 0523:2845-2848), and
checks that gdnconsole.sglang.exposition + servingfigures read back exactly those values.

    python tests/tools/sglang_metrics_agreement.py --sglang 0.5.23 --wheel build/sgw/u0.5.23 [--save FILE]

``--wheel`` is a folder holding the wheel's ``sglang/`` (unzipped: at least srt/observability/,
srt/utils/gauge_histogram.py). Prints one JSON line {"version", "problems": [...]}; exit 1 on a problem.
``--save`` keeps the rendered page (tests/sglang/data/ holds one per version).
"""

from __future__ import annotations

import argparse
import enum
import importlib.util
import json
import multiprocessing
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# What the page must say, per DP rank (two ranks: DP attention; every scheduler logs, so TP rank 1 of
# each DP group writes too, with other values the reader must not take).
RANKS = {
    0: {"running": 7, "queued": 3, "gen": 812.5, "hit": 0.25, "full": 0.4375, "max": 0.5, "mamba": 0.5},
    1: {"running": 2, "queued": 0, "gen": 90.0, "hit": 0.75, "full": 0.125, "max": 0.13, "mamba": 0.0625},
}
ACCEPT = {0: 2.75, 1: 3.5}
RETRACTED = {0: 4, 1: 1}
QUEUE_TIMES = {0: [0.003, 0.02, 0.3], 1: [1.5]}
TTFT = [(0.15, True), (0.5, False), (0.5, True), (3.0, True)]
E2E = [(2.5, True), (7.0, False)]
ITL = [(0.02, 1), (0.09, 3)]  # (interval, new tokens): SGLang spreads an interval over its tokens
ABORTED = 2
MODEL = "qwen3.6-27b"


class _Anything:
    """A stand-in object: every attribute is None unless given."""

    def __init__(self, **given: Any) -> None:
        self.__dict__.update(given)

    def __getattr__(self, name: str) -> Any:
        return None


def _module(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


def _package(name: str, path: Path) -> None:
    module = _module(name)
    module.__path__ = [str(path)]


def _load(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _Disagg(enum.StrEnum):
    NULL = "null"
    PREFILL = "prefill"
    DECODE = "decode"

    @staticmethod
    def to_engine_type(mode: str) -> str:  # disaggregation/utils.py 0523:156-161
        return {"prefill": "prefill", "decode": "decode"}.get(mode, "unified")


# The defaults of the ServerArgs fields the collectors read (server_args.py 0511:382).
SERVER_ARGS = {"prefill_delayer_max_delay_passes": 30}


class _Env:
    def get(self) -> bool:
        return False


def install_stubs(wheel: Path, parallel: _Anything) -> types.ModuleType:
    """Make ``sglang.srt.observability.metrics_collector`` importable from ``wheel`` and import it."""
    srt = wheel / "sglang/srt"
    _package("sglang", wheel / "sglang")
    _package("sglang.srt", srt)
    _package("sglang.srt.observability", srt / "observability")
    _module("sglang.srt.utils", get_bool_env_var=lambda name, default="false": False).__path__ = [
        str(srt / "utils")
    ]
    _module("sglang.srt.utils.nvtx_utils", NVTX_SCHEDULER_ENABLED=False, profile_range=None,
            scheduler_nvtx_method=lambda name: (lambda f: f))  # fmt: skip
    _module("sglang.srt.environ", envs=_Anything(SGLANG_ENABLE_EPLB_BALANCEDNESS_METRIC=_Env()))
    _module("sglang.srt.model_executor")
    _module("sglang.srt.model_executor.forward_batch_info", ForwardMode=enum.IntEnum("ForwardMode", "EXTEND"))
    _module("sglang.srt.disaggregation")
    _module("sglang.srt.disaggregation.utils", DisaggregationMode=_Disagg)
    _module("sglang.srt.server_args", ServerArgs=_Anything)
    schedule = _Anything(enable_priority_scheduling=False, **SERVER_ARGS)
    if "msgspec" not in sys.modules:
        try:
            import msgspec  # type: ignore[import-not-found]  # noqa: F401
        except ImportError:  # only DPBalanceStats subclasses it here

            class Struct:
                def __init_subclass__(cls, **kwargs: Any) -> None:
                    pass

            _module("msgspec", Struct=Struct)
    context = _Anything(is_config_namespace_published=lambda name: False)
    observability = _Anything(enable_metrics=True, enable_metrics_for_all_schedulers=True)
    _module(
        "sglang.srt.runtime_context",
        exports_expert_balancedness_to_prometheus=lambda: False,
        get_context=lambda: context,
        get_disagg=lambda: _Anything(disaggregation_mode="null", enable_pd_role_switch=False),
        get_observability=lambda: observability,
        get_parallel=lambda: parallel,
        get_schedule=lambda: schedule,
        get_serving=lambda: _Anything(served_model_name=MODEL, enable_streaming_session=False),
    )
    if (srt / "utils/gauge_histogram.py").exists():
        _load("sglang.srt.utils.gauge_histogram", srt / "utils/gauge_histogram.py")
    return _load("sglang.srt.observability.metrics_collector", srt / "observability/metrics_collector.py")


def _scheduler(wheel: Path, version: str, dp: int, tp: int) -> None:
    """One scheduler process: its collector, its stats (TP rank 1 writes other values: not to be read)."""
    parallel = _Anything(tp_rank=tp, pp_rank=0, moe_ep_rank=0, dp_rank=dp, attn_tp_rank=tp, attn_cp_rank=0)
    mc = install_stubs(wheel, parallel)
    if version == "0.5.11":  # the labels of observability/scheduler_metrics_mixin.py 0511:133-143
        labels = {
            "model_name": MODEL,
            "engine_type": "unified",
            "tp_rank": tp,
            "pp_rank": 0,
            "moe_ep_rank": 0,
        }
        labels["dp_rank"] = dp
        collector = mc.SchedulerMetricsCollector(labels=labels, server_args=_Anything(**SERVER_ARGS))
    else:  # metrics_collector.py 0523:1350-1411 builds them itself
        collector = mc.SchedulerMetricsCollector.init_new(
            server_args=_Anything(**SERVER_ARGS), enable_priority_scheduling=False, enable_lora=False,
            enable_hierarchical_cache=False,
        ).collector  # fmt: skip
    want = RANKS[dp] if tp == 0 else {k: v * 10 for k, v in RANKS[dp].items()}
    stats = mc.SchedulerStats(
        num_running_reqs=mc.QueueCount(total=int(want["running"])),
        num_queue_reqs=mc.QueueCount(total=int(want["queued"])),
        gen_throughput=want["gen"],
        cache_hit_rate=want["hit"],
        token_usage=want["max"],
        full_token_usage=want["full"],
        mamba_usage=want["mamba"],
        spec_accept_length=ACCEPT[dp] if tp == 0 else 9.0,
    )
    collector.log_stats(stats)
    if tp == 0:
        for value in QUEUE_TIMES[dp]:
            collector.observe_queue_time(value)
        collector.increment_retracted_reqs(RETRACTED[dp], 100, 10)


def _tokenizer(wheel: Path, version: str) -> None:
    mc = install_stubs(wheel, _Anything(tp_rank=0, pp_rank=0, dp_rank=None))
    if version == "0.5.11":  # managers/tokenizer_manager.py 0511:461-464
        labels = {"model_name": MODEL, "engine_type": "unified"}
    else:
        labels = mc.tokenizer_metric_labels()
    collector = mc.TokenizerMetricsCollector(server_args=_Anything(**SERVER_ARGS), labels=labels)
    for value, stream in TTFT:
        if version == "0.5.11":
            collector.observe_time_to_first_token(labels, value)
        else:
            collector.observe_time_to_first_token(labels, value, stream=stream)
    for interval, tokens in ITL:
        collector.observe_inter_token_latency(labels, interval, tokens)
    for value, stream in E2E:
        extra = {} if version == "0.5.11" else {"is_streaming": stream}
        collector.observe_one_finished_request(
            labels, prompt_tokens=10, generation_tokens=5, cached_tokens=0, e2e_latency=value,
            has_grammar=False, **extra,
        )  # fmt: skip
    for _ in range(ABORTED):
        collector.observe_one_aborted_request(labels)


def _run(target: Any, *args: Any) -> None:
    process = multiprocessing.get_context("fork").Process(target=target, args=args)
    process.start()
    process.join()
    if process.exitcode != 0:
        raise RuntimeError(f"{target.__name__}{args[1:]} exited {process.exitcode}")


def render(wheel: Path, version: str) -> str:
    """The page SGLang would serve after the known values above."""
    with tempfile.TemporaryDirectory(prefix="sglang-metrics-") as folder:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder  # before prometheus_client is imported
        for dp in RANKS:
            for tp in (0, 1):
                _run(_scheduler, wheel, version, dp, tp)
        _run(_tokenizer, wheel, version)
        from prometheus_client import CollectorRegistry, generate_latest, multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry).decode()


def _quantiles(values: list[float], bounds: list[float]) -> Any:
    sys.path.insert(0, str(ROOT))
    from gdnconsole.sglang.histwindow import quantile

    buckets = tuple((b, float(sum(1 for v in values if v <= b))) for b in [*bounds, float("inf")])
    return tuple(quantile(q, buckets) for q in (0.5, 0.9, 0.99))


def check(version: str, text: str, bounds: dict[str, list[float]]) -> list[str]:
    """What the console reads from ``text`` that is not what was fed."""
    sys.path.insert(0, str(ROOT))
    from gdnconsole.sglang.exposition import Exposition, parse
    from gdnconsole.sglang.servingfigures import from_metrics

    expo = parse(text)
    if not isinstance(expo, Exposition):
        return [f"page not read: {expo.message}"]
    figures = from_metrics(expo, version=version, pools=frozenset({"mamba"}))
    problems = []
    if [r.dp_rank for r in figures.ranks] != sorted(RANKS):
        problems.append(f"ranks {[r.dp_rank for r in figures.ranks]}, want {sorted(RANKS)}")
    for r in figures.ranks:
        want = RANKS.get(r.dp_rank, {})
        got = {"running": r.running, "queued": r.queued, "gen": r.gen_throughput, "hit": r.cache_hit_rate,
               "full": r.token_usage, "mamba": r.mamba_usage, "accept": r.accept_length,
               "retracted": r.retracted, "aborted": r.aborted}  # fmt: skip
        expect = {**{k: want.get(k) for k in ("running", "queued", "gen", "hit", "full", "mamba")},
                  "accept": ACCEPT.get(r.dp_rank), "retracted": RETRACTED.get(r.dp_rank),
                  "aborted": ABORTED if r.dp_rank == 0 else None}  # fmt: skip
        for key, value in expect.items():
            if got[key] != value:
                problems.append(f"rank {r.dp_rank} {key}: read {got[key]!r}, fed {value!r}")
    fed = {
        "ttft_s": [v for v, _ in TTFT],
        "e2e_s": [v for v, _ in E2E],
        "itl_s": [i / n for i, n in ITL for _ in range(n)],
        "queue_s": [v for vs in QUEUE_TIMES.values() for v in vs],
    }
    for key, values in fed.items():
        latency = getattr(figures, key)
        if latency is None:
            problems.append(f"{key}: none read, fed {len(values)}")
            continue
        want_q = _quantiles(values, bounds[key])
        if latency.count != len(values) or (latency.p50, latency.p90, latency.p99) != want_q:
            problems.append(f"{key}: read {latency}, fed {len(values)} giving {want_q}")
    return problems


def bucket_bounds(text: str) -> dict[str, list[float]]:
    """Each latency histogram's bounds as the page declares them (the wheel's, not ours)."""
    sys.path.insert(0, str(ROOT))
    from gdnconsole.sglang.exposition import Exposition, parse
    from gdnconsole.sglang.metricfacts import Figure, families

    expo = parse(text)
    assert isinstance(expo, Exposition)
    out = {}
    pairs: tuple[tuple[str, Figure], ...] = (
        ("ttft_s", "ttft"),
        ("e2e_s", "e2e"),
        ("itl_s", "itl"),
        ("queue_s", "queue_time"),
    )
    for key, figure in pairs:
        name = families("0.5.23")[figure].name  # the same names in both versions
        les = {s.label("le") for s in expo.named(f"{name}_bucket")}
        out[key] = sorted(float(le) for le in les if le not in (None, "+Inf"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sglang", required=True, choices=("0.5.11", "0.5.23"))
    parser.add_argument("--wheel", required=True, type=Path)
    parser.add_argument("--save", type=Path)
    args = parser.parse_args(argv)
    text = render(args.wheel.resolve(), args.sglang)
    if args.save:
        args.save.write_text(text)
    problems = check(args.sglang, text, bucket_bounds(text))
    print(json.dumps({"version": args.sglang, "problems": problems}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
