"""What a rank's GPU memory holds, as far as its log lines say (FACTS §2.1 rows 4-8): the model's weights
(the draft model's too), the KV cache, the mamba state, the CUDA graphs, and what was still free when it
last said. One computation for the dashboard's GPU panel, `status` and `log summarize`. Pure."""

from __future__ import annotations

from collections.abc import Mapping

# The parts of a server's memory, in the order every screen shows them.
PARTS = ("weights", "kv", "mamba", "graphs")
_MAMBA = ("mamba_conv_gb", "mamba_ssm_gb", "mamba_intermediate_ssm_gb", "mamba_intermediate_conv_gb")


def parts_gb(
    numbers: Mapping[str, float], weights_gb: float | None, draft_weights_gb: float | None = None
) -> dict[str, float]:
    """The parts the log sized, in GB (SGLang's GB are GiB); a part the log did not size is absent."""
    parts: dict[str, float] = {}
    weights = (weights_gb or 0.0) + (draft_weights_gb or 0.0)
    if weights:
        parts["weights"] = weights
    kv = numbers.get("kv_gb") or numbers.get("k_gb", 0.0) + numbers.get("v_gb", 0.0)  # MLA: one KV size
    if kv:
        parts["kv"] = kv
    mamba = sum(numbers.get(k, 0.0) for k in _MAMBA)
    if mamba:
        parts["mamba"] = mamba
    graphs = numbers.get("graph_mem_gb")
    if graphs:
        parts["graphs"] = graphs
    return parts


def log_split_gb(
    numbers: Mapping[str, float], weights_gb: float | None, draft_weights_gb: float | None = None
) -> dict[str, float]:
    """The parts, and ``free``: the memory the rank last said was available (its latest `avail mem`)."""
    split = {name: round(value, 2) for name, value in parts_gb(numbers, weights_gb, draft_weights_gb).items()}
    free = numbers.get("avail_gb")
    if free is not None:
        split["free"] = round(free, 2)
    return split
