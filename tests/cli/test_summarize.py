"""`gdnconsole log summarize FILE [--json]` as a user runs it: one JSON object, clear errors, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gdnconsole.logs import scan as logscan
from tests.cli.test_config_cmds import GDNCONSOLE
from tests.sglang.test_tracker import CRASH_TAIL, CT129_STARTUP, READY_TAIL

KEYS = {
    "file",
    "lines",
    "sglang",
    "startups",
    "stage",
    "ready",
    "fatal",
    "warnings",
    "ranks",
    "spec",
    "gen_throughput",
    "durations",
    "kernels",
    "memory",
}


def summarize(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GDNCONSOLE, "log", "summarize", *args, str(path)], capture_output=True, text=True, timeout=60
    )


def test_json_is_exactly_one_object_with_the_documented_keys(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_text(CT129_STARTUP + CRASH_TAIL + CT129_STARTUP + READY_TAIL)
    result = summarize(log, "--json")
    assert result.returncode == 0 and result.stdout.count("\n") == 1
    data = json.loads(result.stdout)
    assert set(data) == KEYS
    assert data["startups"] == 2 and data["stage"] == "serving" and data["ready"] is True
    assert data["lines"] == (CT129_STARTUP + CRASH_TAIL + CT129_STARTUP + READY_TAIL).count("\n")
    assert data["ranks"]["TP0"]["weights_gb"] == 25.64 and data["spec"]["accept_len"] == 1.86


def test_fatal_line_numbers_are_one_based(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_text(CT129_STARTUP + CRASH_TAIL)
    data = json.loads(summarize(log, "--json").stdout)
    fatal = data["fatal"]
    lines = log.read_text().split("\n")
    assert lines[fatal["line"] - 1].startswith("Exception: Capture cuda graph failed")
    assert fatal["rank"] == "TP1" and fatal["stage"] == "graphs" and data["ready"] is False


def test_human_output_names_the_fatal_error(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_text(CT129_STARTUP + CRASH_TAIL)
    result = summarize(log)
    assert result.returncode == 1  # the last startup ended in a fatal error
    assert "fatal line" in result.stdout and "Capture cuda graph failed" in result.stdout
    assert "TP0" in result.stdout and "25.64 GB" in result.stdout


def test_exit_status_says_fine_fatal_or_not_an_sglang_log(tmp_path: Path) -> None:
    fine = tmp_path / "fine.log"
    fine.write_text(CT129_STARTUP + READY_TAIL)
    crashed = tmp_path / "crashed.log"
    crashed.write_text(CT129_STARTUP + CRASH_TAIL)
    foreign = tmp_path / "passwd"
    foreign.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
    assert summarize(fine).returncode == 0
    assert summarize(crashed).returncode == 1
    result = summarize(foreign)
    assert result.returncode == 2 and "not an SGLang log" in result.stdout
    data = json.loads(summarize(foreign, "--json").stdout)
    assert data["sglang"] is False and summarize(foreign, "--json").returncode == 2
    # --json prints the failure in "fatal": the status says only that a summary was printed
    assert summarize(crashed, "--json").returncode == 0


def test_a_traceback_in_sglang_code_alone_is_an_sglang_log(tmp_path: Path) -> None:
    log = tmp_path / "excerpt.log"
    log.write_text(
        '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 267, '
        "in __init__\n    raise Exception(\n"
        "Exception: Capture cuda graph failed: RuntimeError: CUDA error: an illegal memory access\n"
    )
    result = summarize(log)
    assert result.returncode == 1 and "illegal memory access" in result.stdout


def test_invalid_utf8_is_replaced_not_a_crash(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(
        CT129_STARTUP.encode() + b"[2026-11-30 09:00:47 TP0] bad \xff\xfe bytes\n" + READY_TAIL.encode()
    )
    data = json.loads(summarize(log, "--json").stdout)
    assert data["stage"] == "serving"


def test_a_file_without_trailing_newline_counts_its_last_line(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_text(READY_TAIL.rstrip("\n"))
    data = json.loads(summarize(log, "--json").stdout)
    assert data["lines"] == READY_TAIL.count("\n") and data["gen_throughput"] == 61.2


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing.log", "no such file"),
        (lambda p: p, "is a directory"),
        (lambda p: (p / "bin.log").write_bytes(b"\x00\x01\x02ELF" * 100) and p / "bin.log", "binary"),
        (lambda p: os.mkfifo(p / "fifo.log") or p / "fifo.log", "not a regular file"),  # would block
    ],
)
def test_unreadable_inputs_exit_2_with_a_clear_message(tmp_path: Path, make, message: str) -> None:
    path = make(tmp_path)
    result = summarize(path, "--json")
    assert result.returncode == 2 and result.stdout == ""
    assert message in result.stderr and "Traceback" not in result.stderr


def test_the_fast_scan_sees_the_same_story_as_reading_every_line(tmp_path: Path) -> None:
    """Skipping runs of batch lines must not change the summary (the scan is exact, not sampled)."""
    serving = "".join(
        f"[2026-11-30 09:01:{i % 60:02d} TP0] Decode batch, #running-req: 1, #full token: {i}, full token usage: 0.01, "
        f"mamba num: 1, mamba usage: 0.01, accept len: 1.{i % 10}0, accept rate: 0.80, cuda graph: True, "
        f"gen throughput (token/s): {i}.00, #queue-req: 0\n"
        + (
            f'[2026-11-30 09:01:{i % 60:02d}] INFO:     127.0.0.1:5{i % 9999:04d} - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
            if i % 7 == 0
            else ""
        )
        for i in range(1, 8000)
    )
    text = (
        CT129_STARTUP
        + READY_TAIL
        + serving
        + "[2026-11-30 09:02:00] SIGTERM received. signum=None frame=None.\n"
        + serving
    )
    log = tmp_path / "serve.log"
    log.write_text(text)
    from gdnconsole.sglang.summary import summary, track

    fast = logscan.scan(log, parallel=False)
    fast_summary = summary(track(logscan.decoded(fast.records)), file="x", lines=fast.lines)
    slow_lines = text.split("\n")[:-1]
    slow_summary = summary(track(enumerate(slow_lines, 1)), file="x", lines=len(slow_lines))
    assert fast_summary == slow_summary
    assert len(fast.records) < len(slow_lines) // 10
    parallel = logscan.scan(log, parallel=True)
    assert parallel.lines == fast.lines
    assert summary(track(logscan.decoded(parallel.records)), file="x", lines=parallel.lines) == slow_summary


def test_a_log_that_begins_with_a_nul_hole_is_read_past_it(tmp_path: Path) -> None:
    """What copytruncate leaves when the server's stdout lacks O_APPEND: the writer goes on at its old
    offset, and the file begins with a hole of NUL bytes."""
    log = tmp_path / "serve.log"
    with log.open("wb") as fh:
        fh.seek(3 << 20)
        fh.write(CRASH_TAIL.encode())
    data = json.loads(summarize(log, "--json").stdout)
    assert data["fatal"] is not None and "\x00" not in json.dumps(data)


def test_log_view_refuses_a_fifo_at_once_instead_of_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "serve.log"
    os.mkfifo(fifo)
    result = subprocess.run(
        [GDNCONSOLE, "log", "view", str(fifo)], capture_output=True, text=True, timeout=60
    )
    assert (
        result.returncode == 2 and "not a regular file" in result.stderr and "Traceback" not in result.stderr
    )


def test_piped_output_is_not_wrapped(tmp_path: Path) -> None:
    """In a pipe (a script, `| grep`), a fatal line and a long path stay on one line each."""
    deep = tmp_path / ("a-folder-with-a-long-name-" * 4)
    deep.mkdir()
    log = deep / "serve.log"
    log.write_text(CRASH_TAIL)
    out = summarize(log).stdout
    assert out.splitlines()[0].startswith(str(log))
    assert any(len(line) > 80 and "fatal" in line for line in out.splitlines())


GDN_STARTUP = """\
[2026-11-30 09:00:00] Attention backend not specified. Use flashinfer backend by default.
[2026-11-30 09:00:05 TP0] Load weight end. elapsed=95.10 s, type=Qwen3_5ForConditionalGeneration, avail mem=20.10 GB, mem usage=25.64 GB.
[2026-11-30 09:00:06 TP0] Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB, ssm_state size: 7.29GB
[2026-11-30 09:00:06 TP0] KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB
[2026-11-30 09:00:06 TP0] Linear attention kernel backend: decode=triton, prefill=triton
[2026-11-30 09:00:06 TP0] GDN kernel dispatcher: decode=TritonGDNKernel, extend=TritonGDNKernel, verify=TritonGDNKernel packed_decode=True
[2026-11-30 09:00:06 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=3.20 GB
[2026-11-30 09:00:09 TP0] Scheduler hit an exception: Traceback (most recent call last):
Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has a total capacity of 47.54 GiB
"""


def test_human_output_names_the_kernels_the_memory_split_and_the_known_fix(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_text(GDN_STARTUP)
    out = summarize(log).stdout
    assert (
        "kernels: attention backend flashinfer   linear attention kernels decode=triton, prefill=triton"
        in out
    )
    assert "GDN kernel dispatcher decode=TritonGDNKernel, extend=TritonGDNKernel" in out
    header = next(line for line in out.splitlines() if line.startswith("rank"))
    assert header.split() == ["rank", "stage", "weights", "KV", "mamba", "graphs", "free", "KV", "tokens"]
    row = next(line for line in out.splitlines() if line.startswith("TP0"))
    assert row.split() == [
        "TP0",
        "graphs",
        "25.64",
        "GB",
        "8.30",
        "GB",
        "7.42",
        "GB",
        "–",
        "3.20",
        "GB",
        "580,364",
    ]
    assert "hint: capturing CUDA graphs ran out of GPU memory" in out and "--cuda-graph-max-bs" in out
    data = json.loads(summarize(log, "--json").stdout)
    assert data["kernels"]["gdn_kernels"].startswith("decode=TritonGDNKernel")
    assert data["memory"]["TP0"] == {"weights": 25.64, "kv": 8.3, "mamba": 7.42, "free": 3.2}


def test_human_output_says_which_process_failed_and_counts_repeats(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    retract = "Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.0980 -> 0.9446"
    log.write_text(
        "".join(f"[2025-01-06 02:58:44 TP{r}] {retract}\n" for r in (0, 5, 7))
        + "[2025-01-06 02:58:45] Scheduler hit an exception: Traceback (most recent call last):\n"
        "ValueError: Failed to allocate token prealloc indices\n"
    )
    out = summarize(log).stdout
    assert "[scheduler, serving] ValueError: Failed to allocate" in out and "main" not in out
    assert f"warning line 1 (×3 on TP0, TP5, TP7) {retract}" in out


def test_human_output_of_a_collective_hang_blames_no_rank(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_text(
        "".join(
            f"[2025-03-09 00:57:15 TP{r}] Watchdog timeout (self.watchdog_timeout=300)\n" for r in range(4)
        )
    )
    out = summarize(log).stdout
    assert "[all 4 ranks, serving] Watchdog timeout (self.watchdog_timeout=300) on all 4 ranks at once" in out
