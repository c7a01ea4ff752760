"""The stand-in ``nvidia-smi`` on the simulated host's PATH: the real tool's CSV, errors and table."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from gdnconsole.host.simhome import SIM_DIR
from tests.simmodules import import_sim

if TYPE_CHECKING:
    from tests.conftest import SimHost, SimHostFactory

BASELINE = 4
NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n"
)


gpustate = import_sim("gdnsim.gpustate")


def smi(host: SimHost, *args: str, shebang: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``nvidia-smi ARGS`` as found on the host's PATH (through this interpreter, which starts faster
    than ``env python3`` behind a pyenv shim, unless ``shebang``)."""
    exe = shutil.which("nvidia-smi", path=host.env["PATH"])
    assert exe == str(SIM_DIR / "bin" / "nvidia-smi")
    cmd = [exe] if shebang else [sys.executable, exe]
    return subprocess.run([*cmd, *args], env=host.env, capture_output=True, text=True, timeout=30)


def ok(host: SimHost, *args: str) -> str:
    proc = smi(host, *args)
    assert (proc.returncode, proc.stderr) == (0, "")
    return proc.stdout


@pytest.fixture
def host(sim_host: SimHostFactory) -> SimHost:
    """The reference host (2x RTX A6000); this test process holds 25000 MiB at 42 % on GPU 1."""
    host = sim_host()
    gpustate.Ledger.at(host.home).report(1, 25000, 42)
    return host


def uuids(host: SimHost) -> list[str]:
    state = gpustate.Ledger.at(host.home)
    return [state.uuid(0), state.uuid(1)]


def test_the_full_gpu_query(host: SimHost) -> None:
    u0, u1 = uuids(host)
    fields = "index,uuid,name,memory.total,memory.used,memory.free,utilization.gpu,compute_cap"
    assert ok(host, f"--query-gpu={fields}", "--format=csv") == (
        "index, uuid, name, memory.total [MiB], memory.used [MiB], memory.free [MiB], "
        "utilization.gpu [%], compute_cap\n"
        f"0, {u0}, NVIDIA RTX A6000, 49140 MiB, 4 MiB, 49136 MiB, 0 %, 8.6\n"
        f"1, {u1}, NVIDIA RTX A6000, 49140 MiB, 25004 MiB, 24136 MiB, 42 %, 8.6\n"
    )


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("csv", "memory.used [MiB], index\n4 MiB, 0\n25004 MiB, 1\n"),
        ("csv,nounits", "memory.used [MiB], index\n4, 0\n25004, 1\n"),
        ("csv,noheader", "4 MiB, 0\n25004 MiB, 1\n"),
        ("csv,noheader,nounits", "4, 0\n25004, 1\n"),
        ("nounits,csv,noheader", "4, 0\n25004, 1\n"),
    ],
)
def test_format_options(host: SimHost, fmt: str, expected: str) -> None:
    assert ok(host, "--query-gpu=memory.used,index", f"--format={fmt}") == expected


def test_option_values_may_follow_as_separate_arguments(host: SimHost) -> None:
    assert ok(host, "--query-gpu", "utilization.gpu,name", "--format", "csv,noheader") == (
        "0 %, NVIDIA RTX A6000\n42 %, NVIDIA RTX A6000\n"
    )


def test_aliases_print_the_canonical_header(host: SimHost) -> None:
    assert ok(host, "--query-gpu=gpu_name,gpu_bus_id,memory.free", "--format=csv,nounits") == (
        "name, pci.bus_id, memory.free [MiB]\n"
        "NVIDIA RTX A6000, 00000000:01:00.0, 49136\n"
        "NVIDIA RTX A6000, 00000000:02:00.0, 24136\n"
    )


def test_id_selects_gpus(host: SimHost) -> None:
    assert ok(host, "-i", "1", "--query-gpu=index,memory.used", "--format=csv,noheader") == "1, 25004 MiB\n"
    assert ok(host, "--id=0,1", "--query-gpu=index", "--format=csv,noheader") == "0\n1\n"
    proc = smi(host, "-i", "5", "--query-gpu=index", "--format=csv")
    assert (proc.returncode, proc.stdout) == (6, "No devices were found\n")


def test_compute_apps(host: SimHost) -> None:
    name = gpustate.proc_name(os.getpid())
    _, u1 = uuids(host)
    fields = "gpu_uuid,pid,process_name,used_memory"
    assert ok(host, f"--query-compute-apps={fields}", "--format=csv") == (
        f"gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n{u1}, {os.getpid()}, {name}, 25000 MiB\n"
    )
    assert ok(host, "--query-compute-apps=pid,used_gpu_memory", "--format=csv,noheader,nounits") == (
        f"{os.getpid()}, 25000\n"
    )


def test_no_compute_apps_prints_only_the_header(sim_host: SimHostFactory) -> None:
    host = sim_host()
    assert ok(host, "--query-compute-apps=pid,used_memory", "--format=csv") == (
        "pid, used_gpu_memory [MiB]\n"
    )
    assert ok(host, "--query-compute-apps=pid", "--format=csv,noheader") == ""


def test_list_gpus_running_the_script_as_a_command(host: SimHost) -> None:
    u0, u1 = uuids(host)
    proc = smi(host, "-L", shebang=True)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"GPU 0: NVIDIA RTX A6000 (UUID: {u0})\nGPU 1: NVIDIA RTX A6000 (UUID: {u1})\n"


def test_the_status_table(host: SimHost) -> None:
    lines = ok(host).splitlines()
    body = [line for line in lines[1:] if line]
    assert {len(line) for line in body} == {91}
    assert "Driver Version: 580.95.05" in lines[2] and "CUDA Version: 13.0" in lines[2]
    assert sum("NVIDIA RTX A6000" in line for line in lines) == 2
    assert any("25004MiB /  49140MiB" in line and "42%" in line for line in lines)
    [app] = [line for line in lines if f" {os.getpid()} " in line]
    assert app.startswith("|    1   N/A  N/A ") and app.endswith("25000MiB |")


def test_the_status_table_without_processes(sim_host: SimHostFactory) -> None:
    out = ok(sim_host(gpus=1, gpu_name="NVIDIA H200", gpu_mib=143771))
    assert "|  No running processes found" in out
    assert "4MiB / 143771MiB" in out


@pytest.mark.parametrize(
    "args",
    [
        ("--query-gpu=index,xyz", "--format=csv"),
        ("--query-compute-apps=pid,memory.used", "--format=csv"),
    ],
)
def test_an_unknown_field(host: SimHost, args: tuple[str, ...]) -> None:
    proc = smi(host, *args)
    bad = args[0].split(",")[-1]
    assert (proc.returncode, proc.stdout) == (2, f'Field "{bad}" is not a valid field to query.\n\n')


@pytest.mark.parametrize(
    "args",
    [
        ("--query-gpu=index",),  # no --format
        ("--query-gpu=index", "--format=json"),
        ("--query-gpu=index", "--format=csv,fancy"),
        ("--bogus",),
        ("--query-gpu",),
        ("--query-gpu=", "--format=csv"),
        ("--query-gpu=index", "--query-compute-apps=pid", "--format=csv"),
    ],
)
def test_invalid_arguments_exit_2(host: SimHost, args: tuple[str, ...]) -> None:
    proc = smi(host, *args)
    assert proc.returncode == 2
    assert "nvidia-smi -h" in proc.stdout


@pytest.mark.parametrize("simulate", [{"nvidia_smi": False}, {"nvml": "no-driver"}])
def test_without_a_driver(sim_host: SimHostFactory, simulate: dict[str, object]) -> None:
    host = sim_host(**simulate)
    for args in [(), ("--query-gpu=index", "--format=csv"), ("-L",)]:
        proc = smi(host, *args)
        assert (proc.returncode, proc.stdout) == (9, NO_DRIVER)


def test_without_the_python_binding_the_tool_still_answers(sim_host: SimHostFactory) -> None:
    """``nvml: "absent"`` is a host without nvidia-ml-py: the driver, and so nvidia-smi, are there."""
    host = sim_host(nvml="absent")
    assert ok(host, "--query-gpu=index", "--format=csv,noheader") == "0\n1\n"
