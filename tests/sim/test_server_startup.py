"""Startup of the simulated server: the log in SGLang's format and order, ranks, titles, GPU memory."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from test_server_harness import CT129, Server, Servers, alive, cmdline, servers_fixture, wait_until

from tests.simmodules import import_sim

Ledger = import_sim("gdnsim.gpustate").Ledger

TS = r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"


@pytest.fixture
def servers(sim_host, tmp_path):
    yield from servers_fixture(sim_host, tmp_path)


def indexes(lines: list[str], *needles: str) -> list[int]:
    """Index of the first line containing each needle (all must be there)."""
    found = []
    for needle in needles:
        hits = [i for i, line in enumerate(lines) if needle in line]
        assert hits, f"missing {needle!r}"
        found.append(hits[0])
    return found


def test_ct129_profile_startup(servers: Servers):
    server = servers.start(*CT129)
    server.wait_ready()
    lines = server.lines()
    text = server.text()
    stages = indexes(
        lines,
        "server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B'",
        "TP0] Init torch distributed begin.",
        "TP0] Load weight begin.",
        "type=Qwen3_5ForConditionalGeneration",
        "TP0] Using KV cache dtype: torch.bfloat16",
        "TP0] Mamba Cache is allocated.",
        "TP0] KV Cache is allocated. #tokens: ",
        "TP0] Memory pool end.",
        "TP0] Linear attention kernel backend: decode=triton, prefill=triton",
        "TP0] GDN kernel dispatcher: decode=TritonGDNKernel, extend=TritonGDNKernel, verify=TritonGDNKernel packed_decode=True",
        "TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=",
        "TP0] Capture cuda graph bs [1, 2, 4",
        "TP0] Capture cuda graph end. Time elapsed: ",
        "TP0] Capture draft cuda graph begin.",
        "TP0] max_total_num_tokens=",
        "INFO:     Started server process [",
        "INFO:     Waiting for application startup.",
        "INFO:     Application startup complete.",
        f"INFO:     Uvicorn running on http://127.0.0.1:{server.port} (Press CTRL+C to quit)",
        '"GET /model_info HTTP/1.1" 200 OK',
        "TP0] Prefill batch, #new-seq: 1, ",
        '"POST /generate HTTP/1.1" 200 OK',
        "The server is fired up and ready to roll!",
    )
    assert stages == sorted(stages)
    for rank in ("TP0", "TP1"):
        assert (
            len(
                re.findall(
                    rf"{rank}\] Load weight end\. elapsed=[\d.]+ s, type=\w+, avail mem=[\d.]+ GB, mem usage=25\.64 GB\.",
                    text,
                )
            )
            == 1
        )
        assert f"{rank}] Using hybrid linear attention backend for hybrid GDN models." in text
        pool_end = re.search(rf"{rank}\] Memory pool end\. avail mem=([\d.]+) GB", text)
        assert pool_end and abs(float(pool_end.group(1)) - 16.44) <= 0.05
        assert re.search(rf"{rank}\] Load weight end\. .*type=Qwen3_5ForCausalLMMTP", text)  # the NEXTN draft
        mamba = re.search(
            rf"{rank}\] Mamba Cache is allocated\. max_mamba_cache_size: \d+, conv_state size: [\d.]+GB, ssm_state size: [\d.]+GB intermediate_ssm_state_cache size: [\d.]+GB intermediate_conv_window_cache size: [\d.]+GB $",
            text,
            re.M,
        )
        assert mamba
    assert "TP1] GDN kernel dispatcher" not in text and "TP1] Using KV cache dtype" not in text  # rank 0 only
    assert re.search(
        r"^Loading safetensors checkpoint shards: 100% Completed \| 11/11 \[", text.replace("\r", "\n"), re.M
    )
    assert re.search(r"Capturing batches \(bs=\d+ avail_mem=[\d.]+ GB\): 100%\|██████████\|", text)
    assert re.search(
        rf"^{TS}\] INFO:     127\.0\.0\.1:\d+ - \"POST /generate HTTP/1\.1\" 200 OK$", text, re.M
    )
    for line in lines:  # every logged line has the timestamp form, unprefixed lines are the main process
        if line.startswith("[2"):
            assert re.match(rf"{TS}( TP[01])?\] ", line), line


def test_processes_titles_and_gpu_memory(servers: Servers):
    server = servers.start(*CT129)
    server.wait_ready()
    titles = {cmdline(pid)[0]: pid for pid in server.descendants()}
    assert {"sglang::scheduler_TP0", "sglang::scheduler_TP1", "sglang::detokenizer"} <= set(titles)
    assert cmdline(titles["sglang::scheduler_TP0"])[1:3] == ["-m", "gdnsim.server.rank"]
    assert Path(f"/proc/{titles['sglang::scheduler_TP1']}/comm").read_text().strip() == "sglang::schedul"
    assert not cmdline(server.proc.pid)[0].startswith("sglang::")  # the main process is not renamed
    holders = Ledger.at(server.home).holders()
    by_gpu = {h.gpu: h for h in holders}
    assert (
        by_gpu[0].pid == titles["sglang::scheduler_TP0"] and by_gpu[1].pid == titles["sglang::scheduler_TP1"]
    )
    text = server.text()
    avail = float(re.search(r"TP0\] max_total_num_tokens=.*available_gpu_mem=([\d.]+) GB", text).group(1))
    assert (
        abs((49140 - 4 - by_gpu[0].used_mib) / 1024 - avail) < 0.02
    )  # what the rank holds is what NVML sees


def test_single_rank_has_no_prefix(servers: Servers):
    server = servers.start("--model-path", "Qwen/Qwen3-8B", "--decode-log-interval", "1")
    server.wait_ready()
    text = server.text()
    assert re.search(rf"^{TS}\] Load weight end\. elapsed=[\d.]+ s, type=Qwen3ForCausalLM, ", text, re.M)
    assert "TP0]" not in text and "Mamba Cache" not in text
    assert "sglang::scheduler" in [cmdline(pid)[0] for pid in server.descendants()]


def test_data_parallel_prefixes_and_titles(servers: Servers):
    server = servers.start("--model-path", "Qwen/Qwen3-8B", "--dp-size", "2")
    server.wait_ready()
    text = server.text()
    assert " DP0] Load weight begin." in text and " DP1] Load weight begin." in text
    titles = {cmdline(pid)[0] for pid in server.descendants()}
    assert {"sglang::scheduler_DP0", "sglang::scheduler_DP1", "sglang::data_parallel_controller"} <= titles


def test_0_5_23_dialect(servers: Servers):
    args = [a for a in CT129 if a not in ("--mamba-scheduler-strategy", "extra_buffer")]
    server = servers.start(*args, sim={"sglang": "0.5.23"}, env={"SGLANG_LOG_MS": "1"})
    server.wait_ready()
    text = server.text()
    assert "] server_args={'model_path': 'Qwen/Qwen3.6-27B'" in text
    assert re.search(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} TP0\] Init parallel begin\.", text)
    assert "TP1] KV Cache is allocated. dtype: torch.bfloat16, #tokens: " in text
    assert (
        "TP0] Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=2, avail mem=" in text
    )
    assert "TP0] Linear attention kernel backend: decode=triton, prefill=triton, verify=triton" in text
    assert '"POST /freeze_gc HTTP/1.1" 200 OK' in text
    assert "Engine startup timings (s): load_weight=" in text


def test_missing_ffmpeg_warning_is_not_fatal(servers: Servers):
    server = servers.start("--model-path", "Qwen/Qwen3-8B", sim={"ffmpeg": False})
    server.wait_ready()
    text = server.text()
    start = text.index(
        "] Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: Could not load libtorchcodec. Likely causes:"
    )
    block = text[start : text.index("[end of libtorchcodec loading traceback].", start)]
    assert "libavutil.so.58: cannot open shared object file" in block
    assert "The above exception was the direct cause of the following exception:" in block


def test_leftover_process_shrinks_available_memory(servers: Servers, sim_host):
    leftover = subprocess.Popen(["sleep", "60"])
    try:
        server = servers.start("--model-path", "Qwen/Qwen3-8B", "--tp", "2", sim={})
        ledger = Ledger.at(server.home)
        ledger.write_record(leftover.pid, _start_time(leftover.pid), 0, 10240, 0, "python3")
        server.wait_ready()
        text = server.text()
        begin = {
            r: float(m) for r, m in re.findall(r"(TP\d)\] Load weight begin\. avail mem=([\d.]+) GB", text)
        }
        assert 9.9 <= begin["TP1"] - begin["TP0"] <= 10.1
    finally:
        leftover.kill()
        leftover.wait()


def test_not_enough_memory_for_pools(servers: Servers):
    leftover = subprocess.Popen(["sleep", "60"])
    try:
        server = servers.start("--model-path", "Qwen/Qwen3-8B")
        Ledger.at(server.home).write_record(leftover.pid, _start_time(leftover.pid), 0, 33000, 0, "python3")
        code = server.wait_exit()
        text = server.text()
        assert "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static." in text
        assert "] Received sigquit from a child process. It usually means the child failed." in text
        assert code == -9
    finally:
        leftover.kill()
        leftover.wait()


def test_cuda_visible_devices_maps_ranks(servers: Servers):
    server = servers.start("--model-path", "Qwen/Qwen3-8B", env={"CUDA_VISIBLE_DEVICES": "1"})
    server.wait_ready()
    assert {h.gpu for h in Ledger.at(server.home).holders()} == {1}


def test_sglang_serve_entry_point(servers: Servers):
    server = servers.start("--model-path", "Qwen/Qwen3-8B", "--bogus", entry="serve")
    assert server.wait_exit() == 2
    assert "usage: sglang serve" in server.text()
    assert "error: unrecognized arguments: --bogus" in server.text()
    wait_until(lambda: not alive(server.proc.pid), what="exit")


def _start_time(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[19])


__all__ = ["Server"]
