"""The agent's messages as typed values (host/state.py): every field the real agent sends has a place,
and a damaged or foreign message never raises."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gdnconsole.host.state import (
    Gpu,
    GpuProcess,
    Hello,
    HostFacts,
    NvmlSource,
    Rank,
    Server,
    ServerExit,
    ServerRecord,
    parse_gpus,
    parse_servers,
)
from tests.conftest import SimHostFactory
from tests.host.test_agent import Agent, find_server, gpu, hold, spawn, start_agent, start_server
from tests.sshhosts import free_loopback_port as free_port

__all__ = ["spawn", "start_agent"]  # the fixtures, shared with the agent's tests


def names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def as_plain(value: Any) -> Any:
    """A parsed value back as the JSON the agent sent (tuples as lists, dataclasses as dicts)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: as_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [as_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: as_plain(v) for k, v in value.items()}
    return value


def test_the_hello_of_a_real_agent_parses_whole(
    sim_host: SimHostFactory, start_agent: Callable[..., Agent]
) -> None:
    message = start_agent(sim_host(sglang="0.5.23", gpus=2)).request("hello", op="hello")
    hello = Hello.parse(message)
    assert set(message) - {"type"} == names(Hello)
    assert set(message["gpus"][0]) <= names(Gpu)
    assert hello.sglang == "0.5.23" and hello.nvml == NvmlSource("pynvml", None)
    assert [g.compute_capability for g in hello.gpus] == ["8.6", "8.6"]
    sent = {k: v for k, v in message.items() if k not in ("type", "gpus", "nvml")}
    assert {k: v for k, v in as_plain(hello).items() if k in sent} == sent


def test_a_real_gpu_sample_parses_whole(
    sim_host: SimHostFactory,
    start_agent: Callable[..., Agent],
    spawn: Callable[..., subprocess.Popen[bytes]],
) -> None:
    host = sim_host(gpus=2)
    a = start_agent(host)
    a.send(op="sample", interval=0.05)
    holder = hold(spawn, host, "--gpu", "1", "--mib", "5000")
    message = a.next("gpus", lambda m: bool(gpu(m, 1)["processes"]))
    gpus = parse_gpus(message["gpus"])
    assert set(message["gpus"][1]) == names(Gpu)
    assert set(message["gpus"][1]["processes"][0]) == names(GpuProcess)
    assert as_plain(gpus) == message["gpus"]
    assert gpus[1].processes[0].pid == holder.pid


def test_a_real_process_scan_parses_whole(
    sim_host: SimHostFactory,
    start_agent: Callable[..., Agent],
    spawn: Callable[..., subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    host = sim_host()
    server = start_server(spawn, host, tmp_path, free_port())
    found = find_server(start_agent(host), server.pid, children=3)
    [parsed] = parse_servers([found])
    assert set(found) == names(Server) and set(found["children"][0]) == names(Rank)
    assert as_plain(parsed) == found
    assert sorted(r.rank or "" for r in parsed.children) == ["", "TP0", "TP1"]


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    )
)
def test_no_message_makes_a_parser_raise(raw: Any) -> None:
    Hello.parse(raw)
    parse_gpus(raw)
    parse_servers(raw)
    for cls in (GpuProcess, Rank, Server, ServerRecord, ServerExit):
        cls.parse(raw)  # type: ignore[attr-defined]
    for value in (raw, {"index": raw, "used_mib": raw, "processes": raw, "errors": raw}):
        Gpu.parse(value, 0)


def test_wrong_types_become_unknown_not_wrong() -> None:
    gpu = Gpu.parse(
        {"index": "1", "used_mib": True, "total_mib": 1.5, "processes": [{"pid": "7"}, {"pid": 8}]}, 3
    )
    assert (gpu.index, gpu.used_mib, gpu.total_mib) == (3, None, None)
    assert gpu.processes == (GpuProcess(8),)
    server = Server.parse({"pid": 5, "cmdline": "python -m x", "env": ["A"], "children": [{"title": "x"}]})
    assert server == Server(5)
    assert ServerRecord.parse({"pid": 9, "adopted": "yes"}) == ServerRecord(9)
    assert Hello.parse({"sglang": ""}).sglang is None


def test_host_facts_come_from_the_sample_else_the_hello() -> None:
    hello = Hello.parse(
        json.loads('{"sglang": "0.5.11", "gpus": [{"index": 0, "compute_capability": "8.6"}]}')
    )
    assert HostFacts.of(hello, ()) == HostFacts("0.5.11", "8.6", 1)
    sample = parse_gpus([{"index": 0}, {"index": 1, "compute_capability": "9.0"}])
    assert HostFacts.of(hello, sample) == HostFacts("0.5.11", "9.0", 2)
    assert HostFacts.of(None, ()) == HostFacts()
    assert HostFacts("0.5.11", "8.6", 2).describe() == "SGLang 0.5.11, SM 8.6, 2 GPUs"
