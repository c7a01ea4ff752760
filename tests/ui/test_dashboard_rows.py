"""The dashboard's pure parts: GPU rows from agent messages, the bar's cells, durations, and the mamba
numbers the memory split needs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gdnconsole.host.ranks import RankPlacement
from gdnconsole.host.state import Rank, Server, parse_gpus
from gdnconsole.sglang.tracker import StageTracker
from gdnconsole.timefmt import duration, span
from gdnconsole.ui.models.gpurows import allocate_cells, gpu_rows, short_gpu_name
from tests.ui.dashboard_helpers import gpu, mamba_line, server


def test_rows_split_the_server_and_flag_the_rest() -> None:
    tracker = StageTracker()
    tracker.feed(
        "[2026-11-30 09:00:40 TP0] Load weight end. elapsed=37.12 s, avail mem=20.87 GB, mem usage=25.64 GB."
    )
    tracker.feed(
        "[2026-11-30 09:00:41 TP0] KV Cache is allocated. #tokens: 84512, K size: 1.29 GB, V size: 1.29 GB"
    )
    gpus = parse_gpus([gpu(0, 40000, 50, [(4250, 30000, "sglang::scheduler_TP0"), (999, 8000, "/usr/bin/python3")]),
                       gpu(1, 500, 0, [])])  # fmt: skip
    placements = [RankPlacement("TP0", 4250, 0, "nvml"), RankPlacement("TP1", 4251, None, "flags")]
    rows = gpu_rows(gpus, Server.parse(server(4242, 0.0)), [], placements, tracker.current)
    first, second = rows
    assert (first.rank, second.rank) == ("TP0", None)
    assert [h.pid for h in first.holders] == [999] and first.holders[0].name == "python3"
    assert first.held_by_others == 8000
    # The server's 32000 MiB: weights and KV from the log, the rest other.
    assert first.parts == {"weights": 26255, "kv": 2642, "other": 32000 - 26255 - 2642}
    assert second.parts == {"other": 500} and second.free == 49140 - 500


def test_orphan_ranks_are_named() -> None:
    orphan = Rank(5120, rank="TP1", title="sglang::scheduler_TP1")
    [row] = gpu_rows(parse_gpus([gpu(0, 31000, 0, [(5120, 31000, "x")])]), None, [orphan], [], None)
    assert row.holders[0].orphan == "sglang::scheduler_TP1" and row.parts == {}


def test_no_gpus_no_rows() -> None:
    assert gpu_rows([], None, [], [], None) == []


@given(st.lists(st.integers(min_value=0, max_value=100_000), min_size=1, max_size=8), st.integers(8, 200))
def test_cells_fill_the_bar_and_keep_small_parts(values: list[int], width: int) -> None:
    cells = allocate_cells(values, width)
    assert sum(cells) == (width if sum(values) else 0)
    if sum(1 for v in values if v) <= width // 2:
        assert all(c > 0 for v, c in zip(values, cells, strict=True) if v)


def test_names_and_durations() -> None:
    assert short_gpu_name("NVIDIA RTX A6000") == "RTX A6000"
    assert short_gpu_name("NVIDIA GeForce RTX 4090") == "RTX 4090"
    assert [duration(s) for s in (5, 754, 7500, 300000)] == ["5s", "12m34s", "2h05m", "3d11h"]


def test_mamba_numbers_run_on_without_commas() -> None:
    """SGLang prints `…8.72GB intermediate_ssm_state_cache size: 4.36GB` with no comma between them."""
    [event] = StageTracker().feed(mamba_line(41, "TP0"))
    assert event.numbers["mamba_intermediate_ssm_gb"] == 4.36
    assert event.numbers["mamba_intermediate_conv_gb"] == 0.14


def test_memory_too_small_to_be_said_gets_no_cell() -> None:
    """`0.0/48.0 GiB` drew one filled cell: 4 MiB took a cell of the 40 that 48 GiB has."""
    from gdnconsole.ui.widgets.gpupanel import SAID_MIB, bar, gib

    [row] = gpu_rows(parse_gpus([gpu(1, 4, 0, [])]), None, [], [], None)
    assert f"{gib(row.used)}/{gib(row.total)}" == "0.0/48.0"
    styles = dict.fromkeys(("weights", "kv", "mamba", "graphs", "other", "held", "free"), None)
    drawn = bar(row, 40, styles).plain  # type: ignore[arg-type]
    assert drawn == "░" * 40
    assert gib(SAID_MIB) == "0.1" and allocate_cells([SAID_MIB, 49_000], 40, least=SAID_MIB)[0] == 1


def test_time_spans_are_said_one_way() -> None:
    """`0.41 s`, `406 ms` and `2.0s` on one screen: now milliseconds under a second, seconds with one
    decimal and a space, then minutes."""
    assert [span(s) for s in (0.406, 0.0, 2.0, 37.12, 99.94, 754)] == [
        "406 ms", "0 ms", "2.0 s", "37.1 s", "99.9 s", "12m34s",
    ]  # fmt: skip
