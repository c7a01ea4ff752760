"""Scheduler tracebacks of the fault scenarios, with frames where SGLang's would be (FACTS §3).

The text follows ``Scheduler hit an exception: `` (511 scheduler.py:3938); frame paths point into the
stand-in package so that they look like an installed SGLang.
"""

from __future__ import annotations

from pathlib import Path

from gdnsim.server import version

SGLANG_DIR = str(Path(__file__).resolve().parents[2] / "sglang")


def _frames(frames: list[tuple[str, int, str, str]]) -> str:
    lines = ["Traceback (most recent call last):"]
    for path, line, func, code in frames:
        lines.append(f'  File "{SGLANG_DIR}/{path}", line {line}, in {func}')
        lines.append(f"    {code}")
    return "\n".join(lines)


_DIST_INIT = (
    "srt/model_executor/model_runner.py",
    400,
    "__init__",
    "min_per_gpu_memory = self.init_torch_distributed()",
)
_INITIALIZE = ("srt/model_executor/model_runner.py", 417, "__init__", "self.initialize(min_per_gpu_memory)")


def _scheduler_init(tail: list[tuple[str, int, str, str]]) -> list[tuple[str, int, str, str]]:
    return [
        ("srt/managers/scheduler.py", 3931, "run_scheduler_process", "scheduler = Scheduler("),
        ("srt/managers/scheduler.py", 379, "__init__", "self.init_model_worker()"),
        ("srt/managers/scheduler.py", 571, "init_model_worker", "self.init_tp_model_worker()"),
        ("srt/managers/scheduler.py", 529, "init_tp_model_worker", "self.tp_worker = TpModelWorker("),
        ("srt/managers/tp_worker.py", 251, "__init__", "self._init_model_runner()"),
        ("srt/managers/tp_worker.py", 334, "_init_model_runner", "self._model_runner = ModelRunner("),
        *tail,
    ]


def nccl_error() -> str:
    frames = _scheduler_init(
        [
            _DIST_INIT,
            (
                "srt/model_executor/model_runner.py",
                1160,
                "init_torch_distributed",
                "initialize_model_parallel(",
            ),
            (
                "srt/distributed/parallel_state.py",
                1620,
                "initialize_model_parallel",
                "_TP = init_model_parallel_group(",
            ),
            (
                "srt/distributed/parallel_state.py",
                1391,
                "init_model_parallel_group",
                "return GroupCoordinator(",
            ),
            ("srt/distributed/parallel_state.py", 318, "__init__", "self.pynccl_comm = PyNcclCommunicator("),
            (
                "srt/distributed/device_communicators/pynccl.py",
                107,
                "__init__",
                "self.comm: ncclComm_t = self.nccl.ncclCommInitRank(",
            ),
            (
                "srt/distributed/device_communicators/pynccl_wrapper.py",
                487,
                "ncclCommInitRank",
                "self.NCCL_CHECK(",
            ),
            (
                "srt/distributed/device_communicators/pynccl_wrapper.py",
                446,
                "NCCL_CHECK",
                'raise RuntimeError(f"NCCL error: {error_str}")',
            ),
        ]
    )
    return frames_text(
        frames, "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
    )


def invalid_device() -> str:
    frames = _scheduler_init(
        [
            _DIST_INIT,
            (
                "srt/model_executor/model_runner.py",
                1103,
                "init_torch_distributed",
                "torch.get_device_module(self.device).set_device(self.gpu_id)",
            ),
        ]
    )
    return frames_text(frames, "RuntimeError: CUDA error: invalid device ordinal\n" + _CUDA_ERROR_TAIL)


def not_enough_memory() -> str:
    frames = _scheduler_init(
        [
            _INITIALIZE,
            (
                "srt/model_executor/model_runner.py",
                588,
                "initialize",
                "self.init_memory_pool(min_per_gpu_memory)",
            ),
            (
                "srt/model_executor/model_runner_kv_cache_mixin.py",
                702,
                "init_memory_pool",
                "self.max_total_num_tokens = configurator.configure(",
            ),
            (
                "srt/model_executor/pool_configurator.py",
                41,
                "configure",
                'raise RuntimeError("Not enough memory. Please try to increase --mem-fraction-static.")',
            ),
        ]
    )
    return frames_text(
        frames, "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    )


def graph_oom(tried_mib: float, gpu: int, total_gib: float, free_mib: float) -> str:
    if version.named_cuda_graphs():
        runner = (
            "srt/model_executor/runner/decode_cuda_graph_runner.py",
            603,
            "__init__",
            "raise Exception(",
        )
        hint = (
            "Possible solutions:\n"
            "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
            "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"
            "3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. "
            "(Not recommended. Huge performance loss)\n"
        )
    else:
        runner = ("srt/model_executor/cuda_graph_runner.py", 717, "__init__", "raise Exception(")
        hint = (
            "Possible solutions:\n"
            "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
            "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
            "3. disable torch compile by not using --enable-torch-compile\n"
            "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
        )
    frames = _scheduler_init(
        [
            _INITIALIZE,
            ("srt/model_executor/model_runner.py", 612, "initialize", "self.init_device_graphs()"),
            (
                "srt/model_executor/model_runner.py",
                2797,
                "init_device_graphs",
                "self.graph_runner = graph_runners[self.device](self)",
            ),
            runner,
        ]
    )
    used = total_gib - free_mib / 1024
    oom = (
        f"CUDA out of memory. Tried to allocate {tried_mib:.2f} MiB. GPU {gpu} has a total capacity of "
        f"{total_gib:.2f} GiB of which {free_mib:.2f} MiB is free. Including non-PyTorch memory, "
        "this process "
        f"has {used:.2f} GiB memory in use. Of the allocated memory {used * 0.93:.2f} GiB is allocated by "
        f"PyTorch, and {used * 0.05:.2f} GiB is reserved by PyTorch but unallocated. "
        "If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
        "See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
    )
    issue = "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose "
    message = f"Exception: Capture cuda graph failed: {oom}\n{hint}{issue}"
    return frames_text(frames, message)


def serving_crash() -> str:
    frames = [
        ("srt/managers/scheduler.py", 3945, "run_scheduler_process", "scheduler.run_event_loop()"),
        ("srt/managers/scheduler.py", 1190, "run_event_loop", "dispatch_event_loop(self)"),
        ("srt/managers/scheduler.py", 3822, "dispatch_event_loop", "scheduler.event_loop_overlap()"),
        ("srt/managers/scheduler.py", 1262, "event_loop_overlap", "batch_result = self.run_batch(batch)"),
        (
            "srt/managers/scheduler.py",
            2585,
            "run_batch",
            "batch_result = self.model_worker.forward_batch_generation(",
        ),
        (
            "srt/speculative/eagle_worker_v2.py",
            688,
            "forward_batch_generation",
            "batch_output = self.verify(model_worker_batch)",
        ),
        (
            "srt/speculative/eagle_worker_v2.py",
            812,
            "verify",
            "predict = torch.where(accept_mask, predict, -1).cpu()",
        ),
    ]
    return frames_text(
        frames, "RuntimeError: CUDA error: an illegal memory access was encountered\n" + _CUDA_ERROR_TAIL
    )


_CUDA_ERROR_TAIL = (
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
    "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)


def frames_text(frames: list[tuple[str, int, str, str]], exception: str) -> str:
    return _frames(frames) + "\n" + exception.rstrip("\n") + "\n"
