"""The agent against a real NVIDIA driver (issue 20): one prepared run for the GPU machine.

On a machine with a GPU, run as the console would run the agent (the same program and protocol, as a
local child: nothing needs SSH), once with nvidia-ml-py and once with only `nvidia-smi`, and compare each
sample with `nvidia-smi --query-gpu` / `--query-compute-apps` taken at the same moment. A child holds a
known amount of GPU memory (the CUDA driver API through ctypes: libcuda.so.1 comes with the driver, no
package needed); the agent must name it with its pid, process group and memory, and see the memory go
after the child exits. Then the sample's cost, and the driver, CUDA and GPU.

    python3 bench/gpu_real_check.py --out DIR           (on the GPU machine; DIR gets the figures and
                                                        the raw answers, as fixtures for the tests)
    python bench/gpu_real_check.py --simulate --out DIR (here: the same run on the simulated host's
                                                        stand-ins, to check the script itself)

Standard library only (Python 3.10+): the agent is loaded from its file, as it travels.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
AGENT = ROOT / "gdnconsole" / "host" / "agent.py"
HOLD_MIB = 4096
SMI_GPU = "index,uuid,name,compute_cap,driver_version,memory.total,memory.used,memory.free,memory.reserved"
SMI_APPS = "gpu_uuid,pid,used_memory,process_name"

# A child that holds HOLD_MIB of GPU memory through the CUDA driver API, says "ready", and frees it when
# its stdin closes (or dies holding it, when killed).
HOLDER = r"""
import ctypes, sys
cuda = ctypes.CDLL("libcuda.so.1")
def ok(code, what):
    if code != 0:
        sys.stdout.write("error %s %d\n" % (what, code)); sys.stdout.flush(); sys.exit(1)
ok(cuda.cuInit(0), "cuInit")
dev = ctypes.c_int(); ok(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p(); ok(cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate")
ptr = ctypes.c_uint64(); size = ctypes.c_size_t(int(sys.argv[1]) << 20)
ok(cuda.cuMemAlloc_v2(ctypes.byref(ptr), size), "cuMemAlloc")
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.read()
"""


def load_agent() -> Any:
    spec = importlib.util.spec_from_file_location("gdnagent", AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class AgentChild:
    """The agent as a child process speaking its JSON lines, as the console's local link runs it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-u", str(AGENT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.inbox.put(json.loads(line))
            except ValueError:
                continue

    def send(self, **request: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()

    def next(self, kind: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.inbox.get(timeout=max(0.01, deadline - time.monotonic()))
            if message.get("type") == kind:
                return message

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(10)


def smi(query: str, fields: str, env: dict[str, str]) -> tuple[str, list[list[str]]]:
    """The raw CSV (kept as a fixture) and its rows; unknown fields are dropped one by one."""
    wanted = fields.split(",")
    while True:
        done = subprocess.run(
            ["nvidia-smi", f"--{query}=" + ",".join(wanted), "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
        if done.returncode == 0 or len(wanted) == 1:
            break
        bad = next((f for f in wanted if f in done.stdout + done.stderr), wanted[-1])
        wanted.remove(bad)
    rows = [[c.strip() for c in line.split(",")] for line in done.stdout.splitlines() if line.strip()]
    return f"# {','.join(wanted)}\n{done.stdout}", rows


def nvml_facts() -> dict[str, Any]:
    """What nvidia-ml-py says directly: versions, memory v1 and v2, both process lists, errors."""
    facts: dict[str, Any] = {}
    try:
        import pynvml as nvml
    except ImportError as exc:
        return {"error": f"nvidia-ml-py: {exc}"}
    nvml.nvmlInit()
    facts["driver"] = _call(nvml.nvmlSystemGetDriverVersion)
    facts["cuda_driver"] = _call(nvml.nvmlSystemGetCudaDriverVersion_v2)
    facts["nvml_version"] = _call(nvml.nvmlSystemGetNVMLVersion)
    gpus = []
    for i in range(nvml.nvmlDeviceGetCount()):
        h = nvml.nvmlDeviceGetHandleByIndex(i)
        gpu: dict[str, Any] = {"index": i, "name": _call(nvml.nvmlDeviceGetName, h)}
        gpu["compute_capability"] = _call(nvml.nvmlDeviceGetCudaComputeCapability, h)
        v1 = _call(nvml.nvmlDeviceGetMemoryInfo, h)
        gpu["memory_v1_mib"] = _memory(v1)
        v2_version = getattr(nvml, "nvmlMemory_v2", None)
        if v2_version is not None:
            gpu["memory_v2_mib"] = _memory(_call(nvml.nvmlDeviceGetMemoryInfo, h, version=v2_version))
        gpu["mig_mode"] = _call(nvml.nvmlDeviceGetMigMode, h)
        util = _call(nvml.nvmlDeviceGetUtilizationRates, h)
        gpu["util"] = util if isinstance(util, dict) else util.gpu
        for kind, read in (
            ("compute", nvml.nvmlDeviceGetComputeRunningProcesses),
            ("graphics", nvml.nvmlDeviceGetGraphicsRunningProcesses),
        ):
            procs = _call(read, h)
            gpu[f"{kind}_processes"] = (
                [{"pid": p.pid, "used_mib": _mib(getattr(p, "usedGpuMemory", None))} for p in procs]
                if isinstance(procs, list)
                else procs
            )
        gpus.append(gpu)
    facts["gpus"] = gpus
    nvml.nvmlShutdown()
    return facts


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        value = fn(*args, **kwargs)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return value.decode() if isinstance(value, bytes) else value


def _mib(value: Any) -> int | None:
    return value >> 20 if isinstance(value, int) else None


def _memory(info: Any) -> Any:
    if isinstance(info, dict):
        return info
    return {k: _mib(getattr(info, k, None)) for k in ("total", "reserved", "used", "free")}


def hold(env: dict[str, str], simulate: bool) -> subprocess.Popen[bytes]:
    """A process in a session of its own holding HOLD_MIB on GPU 0, once it has said so."""
    if simulate:
        argv = [sys.executable, "-m", "gdnsim.hold", "--gpu", "0", "--mib", str(HOLD_MIB)]
    else:
        argv = [sys.executable, "-c", HOLDER, str(HOLD_MIB)]
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
    )
    assert proc.stdout is not None
    said = proc.stdout.readline().decode().strip()
    if said != "ready":
        raise SystemExit(f"the holder did not start: {said or 'no answer'}")
    return proc


def run_source(
    env: dict[str, str], holder: subprocess.Popen[bytes], label: str, cpu_s: float
) -> dict[str, Any]:
    """One agent, one source: a sample beside nvidia-smi's at the same moment, the holder named, its
    memory released after it ends (timed), and the agent's CPU at the console's 1 s refresh."""
    agent = AgentChild(env)
    agent.send(op="hello")
    result: dict[str, Any] = {"hello": agent.next("hello")}
    agent.send(op="sample", interval=0.25)
    agent.next("gpus")
    gpus = agent.next("gpus")
    smi_gpu_csv, smi_gpu = smi("query-gpu", SMI_GPU, env)
    smi_apps_csv, smi_apps = smi("query-compute-apps", SMI_APPS, env)
    result.update(agent_gpus=gpus, smi_query_gpu=smi_gpu_csv, smi_query_apps=smi_apps_csv)
    first = gpus["gpus"][0]
    named = [p for p in first.get("processes", []) if p.get("pid") == holder.pid]
    result["holder"] = {
        "pid": holder.pid,
        "pgid": os.getpgid(holder.pid),
        "seen": named[0] if named else None,
        "smi_rows": [row for row in smi_apps if len(row) > 1 and row[1] == str(holder.pid)],
    }
    names = smi_gpu_csv.splitlines()[0].lstrip("# ").split(",")
    result["used_vs_smi_mib"] = [
        {
            "index": g["index"],
            "agent": g.get("used_mib"),
            "smi": _int(dict(zip(names, row, strict=False)).get("memory.used", "")),
        }
        for g, row in zip(gpus["gpus"], smi_gpu, strict=False)
    ]
    agent.send(op="sample", interval=1.0)
    before, t0 = agent.cpu_s(), time.monotonic()
    time.sleep(cpu_s)  # the agent's own pace: nothing to wait for but time
    result["agent_cpu_pct_at_1s"] = round(100 * (agent.cpu_s() - before) / (time.monotonic() - t0), 2)
    agent.close()
    result["label"] = label
    return result


def released(env: dict[str, str], holder: subprocess.Popen[bytes]) -> dict[str, Any]:
    """Stop the holder; how soon the agent's samples drop its pid and its memory."""
    agent = AgentChild(env)
    agent.send(op="sample", interval=0.1)
    held = agent.next("gpus")["gpus"][0].get("used_mib") or 0
    holder.terminate()  # as a crashed or stopped rank ends: the driver frees what it held
    holder.wait(30)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30:
        gpu = agent.next("gpus")["gpus"][0]
        gone = all(p.get("pid") != holder.pid for p in gpu.get("processes", []))
        if gone and (gpu.get("used_mib") or 0) <= held - HOLD_MIB // 2:
            agent.close()
            return {
                "seconds": round(time.monotonic() - t0, 2),
                "used_before": held,
                "used_after": gpu["used_mib"],
            }
    agent.close()
    return {"seconds": None, "used_before": held}


def cost_per_sample(agent: Any, env: dict[str, str]) -> dict[str, Any]:
    """Milliseconds per sample of each source, in this process."""
    os.environ.update(env)
    sys.path[:0] = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]  # the simulated pynvml
    out: dict[str, Any] = {}
    for name, opener in (("nvml", agent.NvmlSource), ("smi", agent.SmiSource)):
        try:
            source = opener()
        except Exception as exc:
            out[name] = f"down: {exc}"
            continue
        source.sample()
        t0 = time.perf_counter()
        for _ in range(20):
            source.sample()
        out[name] = round((time.perf_counter() - t0) / 20 * 1000, 2)
        source.close()
    return out


def _int(cell: str) -> int | None:
    try:
        return int(float(cell))
    except ValueError:
        return None


def simulated_env(home: Path) -> dict[str, str]:
    """The simulated host's environment (its stand-in pynvml and nvidia-smi), for checking this script."""
    sys.path.insert(0, str(ROOT))
    from gdnconsole.config.hosts import loads

    cfg = loads(
        f'[hosts.sim]\nlocal = true\n[hosts.sim.simulate]\ngpus = 2\nhome = "{home}"\n', Path("<check>")
    )
    from gdnconsole.host import simulated

    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(simulated.environment(cfg.hosts["sim"]))
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "gpu-check")))
    parser.add_argument("--simulate", action="store_true", help="the simulated host's stand-ins")
    parser.add_argument("--cpu-seconds", type=float, default=10.0, help="how long the agent's CPU is read")
    args = parser.parse_args()
    out: Path = args.out
    (out / "fixtures").mkdir(parents=True, exist_ok=True)
    env = simulated_env(Path(tempfile.mkdtemp())) if args.simulate else dict(os.environ)
    hide = Path(tempfile.mkdtemp())  # nvidia-smi only: an import of pynvml that fails
    (hide / "pynvml.py").write_text("raise ImportError('hidden by gpu_real_check')\n")
    smi_env = {**env, "PYTHONPATH": os.pathsep.join(p for p in (str(hide), env.get("PYTHONPATH")) if p)}

    report: dict[str, Any] = {"python": sys.version.split()[0]}
    if not args.simulate:
        report["nvml"] = nvml_facts()
    holder = hold(env, args.simulate)
    try:
        report["nvml_source"] = run_source(env, holder, "pynvml", args.cpu_seconds)
        report["smi_source"] = run_source(smi_env, holder, "nvidia-smi", args.cpu_seconds)
        report["release_nvml"] = released(env, holder)
    finally:
        if holder.poll() is None:
            holder.kill()
    report["ms_per_sample"] = cost_per_sample(load_agent(), env)
    (out / "gpu-check.json").write_text(json.dumps(report, indent=1, default=str))
    for source in ("nvml_source", "smi_source"):
        name = report[source]["label"].replace("-", "_")
        (out / "fixtures" / f"agent-gpus-{name}.json").write_text(json.dumps(report[source]["agent_gpus"]))
    (out / "fixtures" / "smi-query-gpu.csv").write_text(report["nvml_source"]["smi_query_gpu"])
    (out / "fixtures" / "smi-query-compute-apps.csv").write_text(report["nvml_source"]["smi_query_apps"])
    summary(report)


def summary(report: dict[str, Any]) -> None:
    for source in ("nvml_source", "smi_source"):
        r = report[source]
        print(f"{r['label']}: source {r['hello'].get('nvml', {})}")
        print(
            f"  holder pid {r['holder']['pid']} pgid {r['holder']['pgid']}: agent saw {r['holder']['seen']}"
        )
        print(f"  smi rows for it: {r['holder']['smi_rows']}")
        print(f"  used MiB agent vs smi: {r['used_vs_smi_mib']}")
        print(f"  agent CPU at 1 s samples: {r['agent_cpu_pct_at_1s']} %")
    print(f"release after the holder ended: {report['release_nvml']}")
    print(f"ms per sample: {report['ms_per_sample']}")
    nvml = report.get("nvml")
    if nvml:
        print(f"driver {nvml.get('driver')} CUDA {nvml.get('cuda_driver')} NVML {nvml.get('nvml_version')}")
        for gpu in nvml.get("gpus", []):
            print(f"  GPU {gpu['index']} {gpu['name']} cc {gpu['compute_capability']} mig {gpu['mig_mode']}")
            print(f"    memory v1 {gpu['memory_v1_mib']} v2 {gpu.get('memory_v2_mib')}")
            print(f"    compute {gpu['compute_processes']} graphics {gpu['graphics_processes']}")


if __name__ == "__main__":
    main()
