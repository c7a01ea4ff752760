"""/v1/loads and /server_info as typed values: each version's shape, and untrusted JSON refused field by
field."""

from __future__ import annotations

from gdnconsole.sglang.loads import MAX_RANKS, parse_loads, parse_server_info
from tests.sglang.servingdata import loads_0511, loads_0523, server_info


def test_0511_loads() -> None:
    loads = parse_loads(loads_0511())
    assert loads.version == "0.5.11" and loads.warnings == ()
    first = loads.ranks[0]
    assert (first.dp_rank, first.running, first.waiting, first.max_running) == (0, 5, 2, 48)
    assert (first.used_tokens, first.max_total_tokens, first.token_usage) == (5000, 20000, 0.25)
    assert (first.gen_throughput, first.cache_hit_rate) == (0.0, 0.0)  # as sent: the figures decide
    assert (first.accept_length, first.retracted) == (2.6, 0)


def test_0523_loads() -> None:
    loads = parse_loads(loads_0523())
    assert loads.version == "0.5.23" and loads.warnings == ()
    (rank,) = loads.ranks
    assert (rank.running, rank.waiting, rank.max_running, rank.accept_length) == (4, 1, 64, None)


def test_wrong_types_are_left_out_with_a_warning() -> None:
    body = loads_0523()
    load = body["loads"][0]
    load.update(
        num_running_reqs="4", num_waiting_reqs=True, token_usage=float("nan"), max_running_requests=-1
    )
    load["speculative"] = [1, 2]
    body["loads"].append("not an object")
    loads = parse_loads(body)
    (rank,) = loads.ranks
    assert (rank.running, rank.waiting, rank.token_usage, rank.max_running, rank.accept_length) == (
        None, None, None, None, None
    )  # fmt: skip
    assert rank.used_tokens == 900
    said = "\n".join(loads.warnings)
    for field in (
        "num_running_reqs",
        "num_waiting_reqs",
        "token_usage",
        "max_running_requests",
        "speculative",
    ):
        assert f"loads.loads[0].{field}: expected" in said
    assert "loads.loads[1]: expected an object" in said


def test_not_an_object_at_all() -> None:
    for body in (None, [], "x", 3):
        loads = parse_loads(body)
        assert loads.ranks == () and loads.version is None and len(loads.warnings) == 1
    assert parse_loads({"loads": "x"}).warnings == ("loads.loads: expected a list, got str; left out",)


def test_a_rank_without_dp_rank_takes_its_place() -> None:
    loads = parse_loads({"loads": [{"num_running_reqs": 1}, {"num_running_reqs": 2}]})
    assert [r.dp_rank for r in loads.ranks] == [0, 1]


def test_a_huge_list_is_cut() -> None:
    loads = parse_loads({"loads": [{}] * (MAX_RANKS + 5)})
    assert len(loads.ranks) == MAX_RANKS and "read the first" in loads.warnings[0]


def test_server_info() -> None:
    info = parse_server_info(server_info("0.5.11"))
    assert (info.version, info.max_running_requests, info.max_total_num_tokens) == ("0.5.11", None, 20000)
    assert info.speculative_algorithm == "NEXTN" and info.warnings == ()
    assert [s.max_running for s in info.internal_states] == [48, 48]
    assert [s.last_gen_throughput for s in info.internal_states] == [123.5, 124.5]
    assert info.internal_states[0].accept_length == 2.5


def test_server_info_wrong_types() -> None:
    info = parse_server_info({"version": 5, "internal_states": [{"last_gen_throughput": "fast"}]})
    assert info.version is None and info.internal_states[0].last_gen_throughput is None
    assert len(info.warnings) == 2
