"""Stand-in ``nvidia-smi`` of the simulated GPU host (``bin/nvidia-smi`` runs ``main``).

Answers what a console asks, in the real tool's formats:

    nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,... --format=csv[,noheader][,nounits]
    nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv[,...]
    nvidia-smi -L
    nvidia-smi                 (the status table)

with ``-i/--id`` to pick GPUs. Memory and processes come from the GPU ledger (``gdnsim.gpustate``). With
``nvidia_smi: false`` or ``nvml: "no-driver"`` in sim.json it fails as the real tool does without a driver.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import gdnsim.config as config
from gdnsim import gpustate

EXIT_OK = 0
EXIT_INVALID_ARGUMENT = 2
EXIT_NO_DRIVER = 9
NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n"
)
INVALID_ARGS = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"


class SmiError(Exception):
    """Ends the command with the real tool's message and exit code."""

    def __init__(self, message: str, code: int = EXIT_INVALID_ARGUMENT) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Gpu:
    """One GPU as the queries see it."""

    index: int
    uuid: str
    name: str
    bus_id: str
    total_mib: int
    used_mib: int
    util_pct: int
    compute_cap: str
    driver_version: str
    count: int

    @property
    def free_mib(self) -> int:
        return self.total_mib - self.used_mib


@dataclass(frozen=True)
class App:
    """One compute process on one GPU."""

    gpu: Gpu
    pid: int
    process_name: str
    used_mib: int


@dataclass(frozen=True)
class Field:
    """A queryable field: its header (the canonical name, with the unit in brackets) and its value."""

    name: str
    unit: str  # "" for none; else printed as "[unit]" in the header and after the value
    value: Callable[..., object]

    def header(self) -> str:
        return f"{self.name} [{self.unit}]" if self.unit else self.name

    def cell(self, item: object, units: bool) -> str:
        text = str(self.value(item))
        return f"{text} {self.unit}" if units and self.unit else text


GPU_FIELDS: dict[str, Field] = {
    "index": Field("index", "", lambda g: g.index),
    "count": Field("count", "", lambda g: g.count),
    "uuid": Field("uuid", "", lambda g: g.uuid),
    "name": Field("name", "", lambda g: g.name),
    "pci.bus_id": Field("pci.bus_id", "", lambda g: g.bus_id),
    "driver_version": Field("driver_version", "", lambda g: g.driver_version),
    "memory.total": Field("memory.total", "MiB", lambda g: g.total_mib),
    "memory.used": Field("memory.used", "MiB", lambda g: g.used_mib),
    "memory.free": Field("memory.free", "MiB", lambda g: g.free_mib),
    "utilization.gpu": Field("utilization.gpu", "%", lambda g: g.util_pct),
    "utilization.memory": Field("utilization.memory", "%", lambda g: g.util_pct * 2 // 3),
    "compute_cap": Field("compute_cap", "", lambda g: g.compute_cap),
    "temperature.gpu": Field("temperature.gpu", "", lambda g: _temperature(g)),
    "power.draw": Field("power.draw", "W", lambda g: f"{_power_w(g):.2f}"),
    "persistence_mode": Field("persistence_mode", "", lambda g: "Enabled"),
    "pstate": Field("pstate", "", lambda g: _pstate(g)),
}
GPU_ALIASES = {"gpu_name": "name", "gpu_uuid": "uuid", "gpu_bus_id": "pci.bus_id"}

APP_FIELDS: dict[str, Field] = {
    "gpu_name": Field("gpu_name", "", lambda a: a.gpu.name),
    "gpu_bus_id": Field("gpu_bus_id", "", lambda a: a.gpu.bus_id),
    "gpu_uuid": Field("gpu_uuid", "", lambda a: a.gpu.uuid),
    "pid": Field("pid", "", lambda a: a.pid),
    "process_name": Field("process_name", "", lambda a: a.process_name),
    "used_gpu_memory": Field("used_gpu_memory", "MiB", lambda a: a.used_mib),
}
APP_ALIASES = {"name": "process_name", "used_memory": "used_gpu_memory"}


# --- the host's GPUs --------------------------------------------------------------------------------------


def read_gpus(ledger: gpustate.Ledger) -> list[Gpu]:
    cfg = ledger.cfg
    return [
        Gpu(
            index=i,
            uuid=ledger.uuid(i),
            name=cfg.gpu_name,
            bus_id=gpustate.bus_id(i),
            total_mib=ledger.total_mib(i),
            used_mib=ledger.used_mib(i),
            util_pct=ledger.util_pct(i),
            compute_cap=cfg.compute_capability,
            driver_version=cfg.driver_version,
            count=cfg.gpus,
        )
        for i in range(cfg.gpus)
    ]


def read_apps(ledger: gpustate.Ledger, gpus: Sequence[Gpu]) -> list[App]:
    by_index = {g.index: g for g in gpus}
    return [App(by_index[h.gpu], h.pid, h.name, h.used_mib) for h in ledger.holders() if h.gpu in by_index]


def _temperature(gpu: Gpu) -> int:
    return gpustate.temperature_c(gpu.index, gpu.util_pct)


def _power_w(gpu: Gpu) -> float:
    return gpustate.power_mw(gpu.util_pct) / 1000


def _pstate(gpu: Gpu) -> str:
    if gpu.util_pct:
        return "P2"
    return "P8" if gpu.used_mib < 1024 else "P2"  # a loaded model keeps clocks up even when idle


# --- command line -----------------------------------------------------------------------------------------


@dataclass
class Request:
    query_gpu: list[str] | None = None
    query_apps: list[str] | None = None
    format: list[str] | None = None
    ids: list[int] | None = None
    list_gpus: bool = False


def parse(argv: Sequence[str]) -> Request:
    """The real tool accepts ``--opt=value`` and ``--opt value`` alike."""
    req = Request()
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, eq, value = arg.partition("=")
        if name in ("-L", "--list-gpus") and not eq:
            req.list_gpus = True
            continue
        if name not in ("--query-gpu", "--query-compute-apps", "--format", "-i", "--id"):
            raise SmiError(INVALID_ARGS)
        if not eq:
            if not args:
                raise SmiError(INVALID_ARGS)
            value = args.pop(0)
        _set_option(req, name, value)
    return req


def _set_option(req: Request, name: str, value: str) -> None:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if name == "--query-gpu":
        req.query_gpu = items
    elif name == "--query-compute-apps":
        req.query_apps = items
    elif name == "--format":
        req.format = items
    else:
        try:
            req.ids = [int(v) for v in items]
        except ValueError:
            raise SmiError(f'Invalid device index "{value}".\n' + INVALID_ARGS) from None


def resolve(names: Sequence[str], fields: dict[str, Field], aliases: dict[str, str]) -> list[Field]:
    if not names:
        raise SmiError(INVALID_ARGS)
    resolved = []
    for name in names:
        key = aliases.get(name, name)
        if key not in fields:
            raise SmiError(f'Field "{name}" is not a valid field to query.\n\n')
        resolved.append(fields[key])
    return resolved


def csv_options(fmt: list[str] | None) -> tuple[bool, bool]:
    """(header, units) from ``--format=csv[,noheader][,nounits]``."""
    if not fmt or "csv" not in fmt:
        raise SmiError('"--format" with the "csv" option is required when querying.\n\n' + INVALID_ARGS)
    unknown = [f for f in fmt if f not in ("csv", "noheader", "nounits")]
    if unknown:
        raise SmiError(f'"{unknown[0]}" is not a valid format option.\n\n' + INVALID_ARGS)
    return "noheader" not in fmt, "nounits" not in fmt


def render_csv(fields: Sequence[Field], items: Sequence[object], header: bool, units: bool) -> str:
    lines = [", ".join(f.header() for f in fields)] if header else []
    lines += [", ".join(f.cell(item, units) for f in fields) for item in items]
    return "".join(line + "\n" for line in lines)


def select(gpus: list[Gpu], ids: list[int] | None) -> list[Gpu]:
    if ids is None:
        return gpus
    for i in ids:
        if not 0 <= i < len(gpus):
            raise SmiError("No devices were found\n", code=6)  # the real tool's "not found" code
    return [g for g in gpus if g.index in ids]


def run(argv: Sequence[str], now: float | None = None) -> str:
    """The output of one invocation, or SmiError."""
    ledger = gpustate.ledger()
    cfg = ledger.cfg
    if not cfg.nvidia_smi or cfg.nvml == "no-driver":  # "absent" lacks only the Python binding
        raise SmiError(NO_DRIVER, code=EXIT_NO_DRIVER)
    req = parse(argv)
    gpus = select(read_gpus(ledger), req.ids)
    if req.query_gpu is not None or req.query_apps is not None:
        if req.query_gpu is not None and req.query_apps is not None:
            raise SmiError(INVALID_ARGS)
        header, units = csv_options(req.format)
        if req.query_gpu is not None:
            return render_csv(resolve(req.query_gpu, GPU_FIELDS, GPU_ALIASES), gpus, header, units)
        fields = resolve(req.query_apps or [], APP_FIELDS, APP_ALIASES)
        return render_csv(fields, read_apps(ledger, gpus), header, units)
    if req.list_gpus:
        return "".join(f"GPU {g.index}: {g.name} (UUID: {g.uuid})\n" for g in gpus)
    return table(cfg, gpus, read_apps(ledger, gpus), time.time() if now is None else now)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        out = run(sys.argv[1:] if argv is None else argv)
    except SmiError as exc:
        sys.stdout.write(exc.message)  # the real tool reports its errors on stdout
        return exc.code
    sys.stdout.write(out)
    return EXIT_OK


# --- the plain status table -------------------------------------------------------------------------------

RULE_GPU = "+" + "-" * 41 + "+" + "-" * 24 + "+" + "-" * 22 + "+"
RULE_WIDE = "+" + "-" * 89 + "+"
GPU_HEADER = [
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
    "|                                         |                        |               MIG M. |",
    "|=========================================+========================+======================|",
]
APP_HEADER = [
    RULE_WIDE,
    f"{'| Processes:':<90}|",
    "|  GPU   GI   CI              PID   Type   Process name" + " " * 24 + "GPU Memory |",
    "|        ID   ID" + " " * 63 + "Usage      |",
    "|" + "=" * 89 + "|",
]
NO_APPS = f"{'|  No running processes found':<90}|"


def table(cfg: config.SimConfig, gpus: Sequence[Gpu], apps: Sequence[App], now: float) -> str:
    """The layout of driver 580's ``nvidia-smi``, 91 columns wide."""
    version = f"NVIDIA-SMI {cfg.driver_version}"
    driver = f"Driver Version: {cfg.driver_version}"
    lines = [
        time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now)) + "       ",
        RULE_WIDE,
        f"| {version:<34}{driver:<31}CUDA Version: {cfg.cuda_version:<9}|",
        RULE_GPU,
        *GPU_HEADER,
    ]
    for gpu in gpus:
        lines += _gpu_rows(gpu)
    lines += ["", *APP_HEADER, *([_app_row(app) for app in apps] or [NO_APPS]), RULE_WIDE]
    return "\n".join(lines) + "\n"


def _gpu_rows(gpu: Gpu) -> list[str]:
    """The three lines of one GPU; cells are 41, 24 and 22 columns wide."""
    power = f"{round(_power_w(gpu))}W /  300W"
    memory = f"{gpu.used_mib}MiB / {gpu.total_mib:>6}MiB"
    temp = _temperature(gpu)
    return [
        f"|{gpu.index:>4}  {gpu.name[:29]:<29}{'On':>4}  |{gpu.bus_id:>19} Off |{'Off':>21} |",
        f"| {gpustate.fan_pct(gpu.util_pct):>2}%   {temp:>2}C    {_pstate(gpu):<2}{power:>24} "
        f"|{memory:>23} |{gpu.util_pct:>7}%      Default |",
        f"|{'':41}|{'':24}|{'N/A':>21} |",
        RULE_GPU,
    ]


def _app_row(app: App) -> str:
    name = app.process_name if len(app.process_name) <= 34 else "..." + app.process_name[-31:]
    return f"| {app.gpu.index:>4}   N/A  N/A  {app.pid:>15}      C   {name:<34}{app.used_mib:>8}MiB |"
