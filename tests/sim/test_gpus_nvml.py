"""The stand-in ``pynvml``, as a process on the simulated host imports it (``env=host.env``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

from gdnconsole.host.simhome import SIM_DIR
from tests.simmodules import import_sim

if TYPE_CHECKING:
    from tests.conftest import SimHost, SimHostFactory

MIB = 1024 * 1024
BASELINE = 4
UUID = re.compile(r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
REAL_PYNVML = os.path.join(sysconfig.get_paths()["purelib"], "pynvml.py")  # nvidia-ml-py


gpustate = import_sim("gdnsim.gpustate")


def on_host(host: SimHost, code: str) -> Any:
    """Run ``code`` in a Python process on the host; it prints one JSON value, which is returned."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=host.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


DESCRIBE = """
    import json, pynvml as n
    n.nvmlInit()
    gpus = []
    for i in range(n.nvmlDeviceGetCount()):
        h = n.nvmlDeviceGetHandleByIndex(i)
        mem, util = n.nvmlDeviceGetMemoryInfo(h), n.nvmlDeviceGetUtilizationRates(h)
        gpus.append({
            "index": n.nvmlDeviceGetIndex(h),
            "name": n.nvmlDeviceGetName(h),
            "uuid": n.nvmlDeviceGetUUID(h),
            "by_uuid": n.nvmlDeviceGetIndex(n.nvmlDeviceGetHandleByUUID(n.nvmlDeviceGetUUID(h))),
            "bus_id": n.nvmlDeviceGetPciInfo(h).busId,
            "cc": n.nvmlDeviceGetCudaComputeCapability(h),
            "mem": [mem.total, mem.used, mem.free],
            "util": [util.gpu, util.memory],
            "procs": [[p.pid, p.usedGpuMemory] for p in n.nvmlDeviceGetComputeRunningProcesses(h)],
            "procs_v2": [p.pid for p in n.nvmlDeviceGetComputeRunningProcesses_v2(h)],
            "procs_v3": [p.pid for p in n.nvmlDeviceGetComputeRunningProcesses_v3(h)],
            "graphics": n.nvmlDeviceGetGraphicsRunningProcesses(h),
            "temp": n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU),
            "power_mw": n.nvmlDeviceGetPowerUsage(h),
            "persistence": n.nvmlDeviceGetPersistenceMode(h),
        })
    print(json.dumps({
        "driver": n.nvmlSystemGetDriverVersion(),
        "cuda": n.nvmlSystemGetCudaDriverVersion(),
        "cuda_v2": n.nvmlSystemGetCudaDriverVersion_v2(),
        "gpus": gpus,
    }))
    n.nvmlShutdown()
"""


def test_answers_for_the_configured_gpus(sim_host: SimHostFactory) -> None:
    host = sim_host()  # the reference deployment: 2x RTX A6000
    state = gpustate.Ledger.at(host.home)
    state.report(1, 25000, 42)  # this test process holds memory on GPU 1

    got = on_host(host, DESCRIBE)

    assert (got["driver"], got["cuda"], got["cuda_v2"]) == ("580.95.05", 13000, 13000)
    g0, g1 = got["gpus"]
    assert [g0["index"], g1["index"]] == [0, 1]
    assert [g0["by_uuid"], g1["by_uuid"]] == [0, 1]
    assert g0["name"] == g1["name"] == "NVIDIA RTX A6000"
    assert g0["cc"] == g1["cc"] == [8, 6]
    assert UUID.match(g0["uuid"]) and UUID.match(g1["uuid"]) and g0["uuid"] != g1["uuid"]
    assert [g0["bus_id"], g1["bus_id"]] == ["00000000:01:00.0", "00000000:02:00.0"]
    total = 49140 * MIB
    assert g0["mem"] == [total, BASELINE * MIB, total - BASELINE * MIB]
    assert g1["mem"] == [total, (BASELINE + 25000) * MIB, total - (BASELINE + 25000) * MIB]
    assert g0["procs"] == []
    assert g1["procs"] == [[os.getpid(), 25000 * MIB]]
    assert g1["procs_v2"] == g1["procs_v3"] == [os.getpid()]
    assert g1["graphics"] == []
    assert [g0["util"][0], g1["util"][0]] == [0, 42]
    assert g1["temp"] > g0["temp"] and g1["power_mw"] > g0["power_mw"]
    assert g0["persistence"] == 1
    state.report(1, 0)


def test_other_gpus_and_a_stable_uuid(sim_host: SimHostFactory) -> None:
    host = sim_host(gpus=4, gpu_name="NVIDIA H200", gpu_mib=143771, compute_capability="9.0")
    first, again = on_host(host, DESCRIBE), on_host(host, DESCRIBE)
    assert [g["name"] for g in first["gpus"]] == ["NVIDIA H200"] * 4
    assert {tuple(g["cc"]) for g in first["gpus"]} == {(9, 0)}
    assert {g["mem"][0] for g in first["gpus"]} == {143771 * MIB}
    assert [g["uuid"] for g in first["gpus"]] == [g["uuid"] for g in again["gpus"]]
    assert len({g["uuid"] for g in first["gpus"]}) == 4
    other_host = on_host(sim_host(gpus=4), DESCRIBE)
    assert other_host["gpus"][0]["uuid"] != first["gpus"][0]["uuid"]


def test_return_types_are_the_real_modules(sim_host: SimHostFactory) -> None:
    got = on_host(
        sim_host(),
        """
        import json, pynvml as n
        n.nvmlInit()
        h = n.nvmlDeviceGetHandleByIndex(0)
        v2 = n.nvmlDeviceGetMemoryInfo(h, version=n.nvmlMemory_v2)
        print(json.dumps({
            "name": type(n.nvmlDeviceGetName(h)).__name__,
            "mem": type(n.nvmlDeviceGetMemoryInfo(h)).__name__,
            "mem_str": str(n.nvmlDeviceGetMemoryInfo(h)),
            "v2": [type(v2).__name__, v2.version, v2.total == v2.free + v2.used + v2.reserved],
            "util": str(n.nvmlDeviceGetUtilizationRates(h)),
            "cc": type(n.nvmlDeviceGetCudaComputeCapability(h)).__name__,
        }))
        """,
    )
    assert got["name"] == "str"
    assert got["mem"] == "c_nvmlMemory_t"
    assert got["mem_str"] == "c_nvmlMemory_t(total: 51527024640 B, free: 51522830336 B, used: 4194304 B)"
    assert got["v2"] == ["c_nvmlMemory_v2_t", 0x02000028, True]
    assert got["util"] == "c_nvmlUtilization_t(gpu: 0 %, memory: 0 %)"
    assert got["cc"] == "tuple"


def test_process_objects_have_the_real_fields(sim_host: SimHostFactory) -> None:
    host = sim_host()
    gpustate.Ledger.at(host.home).report(0, 1234)
    [proc] = on_host(
        host,
        """
        import json, pynvml as n
        n.nvmlInit()
        procs = n.nvmlDeviceGetComputeRunningProcesses(n.nvmlDeviceGetHandleByIndex(0))
        print(json.dumps([vars(p) for p in procs]))
        """,
    )
    assert proc == {
        "pid": os.getpid(),
        "usedGpuMemory": 1234 * MIB,
        "gpuInstanceId": 0xFFFFFFFF,  # what NVML gives on a GPU without MIG
        "computeInstanceId": 0xFFFFFFFF,
    }


def test_errors(sim_host: SimHostFactory) -> None:
    got = on_host(
        sim_host(),
        """
        import json, pynvml as n
        out = {}
        def attempt(key, fn, *args):
            try:
                fn(*args)
                out[key] = None
            except n.NVMLError as e:
                out[key] = [type(e).__name__, e.value, str(e)]
        attempt("before_init", n.nvmlDeviceGetCount)
        attempt("shutdown_before_init", n.nvmlShutdown)
        attempt("error_string_before_init", n.nvmlErrorString, 3)
        n.nvmlInit()
        attempt("bad_index", n.nvmlDeviceGetHandleByIndex, 2)
        attempt("negative_index", n.nvmlDeviceGetHandleByIndex, -1)
        attempt("bad_handle", n.nvmlDeviceGetName, object())
        attempt("unknown_uuid", n.nvmlDeviceGetHandleByUUID, "GPU-00000000-0000-0000-0000-000000000000")
        attempt("bad_sensor", n.nvmlDeviceGetTemperature, n.nvmlDeviceGetHandleByIndex(0), 7)
        h = n.nvmlDeviceGetHandleByIndex(1)
        out["error_string"] = n.nvmlErrorString(n.NVML_ERROR_GPU_IS_LOST)
        out["unknown_code"] = str(n.NVMLError(12345))
        n.nvmlInit()  # init nests: two shutdowns are needed
        n.nvmlShutdown()
        out["still_up"] = n.nvmlDeviceGetCount()
        n.nvmlShutdown()
        attempt("after_shutdown", n.nvmlDeviceGetName, h)
        e = n.NVMLError(n.NVML_ERROR_GPU_IS_LOST)
        out["mapping"] = [type(e).__name__, isinstance(e, n.NVMLError), e == n.NVMLError_GpuIsLost()]
        out["exception_class"] = n.nvmlExceptionClass(3).__name__
        print(json.dumps(out))
        """,
    )
    uninit = ["NVMLError_Uninitialized", 1, "Uninitialized"]
    assert got["before_init"] == got["shutdown_before_init"] == got["error_string_before_init"] == uninit
    invalid = ["NVMLError_InvalidArgument", 2, "Invalid Argument"]
    assert got["bad_index"] == got["negative_index"] == got["bad_handle"] == got["bad_sensor"] == invalid
    assert got["unknown_uuid"] == ["NVMLError_NotFound", 6, "Not Found"]
    assert got["error_string"] == "GPU is lost"
    assert got["unknown_code"] == "Unknown Error"
    assert got["still_up"] == 2
    assert got["after_shutdown"] == uninit
    assert got["mapping"] == ["NVMLError_GpuIsLost", True, True]
    assert got["exception_class"] == "NVMLError_NotSupported"


def test_names_and_values_match_the_real_module(sim_host: SimHostFactory) -> None:
    """Every name the stand-in offers exists in nvidia-ml-py with the same value (constants) or kind."""
    got = on_host(
        sim_host(),
        f"""
        import importlib.util, json, sys, pynvml as stand_in
        spec = importlib.util.spec_from_file_location("real_pynvml", {REAL_PYNVML!r})
        real = sys.modules["real_pynvml"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(real)
        public = [k for k in vars(stand_in) if k.startswith(("nvml", "NVML", "c_nvml"))]
        print(json.dumps({{
            "stand_in_file": stand_in.__file__,
            "missing": [k for k in public if not hasattr(real, k)],
            "constants_differ": [
                k for k in public if isinstance(getattr(stand_in, k), int)
                and getattr(stand_in, k) != getattr(real, k, None)
            ],
            "real_errors": sorted(k for k in vars(real) if k.startswith("NVMLError_")),
            "errors": sorted(k for k in vars(stand_in) if k.startswith("NVMLError_")),
        }}))
        """,
    )
    assert got["stand_in_file"].startswith(str(SIM_DIR))
    assert got["missing"] == []
    assert got["constants_differ"] == []
    assert got["errors"] == got["real_errors"]
    assert "NVMLError_LibraryNotFound" in got["errors"]


def test_no_driver(sim_host: SimHostFactory) -> None:
    got = on_host(
        sim_host(nvml="no-driver"),
        """
        import json, pynvml
        try:
            pynvml.nvmlInit()
            print(json.dumps(None))
        except pynvml.NVMLError_LibraryNotFound as e:
            print(json.dumps([type(e).__name__, e.value, str(e), isinstance(e, pynvml.NVMLError)]))
        """,
    )
    assert got == ["NVMLError_LibraryNotFound", 12, "NVML Shared Library Not Found", True]


@pytest.mark.parametrize("attempts", [1, 2])
def test_absent_module_fails_to_import_though_the_real_one_is_installed(
    sim_host: SimHostFactory, attempts: int
) -> None:
    got = on_host(
        sim_host(nvml="absent"),
        f"""
        import importlib.util, json, sys
        errors = []
        for _ in range({attempts}):
            try:
                import pynvml
                errors.append(None)
            except ImportError as e:
                errors.append([type(e).__name__, str(e), e.name])
        print(json.dumps({{"errors": errors, "cached": "pynvml" in sys.modules}}))
        """,
    )
    assert got["errors"] == [["ModuleNotFoundError", "No module named 'pynvml'", "pynvml"]] * attempts
    assert not got["cached"]
    assert os.path.exists(REAL_PYNVML)  # nvidia-ml-py is there, behind the stand-in
