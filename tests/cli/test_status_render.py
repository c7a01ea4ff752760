"""`gdnconsole status` prints what a host said: an escape sequence in it is shown, never obeyed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from gdnconsole.cli.common import output_console
from gdnconsole.cli.status import render, status_json
from gdnconsole.host.link import LinkState
from tests.ui.dashboard_helpers import gpu, refused_session, serving_session

HOSTILE = "\x1b]0;pwned\x07\x1b[2Jcleared"


def test_escapes_from_the_host_are_shown_not_sent(tmp_path: Path) -> None:
    session = refused_session(tmp_path)
    session._set_link(LinkState.DOWN, f"the connection was lost: {HOSTILE}")
    out = io.StringIO()
    Console(file=out, force_terminal=True, width=200, highlight=False).print(render(session))
    printed = out.getvalue()
    assert "\x1b]0;" not in printed and "\x1b[2J" not in printed and "\x07" not in printed
    assert "^[]0;pwned^G^[[2Jcleared" in printed


def test_piped_output_is_not_wrapped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Piped to grep or a file, Rich's 80 columns split paths across lines: no width limit there."""
    session = refused_session(tmp_path)
    path = "/very/long/path/" + "to/" * 30 + "sglang_serve.log"
    session._set_link(LinkState.DOWN, f"cannot read {path}: Permission denied")
    output_console().print(render(session))
    printed = capsys.readouterr().out
    assert f"cannot read {path}: Permission denied\n" in printed


def _plain(session: object) -> str:
    out = io.StringIO()
    Console(file=out, width=400, highlight=False, color_system=None).print(render(session))  # type: ignore[arg-type]
    return out.getvalue()


def test_status_shows_the_kernels_sglang_chose(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    printed = _plain(session)
    assert (
        "kernels: attention backend flashinfer   linear attention kernels decode=triton, prefill=triton"
        in printed
    )
    assert status_json(session)["server"]["kernels"] == {
        "attention": "flashinfer",
        "linear_attention": "decode=triton, prefill=triton",
    }


def test_status_splits_each_gpus_memory_as_the_gpu_panel_does(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    data = status_json(session)
    split = data["gpus"][0]["memory"]
    # TP0's log: weights 25.64 GB, KV 1.29 + 1.29 GB, mamba 0.27 + 8.72 + 4.36 + 0.14 GB, graphs 0.44 GB
    assert split == {
        "weights": 26255,
        "kv": 2642,
        "mamba": 13814,
        "graphs": 451,
        "other": 45120 - 26255 - 2642 - 13814 - 451,
        "free": 49140 - 45120,
    }
    row = next(line for line in _plain(session).splitlines() if line.startswith("0 "))
    assert "weights 25.6 · KV 2.6 · mamba 13.5 · graphs 0.4 · other 1.9 · free 3.9 GiB" in row


def test_status_memory_counts_what_other_processes_hold(tmp_path: Path) -> None:
    session = serving_session(tmp_path)
    session.handle({"type": "gpus", "gpus": [gpu(0, 47120, 87, [(4250, 44600, "sglang::scheduler_TP0"), (777, 2000, "python3")])]})  # fmt: skip
    split = status_json(session)["gpus"][0]["memory"]
    assert split["others"] == 2000 and split["free"] == 49140 - 47120
    assert sum(v for k, v in split.items() if k not in ("others", "free")) == 47120 - 2000
