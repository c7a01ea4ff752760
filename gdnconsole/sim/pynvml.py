"""Stand-in for nvidia-ml-py's ``pynvml`` on the simulated GPU host.

Same names, argument conventions, return types and errors as the real module (nvidia-ml-py 13.x), for the
calls a console makes; the answers come from ``$GDNSIM_HOME/sim.json`` and the GPU ledger
(``gdnsim.gpustate``). ``nvml`` in sim.json picks how the host looks: ``"ok"``; ``"no-driver"``, where
``nvmlInit`` raises ``NVMLError_LibraryNotFound``; ``"absent"``, where importing this module fails as on a
host without nvidia-ml-py (the real module, further down sys.path, is not reached: an import stops at the
first module found).
"""

from __future__ import annotations

import string
import sys
import threading
from ctypes import Structure, c_char, c_uint, c_ulonglong
from typing import Any

import gdnsim.config as _config
from gdnsim import gpustate as _gpustate


def _load_config() -> _config.SimConfig:
    try:
        return _config.load()
    except RuntimeError as exc:  # GDNSIM_HOME unset: no simulated host to stand in for
        raise ImportError(f"stand-in pynvml: {exc}", name="pynvml") from None


if _load_config().nvml == "absent":
    raise ModuleNotFoundError("No module named 'pynvml'", name="pynvml")

# --- constants (values of the real module) --------------------------------------------------------

NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_ALREADY_INITIALIZED = 5
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_INSUFFICIENT_SIZE = 7
NVML_ERROR_INSUFFICIENT_POWER = 8
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_TIMEOUT = 10
NVML_ERROR_IRQ_ISSUE = 11
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_CORRUPTED_INFOROM = 14
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_RESET_REQUIRED = 16
NVML_ERROR_OPERATING_SYSTEM = 17
NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18
NVML_ERROR_IN_USE = 19
NVML_ERROR_MEMORY = 20
NVML_ERROR_NO_DATA = 21
NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22
NVML_ERROR_INSUFFICIENT_RESOURCES = 23
NVML_ERROR_FREQ_NOT_SUPPORTED = 24
NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25
NVML_ERROR_DEPRECATED = 26
NVML_ERROR_NOT_READY = 27
NVML_ERROR_GPU_NOT_FOUND = 28
NVML_ERROR_INVALID_STATE = 29
NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30
NVML_ERROR_UNKNOWN = 999

NVML_FEATURE_DISABLED = 0
NVML_FEATURE_ENABLED = 1
NVML_TEMPERATURE_GPU = 0
NVML_TEMPERATURE_GPU_MAX = 1
NVML_TEMPERATURE_COUNT = 2
NVML_INIT_FLAG_NO_GPUS = 1 << 0
NVML_INIT_FLAG_NO_ATTACH = 1 << 1
NVML_INIT_FLAG_FORCE_INIT = 1 << 2
NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32
NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16
NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96
NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96
NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80
nvmlMemory_v2 = 0x02000028
NVML_VALUE_NOT_AVAILABLE_uint = c_uint(-1)
NVML_VALUE_NOT_AVAILABLE_ulonglong = c_ulonglong(-1)

# --- errors (built as the real module builds them) ------------------------------------------------


class NVMLLibraryMismatchError(Exception):
    pass


class NVMLError(Exception):
    _valClassMapping: dict[int, type[NVMLError]] = {}  # noqa: RUF012 - the real module's shared table
    _errcode_to_string = {  # noqa: RUF012
        NVML_ERROR_UNINITIALIZED: "Uninitialized",
        NVML_ERROR_INVALID_ARGUMENT: "Invalid Argument",
        NVML_ERROR_NOT_SUPPORTED: "Not Supported",
        NVML_ERROR_NO_PERMISSION: "Insufficient Permissions",
        NVML_ERROR_ALREADY_INITIALIZED: "Already Initialized",
        NVML_ERROR_NOT_FOUND: "Not Found",
        NVML_ERROR_INSUFFICIENT_SIZE: "Insufficient Size",
        NVML_ERROR_INSUFFICIENT_POWER: "Insufficient External Power",
        NVML_ERROR_DRIVER_NOT_LOADED: "Driver Not Loaded",
        NVML_ERROR_TIMEOUT: "Timeout",
        NVML_ERROR_IRQ_ISSUE: "Interrupt Request Issue",
        NVML_ERROR_LIBRARY_NOT_FOUND: "NVML Shared Library Not Found",
        NVML_ERROR_FUNCTION_NOT_FOUND: "Function Not Found",
        NVML_ERROR_CORRUPTED_INFOROM: "Corrupted infoROM",
        NVML_ERROR_GPU_IS_LOST: "GPU is lost",
        NVML_ERROR_RESET_REQUIRED: "GPU requires restart",
        NVML_ERROR_OPERATING_SYSTEM: "The operating system has blocked the request.",
        NVML_ERROR_LIB_RM_VERSION_MISMATCH: "RM has detected an NVML/RM version mismatch.",
        NVML_ERROR_MEMORY: "Insufficient Memory",
        NVML_ERROR_UNKNOWN: "Unknown Error",
    }

    value: int

    def __new__(cls, value: int) -> NVMLError:
        """Maps ``value`` to its subclass, so that ``NVMLError(12)`` is an ``NVMLError_LibraryNotFound``."""
        if cls is NVMLError:
            cls = NVMLError._valClassMapping.get(value, cls)
        obj = Exception.__new__(cls)
        obj.value = value
        return obj

    def __str__(self) -> str:
        try:
            if self.value not in NVMLError._errcode_to_string:
                NVMLError._errcode_to_string[self.value] = str(nvmlErrorString(self.value))
            return NVMLError._errcode_to_string[self.value]
        except NVMLError:
            return f"NVML Error with code {self.value}"

    def __eq__(self, other: object) -> bool:
        return self.value == getattr(other, "value", None)

    __hash__ = None  # type: ignore[assignment]  # as in the real module, where __eq__ drops the hash


def nvmlExceptionClass(nvmlErrorCode: int) -> type[NVMLError]:
    if nvmlErrorCode not in NVMLError._valClassMapping:
        raise ValueError(f"nvmlErrorCode {nvmlErrorCode} is not valid")
    return NVMLError._valClassMapping[nvmlErrorCode]


def _extractNVMLErrorsAsClasses() -> None:
    """One subclass per NVML_ERROR_* constant: NVML_ERROR_GPU_IS_LOST becomes NVMLError_GpuIsLost."""
    this_module = sys.modules[__name__]
    for err_name in [x for x in dir(this_module) if x.startswith("NVML_ERROR_")]:
        words = err_name.replace("NVML_ERROR_", "")
        class_name = "NVMLError_" + string.capwords(words, "_").replace("_", "")
        err_val = getattr(this_module, err_name)

        def gen_new(val: int) -> Any:
            def new(typ: type[NVMLError], *args: object) -> NVMLError:
                return NVMLError.__new__(typ, val)

            return new

        new_error_class = type(class_name, (NVMLError,), {"__new__": gen_new(err_val)})
        new_error_class.__module__ = __name__
        setattr(this_module, class_name, new_error_class)
        NVMLError._valClassMapping[err_val] = new_error_class


_extractNVMLErrorsAsClasses()

# Strings the library itself gives for codes the Python table lacks.
_LIBRARY_STRINGS = {
    NVML_ERROR_IN_USE: "In use by another client",
    NVML_ERROR_NO_DATA: "No data",
    NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: "vGPU ECC is not supported",
    NVML_ERROR_INSUFFICIENT_RESOURCES: "Insufficient resources",
    NVML_ERROR_FREQ_NOT_SUPPORTED: "Frequency not supported",
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH: "Argument version mismatch",
    NVML_ERROR_DEPRECATED: "Deprecated",
    NVML_ERROR_NOT_READY: "Not ready",
    NVML_ERROR_GPU_NOT_FOUND: "GPU not found",
    NVML_ERROR_INVALID_STATE: "Invalid state",
    NVML_ERROR_RESET_TYPE_NOT_SUPPORTED: "Reset type not supported",
}

# --- structures (the real module's ctypes types, so that values and str() match) ------------------


class _PrintableStructure(Structure):
    """A ctypes Structure whose str() lists its fields, and whose char arrays read as str."""

    _fmt_: dict[str, str] = {}  # noqa: RUF012

    def __str__(self) -> str:
        result = []
        for x in self._fields_:
            key = x[0]
            fmt = self._fmt_.get(key, self._fmt_.get("<default>", "%s"))
            result.append(("%s: " + fmt) % (key, getattr(self, key)))
        return self.__class__.__name__ + "(" + ", ".join(result) + ")"

    def __getattribute__(self, name: str) -> Any:
        res = super().__getattribute__(name)
        return res.decode() if isinstance(res, bytes) else res

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value.encode() if isinstance(value, str) else value)


class c_nvmlMemory_t(_PrintableStructure):
    _fields_ = [("total", c_ulonglong), ("free", c_ulonglong), ("used", c_ulonglong)]
    _fmt_ = {"<default>": "%d B"}


class c_nvmlMemory_v2_t(_PrintableStructure):
    _fields_ = [
        ("version", c_uint),
        ("total", c_ulonglong),
        ("reserved", c_ulonglong),
        ("free", c_ulonglong),
        ("used", c_ulonglong),
    ]
    _fmt_ = {"<default>": "%d B"}


class c_nvmlUtilization_t(_PrintableStructure):
    _fields_ = [("gpu", c_uint), ("memory", c_uint)]
    _fmt_ = {"<default>": "%d %%"}


class nvmlPciInfo_t(_PrintableStructure):
    _fields_ = [
        ("busIdLegacy", c_char * NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE),
        ("domain", c_uint),
        ("bus", c_uint),
        ("device", c_uint),
        ("pciDeviceId", c_uint),
        ("pciSubSystemId", c_uint),
        ("busId", c_char * NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE),
    ]
    _fmt_ = {
        "domain": "0x%08X",
        "bus": "0x%02X",
        "device": "0x%02X",
        "pciDeviceId": "0x%08X",
        "pciSubSystemId": "0x%08X",
    }


class nvmlFriendlyObject:
    """What the real module returns for process lists: a plain object with the struct's fields."""

    def __init__(self, dictionary: dict[str, Any]) -> None:
        for key, value in dictionary.items():
            setattr(self, key, value)

    def __str__(self) -> str:
        return self.__dict__.__str__()


class c_nvmlDevice_t:
    """A device handle: opaque to callers, as the real one (a ctypes pointer) is."""

    def __init__(self, index: int) -> None:
        self._index = index

    def __repr__(self) -> str:
        return f"<pynvml.c_nvmlDevice_t object (simulated GPU {self._index})>"


# --- library state --------------------------------------------------------------------------------

_lock = threading.Lock()
_refcount = 0  # nvmlInit calls not yet matched by nvmlShutdown
_loaded = False  # the "shared library" was found once (nvmlErrorString works from then on)
_cfg = _config.SimConfig()
_MIB = 1024 * 1024


def _check_init() -> _config.SimConfig:
    if _refcount <= 0:
        raise NVMLError(NVML_ERROR_UNINITIALIZED)
    return _cfg


def _device(handle: object) -> int:
    cfg = _check_init()
    index = getattr(handle, "_index", None)
    if not isinstance(handle, c_nvmlDevice_t) or not isinstance(index, int) or not 0 <= index < cfg.gpus:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return index


def _ledger() -> _gpustate.Ledger:
    return _gpustate.ledger()


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


# --- init / system --------------------------------------------------------------------------------


def nvmlInitWithFlags(flags: int) -> None:
    global _refcount, _loaded, _cfg
    cfg = _config.load()
    if cfg.nvml != "ok":
        raise NVMLError(NVML_ERROR_LIBRARY_NOT_FOUND)
    with _lock:
        _cfg, _loaded = cfg, True
        _refcount += 1


def nvmlInit() -> None:
    nvmlInitWithFlags(0)


def nvmlShutdown() -> None:
    global _refcount
    with _lock:
        _check_init()
        _refcount -= 1


def nvmlErrorString(result: int) -> str:
    if not _loaded:
        raise NVMLError(NVML_ERROR_UNINITIALIZED)
    known = NVMLError._errcode_to_string.get(result) or _LIBRARY_STRINGS.get(result)
    return known or "Unknown Error"


def nvmlSystemGetDriverVersion() -> str:
    return _check_init().driver_version


def nvmlSystemGetNVMLVersion() -> str:
    cfg = _check_init()
    return f"{cfg.cuda_version.split('.')[0]}.{cfg.driver_version}"


def nvmlSystemGetCudaDriverVersion() -> int:
    """CUDA version as the driver API encodes it: 13.0 is 13000, 12.4 is 12040."""
    major, _, minor = _check_init().cuda_version.partition(".")
    return int(major) * 1000 + int(minor or 0) * 10


def nvmlSystemGetCudaDriverVersion_v2() -> int:
    return nvmlSystemGetCudaDriverVersion()


def nvmlSystemGetProcessName(pid: int) -> str:
    _check_init()
    name = _gpustate.proc_name(pid)
    if name is None:
        raise NVMLError(NVML_ERROR_NOT_FOUND)
    return name


# --- devices --------------------------------------------------------------------------------------


def nvmlDeviceGetCount() -> int:
    return _check_init().gpus


def nvmlDeviceGetHandleByIndex(index: int) -> c_nvmlDevice_t:
    cfg = _check_init()
    if not isinstance(index, int):
        raise TypeError(f"an integer is required, not {type(index).__name__}")  # as ctypes' c_uint says
    if not 0 <= index < cfg.gpus:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return c_nvmlDevice_t(index)


def nvmlDeviceGetHandleByUUID(uuid: str | bytes) -> c_nvmlDevice_t:
    cfg = _check_init()
    wanted = _text(uuid)
    for index in range(cfg.gpus):
        if _uuid(index) == wanted:
            return c_nvmlDevice_t(index)
    raise NVMLError(NVML_ERROR_NOT_FOUND if wanted.startswith("GPU-") else NVML_ERROR_INVALID_ARGUMENT)


def nvmlDeviceGetHandleByPciBusId(pciBusId: str | bytes) -> c_nvmlDevice_t:
    cfg = _check_init()
    wanted = _text(pciBusId).upper()
    for index in range(cfg.gpus):
        if wanted in (_bus_id(index), _bus_id(index)[4:]):
            return c_nvmlDevice_t(index)
    raise NVMLError(NVML_ERROR_NOT_FOUND)


def nvmlDeviceGetIndex(handle: c_nvmlDevice_t) -> int:
    return _device(handle)


def nvmlDeviceGetName(handle: c_nvmlDevice_t) -> str:
    _device(handle)
    return _cfg.gpu_name


def nvmlDeviceGetUUID(handle: c_nvmlDevice_t) -> str:
    return _uuid(_device(handle))


def _uuid(index: int) -> str:
    return _ledger().uuid(index)


def _bus_id(index: int) -> str:
    return _gpustate.bus_id(index)


def nvmlDeviceGetPciInfo_v3(handle: c_nvmlDevice_t) -> nvmlPciInfo_t:
    index = _device(handle)
    info = nvmlPciInfo_t()
    info.busIdLegacy = _bus_id(index)[4:]
    info.busId = _bus_id(index)
    info.domain, info.bus, info.device = 0, index + 1, 0
    info.pciDeviceId = 0x223010DE  # device 0x2230 (RTX A6000), vendor 0x10DE (NVIDIA)
    info.pciSubSystemId = 0x145910DE
    return info


def nvmlDeviceGetPciInfo(handle: c_nvmlDevice_t) -> nvmlPciInfo_t:
    return nvmlDeviceGetPciInfo_v3(handle)


def nvmlDeviceGetCudaComputeCapability(handle: c_nvmlDevice_t) -> tuple[int, int]:
    _device(handle)
    major, _, minor = _cfg.compute_capability.partition(".")
    return (int(major), int(minor or 0))


def nvmlDeviceGetMemoryInfo(
    handle: c_nvmlDevice_t, version: int | None = None
) -> c_nvmlMemory_t | c_nvmlMemory_v2_t:
    """Bytes. Without ``version``, the v1 struct; with one (nvmlMemory_v2), v2 with ``reserved`` too."""
    index = _device(handle)
    ledger = _ledger()
    total, used = ledger.total_mib(index) * _MIB, ledger.used_mib(index) * _MIB
    if not version:
        v1 = c_nvmlMemory_t()
        v1.total, v1.free, v1.used = total, total - used, used
        return v1
    if version != nvmlMemory_v2:
        raise NVMLError(NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
    v2 = c_nvmlMemory_v2_t()
    v2.version, v2.total, v2.reserved, v2.free, v2.used = version, total, 0, total - used, used
    return v2


def nvmlDeviceGetUtilizationRates(handle: c_nvmlDevice_t) -> c_nvmlUtilization_t:
    util = c_nvmlUtilization_t()
    util.gpu = _ledger().util_pct(_device(handle))
    util.memory = util.gpu * 2 // 3  # memory bandwidth busy: a decode-bound load keeps it below compute
    return util


def nvmlDeviceGetComputeRunningProcesses_v3(handle: c_nvmlDevice_t) -> list[nvmlFriendlyObject]:
    index = _device(handle)
    na = NVML_VALUE_NOT_AVAILABLE_uint.value  # instance ids of a GPU without MIG
    return [
        nvmlFriendlyObject(
            {"pid": h.pid, "usedGpuMemory": h.used_mib * _MIB, "gpuInstanceId": na, "computeInstanceId": na}
        )
        for h in _ledger().holders(index)
    ]


def nvmlDeviceGetComputeRunningProcesses_v2(handle: c_nvmlDevice_t) -> list[nvmlFriendlyObject]:
    return nvmlDeviceGetComputeRunningProcesses_v3(handle)


def nvmlDeviceGetComputeRunningProcesses(handle: c_nvmlDevice_t) -> list[nvmlFriendlyObject]:
    return nvmlDeviceGetComputeRunningProcesses_v3(handle)


def nvmlDeviceGetGraphicsRunningProcesses_v3(handle: c_nvmlDevice_t) -> list[nvmlFriendlyObject]:
    _device(handle)
    return []  # a headless compute box


def nvmlDeviceGetGraphicsRunningProcesses_v2(handle: c_nvmlDevice_t) -> list[nvmlFriendlyObject]:
    return nvmlDeviceGetGraphicsRunningProcesses_v3(handle)


def nvmlDeviceGetGraphicsRunningProcesses(handle: c_nvmlDevice_t) -> list[nvmlFriendlyObject]:
    return nvmlDeviceGetGraphicsRunningProcesses_v3(handle)


def nvmlDeviceGetTemperature(handle: c_nvmlDevice_t, sensor: int) -> int:
    """Degrees C: idle near 30, warmer with load."""
    index = _device(handle)
    if sensor != NVML_TEMPERATURE_GPU:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return _gpustate.temperature_c(index, _ledger().util_pct(index))


def nvmlDeviceGetPowerUsage(handle: c_nvmlDevice_t) -> int:
    """Milliwatts."""
    return _gpustate.power_mw(_ledger().util_pct(_device(handle)))


def nvmlDeviceGetPowerManagementLimit(handle: c_nvmlDevice_t) -> int:
    _device(handle)
    return 300_000


def nvmlDeviceGetEnforcedPowerLimit(handle: c_nvmlDevice_t) -> int:
    return nvmlDeviceGetPowerManagementLimit(handle)


def nvmlDeviceGetFanSpeed(handle: c_nvmlDevice_t) -> int:
    return _gpustate.fan_pct(_ledger().util_pct(_device(handle)))


def nvmlDeviceGetPersistenceMode(handle: c_nvmlDevice_t) -> int:
    _device(handle)
    return NVML_FEATURE_ENABLED
