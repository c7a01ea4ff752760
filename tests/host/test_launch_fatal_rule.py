"""A launch that crashed with a bare AssertionError says which flag rule foretold it, and a CUDA-graph OOM
says its known fixes: the attempt (the launch's output, the journal) carries what the console knows."""

from __future__ import annotations

from pathlib import Path

from gdnconsole.host import launcher
from gdnconsole.host.journal import Attempt
from gdnconsole.host.session import HostSession
from gdnconsole.sglang.tracker import GRAPH_OOM_HINT
from tests.ui.dashboard_helpers import feed_log, hello, local_host

SITE = "/usr/local/lib/python3.12/dist-packages/sglang"
ASSERTION = f"""\
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "<frozen runpy>", line 88, in _run_code
  File "{SITE}/launch_server.py", line 32, in <module>
    server_args = prepare_server_args(sys.argv[1:])
                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "{SITE}/srt/server_args.py", line 5682, in prepare_server_args
    return ServerArgs.from_cli_args(raw_args)
  File "{SITE}/srt/server_args.py", line 5190, in from_cli_args
    return cls(**{{attr: getattr(args, attr) for attr in attrs}})
  File "<string>", line 312, in __init__
  File "{SITE}/srt/server_args.py", line 672, in __post_init__
    self._handle_speculative_decoding()
  File "{SITE}/srt/server_args.py", line 3519, in _handle_speculative_decoding
    assert (
AssertionError"""
GRAPH_OOM = """\
[2026-11-30 09:00:42 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=1.10 GB
[2026-11-30 09:00:44 TP0] Scheduler hit an exception: Traceback (most recent call last):
Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB."""
SERVER = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B"]
TOPK_ONLY = [*SERVER, "--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "4"]


def observed(tmp_path: Path, log: str, argv: list[str]) -> Attempt:
    session = HostSession(local_host("ct129"), mirror=tmp_path / "mirror.log")
    session.handle(hello("ct129"))  # SGLang 0.5.11
    feed_log(session, log.split("\n"))
    attempt = Attempt(number=1, time=0.0, host="ct129", profile="p", argv=argv, env={}, pid=4242)
    return launcher.observe(session, attempt)


def test_a_bare_assertion_names_the_rule_the_flags_break(tmp_path: Path) -> None:
    fatal = observed(tmp_path, ASSERTION, TOPK_ONLY).fatal
    assert fatal is not None and fatal.line == 16
    assert fatal.summary.startswith("AssertionError — the flags break rule spec.topk_without_steps: ")
    assert "Fix: set --speculative-num-steps" in fatal.summary


def test_a_bare_assertion_the_flags_do_not_explain_stays_bare(tmp_path: Path) -> None:
    fatal = observed(tmp_path, ASSERTION, [*SERVER, "--speculative-algorithm", "NEXTN"]).fatal
    assert fatal is not None and fatal.summary == "AssertionError"


def test_a_cuda_graph_oom_carries_its_known_fixes(tmp_path: Path) -> None:
    fatal = observed(tmp_path, GRAPH_OOM, SERVER).fatal
    assert fatal is not None
    assert (
        fatal.summary
        == f"Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB.; {GRAPH_OOM_HINT}"
    )
