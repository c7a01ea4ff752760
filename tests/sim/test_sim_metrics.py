"""The simulated server's ``/metrics`` and ``/v1/loads``, per version, against SGLang's own definitions:
the metrics inventory (``shared/sglang/metrics-inventory.tsv``: names, types, labels) and, where the
unpacked wheels are at hand, an ast reading of their ``metrics_collector.py`` (help strings, buckets)."""

from __future__ import annotations

import ast
import fnmatch
import re
import threading
from pathlib import Path

import httpx
import pytest
from test_server_harness import CT129, Server, Servers, servers_fixture, wait_until

from tests.conftest import SHARED
from tests.needs import require_path
from tests.wheels import wheel_source

INVENTORY = SHARED / "sglang" / "metrics-inventory.tsv"
VERSIONS = ("0.5.11", "0.5.23")
FAST = {"tokens_per_s": 500.0}
DENSE = ["--model-path", "Qwen/Qwen3-8B"]
SCHED_LABELS = {"model_name", "engine_type", "tp_rank", "pp_rank", "moe_ep_rank"}
TOKENIZER_LABELS = {"model_name", "engine_type"}
README = Path(__file__).resolve().parents[2] / "gdnconsole" / "sim" / "README.md"
# the collectors a plain server has (scheduler and tokenizer manager; the radix cache's only after an eviction)
SERVED_CLASSES = ("SchedulerMetricsCollector", "TokenizerMetricsCollector")
SAMPLE = re.compile(r"^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$")


@pytest.fixture
def servers(sim_host, tmp_path):
    yield from servers_fixture(sim_host, tmp_path)


def start(servers: Servers, version: str, *extra: str, gpus: int = 2) -> Server:
    server = servers.start(*DENSE, *extra, sim={**FAST, "sglang": version, "gpus": gpus})
    server.wait_ready()
    return server


def scrape(server: Server) -> dict[str, dict[str, object]]:
    """Families by name: type, help and samples (name, labels, value)."""
    with server.client() as client:
        response = client.get("/metrics")
    assert response.status_code == 200
    families: dict[str, dict[str, object]] = {}
    for line in response.text.splitlines():
        if line.startswith("# HELP "):
            name, _, doc = line[7:].partition(" ")
            families.setdefault(name, {"samples": []})["help"] = doc
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            families[name]["type"] = kind
        else:
            match = SAMPLE.match(line)
            assert match, line
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match[2] or ""))
            samples = list(families.values())[-1]["samples"]
            assert isinstance(samples, list)
            samples.append((match[1], labels, float(match[3])))
    return families


def inventory(version: str) -> dict[str, tuple[str, set[str]]]:
    """name -> (type, labels) from the inventory (``base`` being the collector's labels)."""
    require_path(INVENTORY, "the SGLang metrics inventory")
    found = {}
    for row in INVENTORY.read_text().splitlines()[1:]:
        name, kind, emitter, labels, _buckets, loc511, loc523 = row.split("\t")
        if not (loc511 if version == "0.5.11" else loc523).strip():
            continue
        base = SCHED_LABELS if emitter.startswith("Scheduler") else TOKENIZER_LABELS
        extra = set(labels.split("+")[1:]) if labels.startswith("base") else set()
        found[name] = (kind.lower(), base | extra)
    return found


def bucket_values(node: ast.expr) -> tuple[float, ...] | None:
    """A literal, or SGLang's ``exponential_buckets(start, width, length)`` (0.5.11
    observability/utils.py:52-56); None for buckets from server args."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "exponential_buckets":
        kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
        return tuple(kw["start"] * kw["width"] ** i for i in range(kw["length"]))
    try:
        return tuple(float(b) for b in ast.literal_eval(node))
    except ValueError:
        return None


def wheel_definitions(version: str) -> dict[str, tuple[str, tuple[float, ...] | None, set[str]]]:
    """name -> (help, buckets, labels beyond the collector's) read with ast from the wheel's
    metrics_collector.py (the inventory's label column is not per version)."""
    path = wheel_source(version, "observability/metrics_collector.py")
    tree = ast.parse(path.read_text())
    found: dict[str, tuple[str, tuple[float, ...] | None, set[str]]] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        assigns = [
            n for n in ast.walk(fn) if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
        ]
        for call in ast.walk(fn):
            if not (
                isinstance(call, ast.Call)
                and getattr(call.func, "id", "") in ("Gauge", "Counter", "Histogram")
            ):
                continue
            kw = {k.arg: k.value for k in call.keywords}
            if "name" not in kw or not isinstance(kw["name"], ast.Constant):
                continue
            buckets = None
            if "buckets" in kw:
                node = kw["buckets"]
                if isinstance(node, ast.Name):  # the last literal assigned to it before the call
                    earlier = [a for a in assigns if a.targets[0].id == node.id and a.lineno < call.lineno]
                    node = earlier[-1].value if earlier else node
                buckets = bucket_values(node)
            names = ast.unparse(kw["labelnames"])
            extra = set(re.findall(r"['\"](\w+)['\"]", names))
            try:
                doc = ast.literal_eval(kw["documentation"])
            except ValueError:
                doc = None  # a help text built at run time (f-string): not checked
            found.setdefault(kw["name"].value, (doc, buckets, extra))
    return found


def wheel_family_names(version: str) -> set[str]:
    """Every family the scheduler's and tokenizer manager's collectors define, read with ast."""
    path = wheel_source(version, "observability/metrics_collector.py")
    names = set()
    for cls in ast.parse(path.read_text()).body:
        if isinstance(cls, ast.ClassDef) and cls.name in SERVED_CLASSES:
            for call in ast.walk(cls):
                if isinstance(call, ast.Call) and getattr(call.func, "id", "") in (
                    "Gauge",
                    "Counter",
                    "Histogram",
                ):
                    kw = {k.arg: k.value for k in call.keywords}
                    name = kw.get("name")
                    if isinstance(name, ast.Constant):
                        names.add(str(name.value))
    return names


def left_out() -> list[str]:
    """The family globs README.md's "Left out" list names."""
    text = README.read_text()
    section = text[text.index("### Left out") :]
    section = section[: section.index("\n#", 1)] if "\n#" in section[1:] else section
    return re.findall(r"`(sglang:[\w*]+)`", section)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_family_of_the_wheel_but_the_left_out(servers: Servers, version: str) -> None:
    server = start(servers, version, "--enable-metrics")
    with server.client() as client:
        assert client.get("/v1/loads").status_code == 200  # get_loads_duration_seconds' first child
    served = set(scrape(server))
    globs = left_out()
    assert globs, "README.md lists no left-out families"
    expected = {n for n in wheel_family_names(version) if not any(fnmatch.fnmatchcase(n, g) for g in globs)}
    expected.discard("sglang:num_aborted_requests_total")  # its first child waits for an abort
    assert served == expected, (sorted(expected - served), sorted(served - expected))


@pytest.mark.parametrize("version", VERSIONS)
def test_no_metrics_without_the_flag(servers: Servers, version: str):
    server = start(servers, version)
    with server.client() as client:
        assert client.get("/metrics").status_code == 404
        assert client.get("/v1/loads").status_code == 200


@pytest.mark.parametrize("version", VERSIONS)
def test_families_types_and_labels_are_the_wheels(servers: Servers, version: str):
    server = start(servers, version, "--enable-metrics")
    families = scrape(server)
    known = inventory(version)
    definitions = wheel_definitions(version)
    assert "sglang:num_running_reqs" in families  # the warm-up has logged a batch
    for name, family in families.items():
        kind, labels = known[name]
        assert family["type"] == kind, name
        doc, buckets, extra = definitions[name]
        labels = (labels - {"is_streaming"}) | extra
        assert doc is None or family["help"] == doc, name
        for sample_name, sample_labels, _value in family["samples"]:  # type: ignore[attr-defined]
            keys = set(sample_labels) - {"le", "pid"}
            assert keys == labels, (name, keys)
            if sample_name.endswith("_bucket"):
                assert buckets is not None
                bounds = [float(b) for b in buckets] + [float("inf")]
                assert float(sample_labels["le"]) in bounds
        if kind == "histogram":
            les = [s[1]["le"] for s in family["samples"] if s[0].endswith("_bucket")]  # type: ignore[attr-defined]
            assert len(les) % (len(buckets or ()) + 1) == 0
    # counters and histograms a finished request makes (the warm-up's)
    assert "sglang:time_to_first_token_seconds" in families
    assert "sglang:num_aborted_requests_total" not in families  # no child before the first abort


def test_is_streaming_on_0_5_23_only(servers: Servers):
    for version, expected in (("0.5.11", False), ("0.5.23", True)):
        families = scrape(start(servers, version, "--enable-metrics"))
        samples = families["sglang:time_to_first_token_seconds"]["samples"]
        assert all(("is_streaming" in s[1]) == expected for s in samples)  # type: ignore[attr-defined]


def test_pid_label_only_on_gauges_without_a_multiprocess_mode(servers: Servers):
    families = scrape(start(servers, "0.5.23", "--enable-metrics"))
    assert all("pid" in s[1] for s in families["sglang:num_retracted_reqs"]["samples"])  # type: ignore[attr-defined]
    assert not any("pid" in s[1] for s in families["sglang:num_running_reqs"]["samples"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", VERSIONS)
def test_v1_loads_shape(servers: Servers, version: str):
    server = start(servers, version)
    with server.client() as client:
        answer = client.get("/v1/loads").json()
    assert answer["version"] == version
    load = answer["loads"][0]
    if version == "0.5.23":
        assert {"accelerator", "num_accelerators"} <= set(answer) and "aggregate" not in answer
        assert load["dp_rank"] == 0 and "num_active_tokens" in load and "prealloc_ready" in load["queues"]
    else:
        assert answer["dp_rank_count"] == 1 and "aggregate" in answer
        assert "dp_rank" not in load and load["num_total_reqs"] == 0
    assert (
        load["max_total_num_tokens"] > 0 and load["memory"]["token_capacity"] == load["max_total_num_tokens"]
    )


def value(families: dict[str, dict[str, object]], sample: str) -> float:
    name = sample.removesuffix("_count")
    return sum(s[2] for s in families[name]["samples"] if s[0] == sample)  # type: ignore[attr-defined,misc]


def test_a_burst_moves_running_and_ttft(servers: Servers):
    server = servers.start(
        *CT129, "--enable-metrics", "--max-running-requests", "2", sim={"tokens_per_s": 20.0}
    )
    server.wait_ready()
    before = scrape(server)
    body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 40}
    threads = [
        threading.Thread(target=lambda: httpx.post(server.url("/v1/chat/completions"), json=body, timeout=60))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()

    def busy():
        return (
            (m := scrape(server))
            and value(m, "sglang:num_running_reqs") == 2
            and value(m, "sglang:num_queue_reqs") >= 1
        )

    wait_until(busy, what="two running requests and a queue")
    for thread in threads:
        thread.join(60)
    after = scrape(server)
    ttft = "sglang:time_to_first_token_seconds_count"
    assert value(after, ttft) >= value(before, ttft) + 4
    waited = "sglang:queue_time_seconds_count"
    assert value(after, waited) >= value(before, waited) + 4
    assert value(after, "sglang:num_queue_reqs") == 0


def test_a_restart_resets_counters(servers: Servers):
    first = start(servers, "0.5.11", "--enable-metrics")
    with first.client() as client:
        client.post(
            "/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}], "max_tokens": 5}
        )
    count = value(scrape(first), "sglang:num_requests_total")
    assert count >= 2  # the warm-up and ours
    first.proc.kill()
    first.proc.wait(10)
    second = start(servers, "0.5.11", "--enable-metrics")
    assert value(scrape(second), "sglang:num_requests_total") < count


DP_ATTENTION = [
    ("0.5.11", ("--tp", "2", "--dp", "2", "--enable-dp-attention")),
    ("0.5.23", ("--tp", "2", "--dp", "2", "--enable-dp-attention")),  # deprecated: attn_dp_size=2
    ("0.5.23", ("--tp", "2", "--attn-dp-size", "2")),
]


def dp_ranks_of(families: dict[str, dict[str, object]], name: str) -> list[tuple[str | None, str]]:
    """(dp_rank, tp_rank) of each series of ``name``, sorted."""
    samples = families[name]["samples"]
    return sorted((s[1].get("dp_rank"), s[1]["tp_rank"]) for s in samples)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("version", "flags"), DP_ATTENTION)
def test_dp_attention_splits_one_tp_group(servers: Servers, version: str, flags: tuple[str, ...]) -> None:
    """Attention DP shares the TP group's two GPUs: two DP ranks, each exported by its attention-TP
    rank 0 (tp 0 and tp 1), one /v1/loads entry and one internal state each."""
    server = start(servers, version, "--enable-metrics", *flags, gpus=2)
    families = scrape(server)
    assert dp_ranks_of(families, "sglang:num_running_reqs") == [("0", "0"), ("1", "1")]
    with server.client() as client:
        loads = client.get("/v1/loads").json()["loads"]
        info = client.get("/server_info").json()
    assert [load["dp_rank"] for load in loads] == [0, 1]
    assert len(info["internal_states"]) == 2
    assert ("launch_command" in info) == (version == "0.5.23")


def test_dp_replicas_take_a_tp_group_each(servers: Servers) -> None:
    """--dp 2 without attention DP: two TP groups on four GPUs, tp 0 of each exporting with its
    replica's dp_rank."""
    server = start(servers, "0.5.23", "--enable-metrics", "--tp", "2", "--dp", "2", gpus=4)
    assert dp_ranks_of(scrape(server), "sglang:num_running_reqs") == [("0", "0"), ("1", "0")]


def test_dp_replicas_need_their_own_gpus(servers: Servers) -> None:
    """Four ranks on two GPUs: the second replica's first rank has no device, as in SGLang."""
    server = servers.start(*DENSE, "--tp", "2", "--dp", "2", sim={**FAST, "sglang": "0.5.23", "gpus": 2})
    server.wait_for("invalid device ordinal", 60)


@pytest.mark.parametrize("version", VERSIONS)
def test_server_info_keys_per_version(servers: Servers, version: str):
    server = start(servers, version)
    with server.client() as client:
        info = client.get("/server_info").json()
    assert info["version"] == version
    assert ("frontend" in info) == (version == "0.5.23")
    assert info["internal_states"][0]["memory_usage"]["token_capacity"] == info["max_total_num_tokens"]


def test_pool_gauges_come_from_the_rank(servers: Servers) -> None:
    """A hybrid GDN model: max_total_num_tokens as /server_info says, mamba slots as the rank sized them."""
    server = servers.start(*CT129, "--enable-metrics", sim=FAST)
    server.wait_ready()
    families = scrape(server)
    with server.client() as client:
        info = client.get("/server_info").json()
    assert value(families, "sglang:max_total_num_tokens") == info["max_total_num_tokens"]
    if "sglang:mamba_available_tokens" in families:  # 0.5.23's
        assert value(families, "sglang:mamba_available_tokens") > 0
    assert 0 <= value(families, "sglang:mamba_usage") <= 1
    assert value(families, "sglang:num_used_tokens") >= 0
    assert value(families, "sglang:context_len") > 0


def test_time_per_output_token_on_0_5_23(servers: Servers) -> None:
    families = scrape(start(servers, "0.5.23", "--enable-metrics"))
    assert value(families, "sglang:request_time_per_output_token_seconds_count") >= 1  # the warm-up's
    assert value(families, "sglang:max_total_num_tokens") > 0
    # one child per phase the wheel names (0.5.23 model_executor/graph_memory_usage.py:5-12,
    # metrics_collector.py:2074-2090)
    graph = {s[1]["phase"] for s in families["sglang:graph_memory_usage_gb"]["samples"]}  # type: ignore[attr-defined]
    assert graph == {"prefill", "decode", "target_verify", "draft_prefill", "draft_decode", "draft_extend"}
    startup = {s[1]["phase"] for s in families["sglang:startup_time_seconds"]["samples"]}  # type: ignore[attr-defined]
    assert startup == {"load_weight", "kv_cache_allocation", "scheduler_e2e", "tokenizer_e2e"}
    assert value(families, "sglang:startup_time_seconds") > 0


def test_launch_command_is_the_argv_on_0_5_23(servers: Servers) -> None:
    server = start(servers, "0.5.23", "--enable-metrics")
    with server.client() as client:
        info = client.get("/server_info").json()
    # the harness adds its --port after ours
    assert info["launch_command"].startswith(" ".join([*DENSE, "--enable-metrics", "--port"]))


def written_keys(version: str) -> set[str]:
    """The keys SGLang's get_internal_state writes beyond the server args, read with ast: 0.5.11's
    ``ret[...]`` in Scheduler.get_internal_state, 0.5.23's ``state[...]`` in its contributors. The
    sections a feature adds (elastic EP, the Rust server, step times, exported env vars, DSpark) are left
    out: the sim runs none of them."""
    if version == "0.5.11":
        source, target, skip = wheel_source(version, "managers/scheduler.py"), "ret", {"step_time_dict"}
    else:
        source, target = wheel_source(version, "managers/scheduler_components/internal_state.py"), "state"
        skip = {
            "step_time_dict",
            "env_vars",
            "rust_mm_transport",
            "rust_server_startup_time",
            "dspark_info_record",
        }
        skip |= {"is_scaling_elastic_ep", "effective_ep_size", "pending_ep_size", "scale_phase"}
        skip |= {"elastic_ep_last_error"}
    tree = ast.parse(source.read_text())
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    if version == "0.5.11":
        functions = [f for f in functions if f.name == "get_internal_state"]
    keys = set()
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if (
                        isinstance(t, ast.Subscript)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == target
                        and isinstance(t.slice, ast.Constant)
                    ):
                        keys.add(str(t.slice.value))
    return keys - skip


@pytest.mark.parametrize("version", VERSIONS)
def test_internal_states_hold_what_the_wheel_writes(servers: Servers, version: str) -> None:
    """Beyond the server args, an internal state holds exactly the wheel's own keys (the accept length
    only once speculative decoding has verified; the sim's DENSE model runs none)."""
    server = start(servers, version)
    with server.client() as client:
        info = client.get("/server_info").json()
    [state] = info["internal_states"]
    wheel = written_keys(version)
    assert wheel - {"avg_spec_accept_length"} <= set(state)
    assert set(state) - set(info) <= wheel  # the rest are the server args, as /server_info's top level
    assert state["effective_max_running_requests_per_dp"] > 0
