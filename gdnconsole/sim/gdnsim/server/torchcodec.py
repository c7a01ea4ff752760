"""The torchcodec warning of a host without FFmpeg (FACTS §3; shape of logs/09-*.log). Not fatal."""

from __future__ import annotations

FFMPEG_VERSIONS = (8, 7, 6, 5, 4)
LIBAVUTIL = {8: 60, 7: 59, 6: 58, 5: 57, 4: 56}
NO_SUCH_FILE = "cannot open shared object file: No such file or directory"


def warning_text(site_packages: str) -> str:
    """The message after ``Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: ``."""
    torchcodec = f"{site_packages}/torchcodec"
    head = (
        "Could not load libtorchcodec. Likely causes:\n"
        "          1. FFmpeg is not properly installed in your environment. We support\n"
        "             versions 4, 5, 6, 7, and 8, and we attempt to load libtorchcodec\n"
        "             for each of those versions. Errors for versions not installed on\n"
        "             your system are expected; only the error for your installed FFmpeg\n"
        "             version is relevant. On Windows, ensure you've installed the\n"
        '             "full-shared" version which ships DLLs.\n'
        "          2. The PyTorch version (2.9.1+cu128) is not compatible with\n"
        "             this version of TorchCodec. Refer to the version compatibility\n"
        "             table:\n"
        "             https://github.com/pytorch/torchcodec?tab=readme-ov-file#installing-torchcodec.\n"
        "          3. Another runtime dependency; see exceptions below.\n"
        "        The following exceptions were raised as we tried to load libtorchcodec:\n"
    )
    attempts = "\n".join(
        f"        FFmpeg version {v}: libavutil.so.{LIBAVUTIL[v]}: {NO_SUCH_FILE}" for v in FFMPEG_VERSIONS
    )
    return head + "[start of libtorchcodec loading traceback]\n" + attempts + "\n" + _last_attempt(torchcodec)


def _last_attempt(torchcodec: str) -> str:
    """The traceback of the last version tried (FFmpeg 4), as in logs/09-*.log."""
    library = f"{torchcodec}/libtorchcodec_core{FFMPEG_VERSIONS[-1]}.so"
    return (
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        f'  File "{torchcodec}/_internally_replaced_utils.py", line 93, in load_torchcodec_shared_libraries\n'
        "    torch.ops.load_library(core_library_path)\n"
        f'  File "{torchcodec}/../torch/_ops.py", line 1505, in load_library\n'
        '    raise OSError(f"Could not load this library: {path}") from e\n'
        f"OSError: Could not load this library: {library}\n"
        "[end of libtorchcodec loading traceback]."
    )
