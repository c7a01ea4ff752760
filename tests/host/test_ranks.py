"""Ranks on GPUs (FACTS §7) and what each rank's memory holds."""

from __future__ import annotations

from gdnconsole.host.ranks import place_ranks, split_memory, visible_devices
from gdnconsole.host.state import Gpu, Server


def server(
    children: list[tuple[int, str]], cmdline: list[str] | None = None, env: dict[str, str] | None = None
) -> Server:
    return Server.parse(
        {
            "pid": 100,
            "cmdline": cmdline or ["python3", "-m", "sglang.launch_server", "--tp", str(len(children))],
            "env": env or {},
            "children": [
                {"pid": pid, "rank": rank, "title": f"sglang::scheduler_{rank}"} for pid, rank in children
            ],
        }
    )


def gpu(index: int, *pids: int) -> Gpu:
    return Gpu.parse({"index": index, "processes": [{"pid": pid, "used_mib": 1000} for pid in pids]}, index)


def test_nvml_process_list_wins() -> None:
    placed = place_ranks(server([(11, "TP0"), (12, "TP1")]), [gpu(0, 12), gpu(1, 11)])
    assert [(p.rank, p.gpu, p.evidence) for p in placed] == [("TP1", 0, "nvml"), ("TP0", 1, "nvml")]


def test_flags_before_the_ranks_hold_memory() -> None:
    cmd = ["sglang", "serve", "--tp", "2", "--base-gpu-id", "1", "--gpu-id-step", "2"]
    placed = place_ranks(server([(11, "TP0"), (12, "TP1")], cmd), [gpu(i) for i in range(4)])
    assert [(p.rank, p.gpu, p.evidence) for p in placed] == [("TP0", 1, "flags"), ("TP1", 3, "flags")]


def test_cuda_visible_devices_maps_ordinals_to_nvml_indices() -> None:
    placed = place_ranks(server([(11, "TP0"), (12, "TP1")], env={"CUDA_VISIBLE_DEVICES": "2,3"}), [])
    assert [(p.rank, p.gpu) for p in placed] == [("TP0", 2), ("TP1", 3)]
    assert visible_devices({"CUDA_VISIBLE_DEVICES": "GPU-abc"}) is None
    assert visible_devices({}) is None


def test_memory_split_from_the_log_numbers() -> None:
    numbers = {"k_gb": 1.0, "v_gb": 1.0, "mamba_conv_gb": 0.5, "mamba_ssm_gb": 0.5, "graph_mem_gb": 0.25}
    split = split_memory(30_000, 49_140, numbers, weights_gb=25.0)
    assert split.parts == {"weights": 25_600, "kv": 2_048, "mamba": 1_024, "graphs": 256, "other": 1_072}
    assert split.free == 19_140
    assert split_memory(500, 49_140, {}, None).parts == {"other": 500}
