"""Each shape of line, classified whole: kind, stage, severity, whether a block follows, and its numbers.

A field nobody asserts can drift unseen: the severity colours the log view and counts toward the alerts,
``opens_block`` decides what a traceback's lines belong to, the numbers feed the GPU memory split.
"""

from __future__ import annotations

import pytest

from gdnconsole.sglang.events import access_path, classify, frame_stage
from gdnconsole.sglang.logline import parse
from gdnconsole.sglang.stages import Severity, Stage

TS = "[2026-11-30 09:00:02]"
TP0 = "[2026-11-30 09:00:02 TP0]"
BAR_LOAD = "Loading safetensors checkpoint shards: 100% Completed | 11/11 [00:40<00:00,  0.27it/s]"
BAR_GRAPHS = "Capturing batches (bs=4 avail_mem=16.20 GB): 100%|██████████| 36/36 [00:10<00:00,  3.37it/s]"
V = Severity

# line -> (kind, stage, severity, opens a block, numbers)
WHOLE: dict[str, tuple[str, tuple[str, Stage | None, Severity, bool, dict[str, float]]]] = {
    "a Python warning routed through SGLang's logger opens its block": (
        f"{TP0} /x/y.py:12: UserWarning: careful",
        ("py_warning", None, V.WARNING, True, {}),
    ),
    "an unknown message in SGLang's frame is plain information": (
        f"{TP0} some message of its own",
        ("message", None, V.INFO, False, {}),
    ),
    "a fatal notice without a traceback opens no block": (
        f"{TS} Received sigquit from a child process. It usually means the child failed.",
        ("sigquit_launch", None, V.FATAL, False, {}),
    ),
    "uvicorn's own warning keeps its level": (
        f"{TS} WARNING:  Invalid HTTP request received.",
        ("uvicorn", None, V.WARNING, False, {}),
    ),
    "uvicorn's own error keeps its level": (
        f"{TS} ERROR:    Exception in ASGI application",
        ("uvicorn", None, V.ERROR, False, {}),
    ),
    "uvicorn running gives the port": (
        f"{TS} INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
        ("uvicorn_running", Stage.LISTENING, V.INFO, False, {"port": 30000.0}),
    ),
    "an access line gives its status": (
        f'{TS} INFO:     127.0.0.1:41234 - "POST /generate HTTP/1.1" 200 OK',
        ("access", None, V.INFO, False, {"status": 200.0}),
    ),
    "a checkpoint-shards bar is loading": (BAR_LOAD, ("tqdm_loading", Stage.LOADING, V.INFO, False, {})),
    "a loading-shards bar is loading": (
        "Multi-thread loading shards: 100% Completed | 11/11 [00:40<00:00,  0.27it/s]",
        ("tqdm_loading", Stage.LOADING, V.INFO, False, {}),
    ),
    "a bar's last state decides, however many came before": (
        f"{BAR_LOAD}\r{BAR_LOAD}\r{BAR_GRAPHS}",
        ("tqdm_graphs", Stage.GRAPHS, V.INFO, False, {}),
    ),
    "a bar ending in a carriage return is read whole": (
        f"{BAR_GRAPHS}\r",
        ("tqdm_graphs", Stage.GRAPHS, V.INFO, False, {}),
    ),
    "another bar is just a bar": (
        "Downloading: 100%|██████████| 36/36 [00:10<00:00,  3.37it/s]",
        ("tqdm", None, V.INFO, False, {}),
    ),
    "a traceback's header is an error that opens a block": (
        "Traceback (most recent call last):",
        ("traceback", None, V.ERROR, True, {}),
    ),
    "an exception line names the stage it proves": (
        "Exception: Capture cuda graph failed: CUDA out of memory.",
        ("exception", Stage.GRAPHS, V.ERROR, False, {}),
    ),
    "a warning class is a warning, whatever colons its message holds": (
        "UserWarning: see: here",
        ("exception", None, V.WARNING, False, {}),
    ),
    "a Python warning opens its block": (
        "/x.py:1: UserWarning: y",
        ("py_warning", None, V.WARNING, True, {}),
    ),
    "flashinfer's warning level": (
        "2025-11-30 11:18:01,123 - WARNING - flashinfer.jit: slow",
        ("library", None, V.WARNING, False, {}),
    ),
    "an NCCL WARN line": (
        "ct129:1:2 [0] NCCL WARN Cuda failure 'out of memory'",
        ("library", None, V.WARNING, False, {}),
    ),
    "a library's deprecation": (
        "[transformers] `torch_dtype` is deprecated! Use `dtype` instead!",
        ("library", None, V.WARNING, False, {}),
    ),
    "an NCCL INFO line is information": (
        "ct129:1:2 [0] NCCL INFO Bootstrap : Using eth0",
        ("library", None, V.INFO, False, {}),
    ),
    "argparse's refusal is fatal at starting": (
        "sglang serve: error: argument --tp-size: invalid int value: 'x'",
        ("args_refused", Stage.STARTING, V.FATAL, False, {}),
    ),
    "argparse's usage line is information at starting": (
        "usage: sglang serve [-h] [--model-path MODEL_PATH]",
        ("args_usage", Stage.STARTING, V.INFO, False, {}),
    ),
    "the shell's Killed is fatal": ("Killed", ("killed", None, V.FATAL, False, {})),
    "an empty line is blank": ("", ("blank", None, V.INFO, False, {})),
    "other text is text": ("some text", ("text", None, V.INFO, False, {})),
    "only a weights line turns its memory into weights": (
        f"{TP0} Init torch distributed ends. elapsed=1.12 s, mem usage=0.42 GB",
        ("dist_end", Stage.DISTRIBUTED, V.INFO, False, {"elapsed_s": 1.12, "mem_usage_gb": 0.42}),
    ),
    "a number under a name the console does not know is left out": (
        f"{TP0} Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, "
        "#running-req: 0, #queue-req: 0, #pending-token: 0",
        (
            "prefill_batch",
            Stage.SERVING,
            V.INFO,
            False,
            {
                "new_seq": 1,
                "new_token": 7,
                "cached_token": 0,
                "token_usage": 0,
                "running_req": 0,
                "queue_req": 0,
            },
        ),
    ),
}


@pytest.mark.parametrize(("raw", "expected"), list(WHOLE.values()), ids=list(WHOLE))
def test_a_line_is_classified_whole(
    raw: str, expected: tuple[str, Stage | None, Severity, bool, dict[str, float]]
) -> None:
    log = parse(raw)
    event = classify(log, 7)
    assert (event.line, event.log) == (7, log)
    assert (event.kind, event.stage, event.severity, event.opens_block, event.numbers) == expected


def test_an_event_without_a_line_number_is_line_zero() -> None:
    assert classify(parse("some text")).line == 0


def test_the_path_of_an_access_line() -> None:
    assert access_path('127.0.0.1:41234 - "GET /health HTTP/1.1" 200 OK') == "/health"
    assert access_path("no request here") is None


FRAME = '  File "{path}", line 1, in {func}'


@pytest.mark.parametrize(
    ("path", "func", "stage"),
    [
        ("/x/sglang/srt/mem_cache/memory_pool.py", "__init__", Stage.MEMORY),
        ("/x/memory_pool_tools/sglang/other.py", "helper", None),  # the file, not a folder, names it
        ("/x/sglang/srt/model_executor/cuda_graph_runner.py", "__init__", Stage.GRAPHS),
        ("/x/sglang/srt/managers/io_struct.py", "__init__", None),  # a constructor elsewhere proves nothing
        ("/x/sglang/srt/managers/scheduler.py", "process_batch_result_decode", Stage.SERVING),
    ],
)
def test_a_traceback_frame_proves_a_stage(path: str, func: str, stage: Stage | None) -> None:
    assert frame_stage(FRAME.format(path=path, func=func)) is stage
